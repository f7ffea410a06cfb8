#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# ebtables-nft and arptables-nft program nftdp (issue 17): each file of
# tests/data/ebtables (.eb: ebtables-nft-restore, .arp: arptables-nft-
# restore) is loaded into the kernel, in a scratch network namespace this
# script creates and deletes, and into a private nftdp through the shim;
# the tools' save output and listings must be the same on both (what the
# rules do is compared in tests/differential). refused.eb (dnat in the
# filter table) must fail on both with the kernel's EINVAL, the same
# message, and leave nothing behind on nftdp.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
command -v ebtables-nft-restore > /dev/null || { echo "SKIP: no ebtables-nft"; exit 77; }
command -v arptables-nft-restore > /dev/null || { echo "SKIP: no arptables-nft"; exit 77; }
DATA=$(cd "$(dirname "$0")/../../data/ebtables" && pwd)
tmp=$(mktemp -d /tmp/nftdp-ebt-XXXXXX)
ns=nftdp-ebt-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-ebt-$$"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	tail -5 "$tmp/daemon.log"
	exit 1
}
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-ebt-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
# the tool through the shim (build/nftdp-nft runs $NFTDP_NFT)
dp() { NFTDP_NFT="/usr/sbin/$1" timeout 30 "$BUILD/nftdp-nft" "${@:2}"; }
kern() { timeout 30 ip netns exec "$ns" "$@"; }
# the save tools' header and footer carry the time
strip() { grep -v '^# \(Generated\|Completed\)'; }
flush() {
	kern nft flush ruleset
	NFTDP_NFT=/usr/sbin/nft timeout 30 "$BUILD/nftdp-nft" flush ruleset
}
# same output of one tool on both; $1: what, then the tool and its options
same() {
	local what=$1
	shift
	kern "$@" > "$tmp/kernel.out" 2>&1
	dp "$@" > "$tmp/nftdp.out" 2>&1
	[ -s "$tmp/kernel.out" ] || fail "$what: $*: empty on the kernel"
	diff -u "$tmp/kernel.out" "$tmp/nftdp.out" || fail "$what: $* differs"
}
pass=0
ip netns add "$ns" || fail "cannot create netns"
for f in "$DATA"/*.eb "$DATA"/*.arp; do
	name=$(basename "$f")
	[ "$name" = refused.eb ] && continue
	tool=ebtables
	[ "${f##*.}" = arp ] && tool=arptables
	flush
	kern "$tool-nft-restore" < "$f" 2> "$tmp/kernel.err" || fail "$name: the kernel refused it"
	dp "$tool-nft-restore" < "$f" 2> "$tmp/err" || fail "$name: nftdp refused it: $(cat "$tmp/err")"
	diff -u "$tmp/kernel.err" "$tmp/err" || fail "$name: $tool-nft-restore's messages differ"
	kern "$tool-nft-save" | strip > "$tmp/kernel.save"
	dp "$tool-nft-save" | strip > "$tmp/nftdp.save"
	[ -s "$tmp/kernel.save" ] || fail "$name: empty save on the kernel"
	diff -u "$tmp/kernel.save" "$tmp/nftdp.save" || fail "$name: $tool-nft-save differs"
	if [ $tool = ebtables ]; then
		table=filter
		grep -q '^\*nat' "$f" && table=nat
		same "$name" ebtables-nft -t $table -L
		same "$name" ebtables-nft -t $table -L --Lc
		same "$name" ebtables-nft -t $table -L --Ln --Lc --Lmac2
		same "$name" ebtables-nft -t $table -L --Lx
	else
		same "$name" arptables-nft -L -n
		same "$name" arptables-nft -L -n -v -x --line-numbers
	fi
	echo "ok $name"
	pass=$((pass + 1))
done
# a target where its checkentry refuses it: the whole restore fails with
# the kernel's errno and message; nothing loads (every ebtables-nft
# extension runs on nftdp, so none is refused as unsupported)
flush
kern ebtables-nft-restore < "$DATA/refused.eb" 2> "$tmp/kernel.err" && fail "refused.eb loaded on the kernel"
dp ebtables-nft-restore < "$DATA/refused.eb" 2> "$tmp/err" && fail "refused.eb loaded"
grep -q "Invalid argument" "$tmp/err" || fail "refused.eb: want EINVAL: $(cat "$tmp/err")"
diff -u "$tmp/kernel.err" "$tmp/err" || fail "refused.eb: the messages differ"
[ -z "$(NFTDP_NFT=/usr/sbin/nft timeout 30 "$BUILD/nftdp-nft" list ruleset)" ] ||
	fail "refused.eb left rules behind"
grep -q "target dnat: not valid in this hook" "$tmp/daemon.log" ||
	fail "refused.eb: the log does not say why"
echo "ok refused.eb"
pass=$((pass + 1))
kill -0 "$pid" || fail "daemon died"
echo "$pass passed, 0 failed"
