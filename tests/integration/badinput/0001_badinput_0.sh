#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Malformed netlink: the same raw messages to the kernel (scratch netns) and
# to a private nftdp; the answers and the ruleset after each must match, and
# after a mutation fuzz the daemon must still answer.
set -u
BUILD=${1:?build dir}
SHIM=${SHIM:?SHIM must be the LD_PRELOAD list for libnftdp_shim.so}
[ "$(id -u)" -eq 0 ] || exit 77
here=$(cd "$(dirname "$0")" && pwd)
ns=nftdp-bad-$$
tmp=$(mktemp -d /tmp/nftdp-bad-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-bad-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
ip netns add "$ns"
BADINPUT_ROOTNS=$(stat -L -c %i /proc/self/ns/net) BADINPUT_EXPECT=kernel timeout 120 ip netns exec "$ns" python3 "$here/badinput.py" > "$tmp/kernel.txt" || { echo "kernel side failed"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-bad-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" --control-only > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
BADINPUT_EXPECT=nftdp NFTDP_SOCKET=$tmp/nl.sock LD_PRELOAD=$SHIM ASAN_OPTIONS=detect_leaks=0 timeout 300 \
	python3 "$here/badinput.py" --fuzz 3000 > "$tmp/nftdp.txt" || { echo "nftdp side failed"; cat "$tmp/daemon.log"; exit 1; }
fail=0
grep -v '^fuzz:' "$tmp/nftdp.txt" > "$tmp/nftdp-cases.txt"
if ! diff -u "$tmp/kernel.txt" "$tmp/nftdp-cases.txt"; then
	fail=1
fi
kill -0 "$pid" 2>/dev/null || { echo "daemon died"; fail=1; }
NFTDP_SOCKET=$tmp/nl.sock timeout 60 "$BUILD/nftdp-nft" list tables >"$tmp/list.txt" 2>&1 || { echo "daemon does not answer (exit $?)"; tail -3 "$tmp/list.txt"; tail "$tmp/daemon.log"; fail=1; }
cases=$(wc -l < "$tmp/kernel.txt")
tail -1 "$tmp/nftdp.txt"
if [ $fail -eq 0 ]; then echo "$cases passed, 0 failed"; else echo "0 passed, 1 failed"; fi
exit $fail
