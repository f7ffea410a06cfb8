#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A rule the kernel would run and nftdp cannot (tproxy: no host socket
# table) is refused with EOPNOTSUPP, and says why: nft 1.0.6 prints the
# error with its caret under the statement (as under an expression the
# kernel lacks); the reason goes in the extended ack's NLMSGERR_ATTR_MSG
# for a requester with NETLINK_EXT_ACK (nft ignores it: extack_msg.py
# reads it), and once per commit to the daemon's stderr, where --ruleset
# errors go. Nothing of the batch is committed. synproxy (statement,
# object, -j SYNPROXY), refused until its server side was built, loads.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/nftdp-why-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-why-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-why-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { timeout 60 "$BUILD/nftdp-nft" "$@"; }
nft add table ip t || fail "add table"
nft add chain ip t c '{ type filter hook prerouting priority 0; }' || fail "add chain"

# one command: the caret under `tproxy to 10.0.0.1:80`
nft add rule ip t c meta l4proto tcp tproxy to 10.0.0.1:80 counter 2> "$tmp/one.err" &&
	fail "the tproxy rule loaded"
cat > "$tmp/one.want" << 'X'
Error: Could not process rule: Operation not supported
add rule ip t c meta l4proto tcp tproxy to 10.0.0.1:80 counter
                                 ^^^^^^^^^^^^^^^^^^^^^
X
diff -u "$tmp/one.want" "$tmp/one.err" || fail "nft's error for one command"

# a file: the failing line and the statement, nothing of the batch kept
printf 'add rule ip t c counter\nadd rule ip t c meta l4proto tcp counter tproxy to 10.0.0.1:80\n' \
	> "$tmp/f.nft"
nft -f "$tmp/f.nft" 2> "$tmp/file.err" && fail "the file loaded"
cat > "$tmp/file.want" << X
$tmp/f.nft:2:42-62: Error: Could not process rule: Operation not supported
add rule ip t c meta l4proto tcp counter tproxy to 10.0.0.1:80
                                         ^^^^^^^^^^^^^^^^^^^^^
X
diff -u "$tmp/file.want" "$tmp/file.err" || fail "nft's error for a file"
[ -z "$(nft list chain ip t c | grep counter)" ] || fail "part of the failed batch was kept"

# the daemon's log: the reason, once per refused commit
n=$(grep -c "nftdp: commit refused: tproxy: not supported by nftdp (it needs the host's socket table" \
	"$tmp/daemon.log")
[ "$n" -eq 2 ] || fail "want the reason logged twice (two commits), got $n"

# the extended ack: the message and the offset of the expression
shim=$(sed -n 's/^preload="\(.*\)"$/\1/p' "$BUILD/nftdp-nft")
[ -r "$shim" ] || fail "no shim at '$shim'"
out=$(LD_PRELOAD=$shim timeout 20 python3 "$HERE/extack_msg.py" tproxy) || fail "extack_msg.py: $out"
want="errno 95 seq 1 msg \"tproxy: not supported by nftdp (it needs the host's socket table; redirect with --host-ports reaches the same listener)\" offs 40"
[ "$out" = "$want" ] || fail "extended ack: $out"
out=$(LD_PRELOAD=$shim timeout 20 python3 "$HERE/extack_msg.py" counter) || fail "extack_msg.py: $out"
[ "$out" = accepted ] || fail "a counter rule: $out"

# synproxy (statement, object, iptables-nft's -j SYNPROXY) is no longer
# refused: its server side is built (issue 14); all three load, as on the
# kernel, and go again
nft add chain ip t f '{ type filter hook forward priority 0; }' || fail "add chain f"
nft add rule ip t f tcp dport 80 synproxy mss 1460 2> "$tmp/sp.err" ||
	fail "synproxy refused: $(cat "$tmp/sp.err")"
nft add synproxy ip t sp mss 1460 wscale 7 2> "$tmp/spo.err" ||
	fail "the synproxy object refused: $(cat "$tmp/spo.err")"
nft flush chain ip t f && nft delete chain ip t f && nft delete synproxy ip t sp ||
	fail "synproxy not deleted"
if [ -x /usr/sbin/iptables-nft-restore ]; then
	printf '*filter\n-A FORWARD -p tcp -j SYNPROXY --mss 1460\nCOMMIT\n' > "$tmp/sp.v4"
	NFTDP_NFT=/usr/sbin/iptables-nft-restore timeout 30 "$BUILD/nftdp-nft" "$tmp/sp.v4" \
		2> "$tmp/spx.err" || fail "-j SYNPROXY refused: $(cat "$tmp/spx.err")"
	nft delete table ip filter || fail "iptables' table not deleted"
fi
grep -q "commit refused: .*synproxy\|commit refused: target SYNPROXY" "$tmp/daemon.log" &&
	fail "synproxy refused in the log"
[ -z "$(nft list ruleset | grep -i synproxy)" ] || fail "synproxy left behind"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
