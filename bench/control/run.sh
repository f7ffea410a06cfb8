#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Control-plane benchmark: nft -f of 1k/10k/100k-rule rulesets and of a
# 1M-element interval set, their listings, and one rule / one element added
# to the loaded 100k ruleset -- against the kernel (scratch netns) and
# nftdp in the same run. Prints a markdown table (seconds, ratio nftdp/kernel).
# Usage: bench/control/run.sh [BUILD] [SIZES...]   (root; not a test)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${1:-build}
shift || true
SIZES=${*:-1000 10000 100000}
tmp=$(mktemp -d /tmp/nftdp-bench.XXXXXX)
ns=nftdp-bench-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-bench-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
K() { timeout 1200 ip netns exec "$ns" nft "$@"; }
D() { NFTDP_SOCKET=$tmp/nl.sock timeout 1200 "$BUILD/nftdp-nft" "$@"; }
t() { local s e; s=$(date +%s.%N); "$@" > /dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
row() { # name, kernel cmd..., -- nftdp cmd...
	local name=$1; shift
	local k d
	k=$(t K "$@"); d=$(t D "$@")
	printf '| %s | %.3f | %.3f | %.2f |\n' "$name" "$k" "$d" "$(echo "$d / $k" | bc -l)"
}
echo "| case | kernel s | nftdp s | nftdp/kernel |"
echo "|---|---|---|---|"
for n in $SIZES; do
	python3 bench/control/gen_ruleset.py rules "$n" > "$tmp/r$n.nft"
	K flush ruleset; D flush ruleset
	row "nft -f, $n rules" -f "$tmp/r$n.nft"
	row "list ruleset, $n rules" list ruleset
	row "add rule to $n rules" add rule inet bench c0 tcp dport 9 accept
	row "add element to $n rules" add element inet bench svc '{ 5 }'
done
K flush ruleset; D flush ruleset
python3 bench/control/gen_ruleset.py interval "${ELEMS:-1000000}" > "$tmp/i.nft"
row "nft -f, ${ELEMS:-1000000}-element interval set" -f "$tmp/i.nft"
row "list ruleset, ${ELEMS:-1000000}-element interval set" list ruleset
row "add element to ${ELEMS:-1000000}-element set" add element ip bench big '{ 12.0.0.1 }'
