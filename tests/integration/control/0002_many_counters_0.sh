#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# No fixed cap below the kernel's: a 100 000-rule chain with counters loads
# through the daemon (the arena grows with the ruleset), and after a batch
# that fails at compile (it reserved counter slots first) a one-counter rule
# still commits (the failed batch gave back what it reserved).
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
N=${N:-100000}
tmp=$(mktemp -d /tmp/nftdp-ctr-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-ctr-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-ctr-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { timeout 300 "$BUILD/nftdp-nft" "$@"; }
{
	echo "table ip t {"
	echo "  chain c {"
	echo "    type filter hook prerouting priority 0; policy accept;"
	for ((i = 0; i < N; i++)); do echo "    ip saddr 10.$((i >> 16 & 255)).$((i >> 8 & 255)).$((i & 255)) counter"; done
	echo "  }"
	echo "}"
} > "$tmp/big.nft"
t0=$(date +%s)
nft -f "$tmp/big.nft" || fail "$N rules with counters did not load"
echo "$N rules with counters loaded in $(( $(date +%s) - t0 )) s"
n=$(nft list chain ip t c | grep -c 'counter packets 0 bytes 0')
[ "$n" -eq "$N" ] || fail "listed $n counters, want $N"
# a batch that fails at compile after 2000 new counters
{
	for ((i = 0; i < 2000; i++)); do echo "add rule ip t c tcp dport $i counter"; done
	echo "add rule ip t c meta l4proto tcp tproxy to 10.0.0.1:80 counter"
} > "$tmp/fail.nft"
nft -f "$tmp/fail.nft" 2> "$tmp/fail.err" && fail "the failing batch loaded"
grep -q "Operation not supported" "$tmp/fail.err" || fail "want EOPNOTSUPP: $(head -3 "$tmp/fail.err")"
nft add rule ip t c counter || fail "a one-counter rule after the failed batch"
n=$(nft list chain ip t c | grep -c 'counter packets')
[ "$n" -eq $((N + 1)) ] || fail "listed $n counters, want $((N + 1))"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
