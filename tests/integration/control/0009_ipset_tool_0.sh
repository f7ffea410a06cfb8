#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The stock ipset tool on the kernel (a scratch network namespace this
# script creates and deletes) and on a private nftdp through the shim:
# every command of tests/data/ipset/session.txt (create, add/del/test with
# their errors, ranges, timeouts, counters, comments, nomatch, list:set,
# hash:ip,port,net, hash:net,iface, bitmap:ip,mac (with and without MACs),
# rename, swap, list, save, restore with a failing line, flush, destroy)
# must print the same and exit the same on both (ipset_norm.py masks what
# is the kernel's own: initval, Size in memory, running timeouts, and
# sorts the members of hash sets, which the kernel lists in hash order).
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
command -v ipset > /dev/null || { echo "SKIP: no ipset"; exit 77; }
HERE=$(cd "$(dirname "$0")" && pwd)
DATA=$(cd "$HERE/../../data/ipset" && pwd)
tmp=$(mktemp -d /tmp/nftdp-ipset-XXXXXX)
ns=nftdp-ipset-$$
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
	ip netns del "$ns" 2> /dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-ipset-$$"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	tail -5 "$tmp/daemon.log"
	exit 1
}
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-ipset-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
shim=$(sed -n 's/^preload="\(.*\)"$/\1/p' "$BUILD/nftdp-nft")
[ -r "${shim##*:}" ] || fail "no shim at '$shim'" # ASan: libasan.so:shim
ip netns add "$ns" || fail "cannot create netns"
kern() { timeout 30 ip netns exec "$ns" "$@"; }
dp() { NFTDP_SOCKET=$tmp/nl.sock LD_PRELOAD=$shim timeout 30 "$@"; }
run() { # side: runs every line, prints "$ line", output, "rc N"
	local side=$1 line
	while IFS= read -r line; do
		case $line in '#'* | '') continue ;; esac
		echo "\$ $line"
		if [ "${line:0:2}" = "< " ]; then
			$side ipset restore < "$DATA/${line:2}" 2>&1
		else
			eval "$side ipset $line" 2>&1
		fi
		echo "rc $?"
	done < "$DATA/session.txt"
}
run kern > "$tmp/kernel.out"
run dp > "$tmp/nftdp.out"
# a set listed over many messages (the kernel's dump continues a set in
# the next skb; nftdp's in the next datagram): 3000 members with
# comments, saved and compared sorted (hashsize masked: the kernel grows it)
python3 -c '
print("create big hash:ip,port,ip counters comment timeout 600 maxelem 100000")
for i in range(3000):
    print("add big 10.%d.%d.1,tcp:%d,192.168.0.%d comment \"c%d\"" % (i // 256, i % 256, i % 1000 + 1, i % 250, i))
' > "$tmp/big.txt"
big() {
	$1 ipset restore < "$tmp/big.txt" || return 1
	$1 ipset save big | sed 's/initval 0x[0-9a-f]*//; s/hashsize [0-9]*//; s/timeout [0-9]*/timeout T/' |
		sort
	$1 ipset destroy big
}
big kern > "$tmp/big.kernel" || fail "restore of 3000 on the kernel"
big dp > "$tmp/big.nftdp" || fail "restore of 3000 on nftdp"
[ "$(wc -l < "$tmp/big.nftdp")" -eq 3001 ] || fail "nftdp saved $(wc -l < "$tmp/big.nftdp") lines"
cmp -s "$tmp/big.kernel" "$tmp/big.nftdp" || fail "save of 3000 members differs"
# iptables' set match asks for set indexes with getsockopt(SO_IP_SET):
# the shim answers from nftdp's sets. A missing set is iptables' own error
# on both sides; an existing one loads, and iptables-nft-save and
# iptables -L print its name back (GET_BYINDEX) as on the kernel.
ipt() { $1 iptables-nft -A FORWARD -m set --match-set "$2" src,dst -j DROP 2>&1; echo "rc $?"; }
kern ipset create blk hash:ip,port && dp ipset create blk hash:ip,port || fail "create blk"
[ "$(ipt kern nope)" = "$(ipt dp nope)" ] || fail "iptables-nft -m set of a missing set: $(ipt dp nope)"
[ "$(ipt kern blk)" = "rc 0" ] || fail "the kernel refused -m set blk"
[ "$(ipt dp blk)" = "rc 0" ] || fail "nftdp refused -m set blk: $(ipt dp blk)"
save() { $1 iptables-nft-save -t filter | grep -v '^#'; $1 iptables-nft -L FORWARD -n; }
[ "$(save kern)" = "$(save dp)" ] || fail "iptables-nft-save differs: $(save dp)"
save dp | grep -q -- "--match-set blk src,dst" || fail "no set name in the save: $(save dp)"
# the rule references the set: References 1, destroy IPSET_ERR_BUSY,
# rename IPSET_ERR_REFERENCED; after the flush both work
refs() {
	$1 ipset list -t blk | sed 's/initval 0x[0-9a-f]*//; /^Size in memory/d'
	$1 ipset destroy blk 2>&1; echo "rc $?"
	$1 ipset rename blk blk2 2>&1; echo "rc $?"
	$1 iptables-nft -F FORWARD
	$1 ipset rename blk blk2 2>&1; echo "rc $?"
	$1 ipset destroy blk2 2>&1; echo "rc $?"
}
refs kern > "$tmp/refs.kernel"
refs dp > "$tmp/refs.nftdp"
grep -q "References: 1" "$tmp/refs.kernel" || fail "the kernel lists no reference: $(cat "$tmp/refs.kernel")"
diff -u "$tmp/refs.kernel" "$tmp/refs.nftdp" || fail "references from rules differ"
# -j SET (xt_SET rev 3): the same loads and errors on both sides (a
# missing set, --map-set outside mangle, --map-prio at PREROUTING), the
# same save and -L, References counting the add, del and map sets,
# destroy IPSET_ERR_BUSY until the rules go
settg() {
	$1 ipset create tgt hash:ip timeout 60
	$1 ipset create mk hash:ip skbinfo
	for r in "FORWARD -j SET --add-set nope src" \
		"FORWARD -j SET --add-set tgt src --del-set tgt dst --exist --timeout 10" \
		"FORWARD -j SET --map-set mk src --map-mark" \
		"-t mangle PREROUTING -j SET --map-set mk src --map-prio" \
		"-t mangle FORWARD -j SET --add-set tgt dst --map-set mk src --map-mark --map-prio --map-queue"; do
		case $r in -t*) t="-t mangle"; r=${r#-t mangle } ;; *) t="" ;; esac
		# shellcheck disable=SC2086 # word splitting intended
		$1 iptables-nft $t -A $r 2>&1 | sed 's/^iptables[^:]*: //'
		echo "rc ${PIPESTATUS[0]}"
	done
	$1 iptables-nft-save | grep -v '^#'
	$1 iptables-nft -t mangle -L FORWARD -n
	$1 ipset list -t tgt | sed 's/initval 0x[0-9a-f]*//; /^Size in memory/d'
	$1 ipset destroy tgt 2>&1; echo "rc $?"
	$1 iptables-nft -F FORWARD
	$1 iptables-nft -t mangle -F
	$1 ipset destroy tgt 2>&1; echo "rc $?"
	$1 ipset destroy mk 2>&1; echo "rc $?"
}
settg kern > "$tmp/settg.kernel"
settg dp > "$tmp/settg.nftdp"
grep -q "References: 3" "$tmp/settg.kernel" || fail "the kernel lists other references: $(cat "$tmp/settg.kernel")"
diff -u "$tmp/settg.kernel" "$tmp/settg.nftdp" || fail "-j SET differs"
kill -0 "$pid" || fail "daemon died"
python3 "$HERE/ipset_norm.py" "$tmp/kernel.out" > "$tmp/kernel.norm"
python3 "$HERE/ipset_norm.py" "$tmp/nftdp.out" > "$tmp/nftdp.norm"
n=$(grep -c '^\$ ' "$tmp/kernel.norm")
if ! diff -u "$tmp/kernel.norm" "$tmp/nftdp.norm"; then
	fail "ipset differs from the kernel (- kernel, + nftdp)"
fi
echo "$n commands, a 3000-member save and -j SET agree; 1 passed, 0 failed"
