#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Memory per client is bounded like netlink: an `nft monitor` stopped
# (SIGSTOP) while large batches commit holds at most its receive buffer of
# queued notifications (the answer socket's unread bytes, as ss -xm reports
# them); after SIGCONT it prints "We lost some netlink events!" (ENOBUFS) and
# goes on; the commits and other clients are unaffected.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
command -v ss >/dev/null || exit 77
N=${N:-20000}     # elements per commit
# enough commits to pass the monitor's receive buffer even coalesced into datagrams
# as nft_commit_notify does (~2.9 MB a commit; nft monitor holds 32 MiB)
COMMITS=${COMMITS:-16}
tmp=$(mktemp -d /tmp/nftdp-mon-XXXXXX)
pid= mon=
cleanup() {
	[ -n "$mon" ] && kill -CONT "$mon" 2>/dev/null && kill "$mon" 2>/dev/null && wait "$mon" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-mon-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-mon-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" --control-only > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { timeout 120 "$BUILD/nftdp-nft" "$@"; }
# the most unread bytes of any of the daemon's unix sockets (skmem t: wmem)
queued() {
	ss -xmpn 2>/dev/null | grep "pid=$pid," | grep -o ',t[0-9]*,' | tr -dc '0-9\n' |
		sort -n | tail -1
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
nft add table ip t || fail "add table"
nft add set ip t s '{ type ipv4_addr; }' || fail "add set"
"$BUILD/nftdp-nft" monitor > "$tmp/mon.out" 2> "$tmp/mon.err" &
mon=$!
sleep 1
nft add element ip t s '{ 1.1.1.1 }' || fail "first element"
for _ in $(seq 50); do grep -q 1.1.1.1 "$tmp/mon.out" && break; sleep 0.1; done
grep -q 1.1.1.1 "$tmp/mon.out" || fail "the monitor saw nothing"
kill -STOP "$mon"
rss0=$(rss)
for ((c = 0; c < COMMITS; c++)); do
	{
		printf 'add element ip t s { '
		for ((i = 0; i < N; i++)); do printf '10.%d.%d.%d, ' $c $((i >> 8 & 255)) $((i & 255)); done
		echo '10.255.255.255 }'
	} > "$tmp/e.nft"
	t0=$(date +%s%N)
	nft -f "$tmp/e.nft" || fail "commit $c"
	echo "commit $c: $(( ($(date +%s%N) - t0) / 1000000 )) ms, queued $(queued) bytes, daemon RSS $(rss) kB"
	nft flush set ip t s || fail "flush $c"
done
q=$(queued)
rss1=$(rss)
echo "stopped monitor: queued $q bytes at the end; daemon RSS $rss0 -> $rss1 kB"
# nft monitor asks for 16 MiB (SO_RCVBUFFORCE): at most 32 MiB plus one datagram
[ "$q" -le $((32 * 1024 * 1024 + 65536)) ] || fail "queued $q bytes past the receive buffer"
# (under ASan its quarantine keeps up to 256 MiB of freed memory)
bound=65536
ldd "$BUILD/nftdp" | grep -q libasan && bound=$((256 * 1024 + 65536))
[ $((rss1 - rss0)) -le $bound ] || fail "daemon grew by $((rss1 - rss0)) kB"
nft list set ip t s > /dev/null || fail "another client after the commits"
kill -CONT "$mon"
# it first reads and prints the 32 MiB it holds: up to a minute on a loaded machine
for _ in $(seq 600); do cat "$tmp/mon.err" "$tmp/mon.out" | grep -q "lost some netlink events" && break; sleep 0.1; done
cat "$tmp/mon.err" "$tmp/mon.out" | grep -q "lost some netlink events" || fail "no ENOBUFS after SIGCONT: $(tail -2 "$tmp/mon.err")"
# it goes on reading: a later change is printed
sleep 1
nft add element ip t s '{ 9.9.9.9 }' || fail "last element"
for _ in $(seq 300); do grep -q 9.9.9.9 "$tmp/mon.out" && break; sleep 0.1; done
grep -q 9.9.9.9 "$tmp/mon.out" || fail "the monitor stopped after ENOBUFS"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
