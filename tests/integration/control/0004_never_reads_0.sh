#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Memory per client is bounded like netlink: a client that sends dump
# requests for 10 s and never reads holds at most its receive buffer in its
# socket (rmem_default) and one dump's rest in the daemon; other clients are
# served meanwhile; when it reads, the first dump arrives whole (its parts
# produced as it reads), the later requests were refused (EBUSY, lost with
# ENOBUFS), and the socket still answers.
set -u
BUILD=${1:?build dir}
SHIM=${SHIM:?SHIM must be the LD_PRELOAD list for libnftdp_shim.so}
[ "$(id -u)" -eq 0 ] || exit 77
command -v ss >/dev/null || exit 77
here=$(cd "$(dirname "$0")" && pwd)
N=${N:-20000}
SECS=${SECS:-10}
tmp=$(mktemp -d /tmp/nftdp-nr-XXXXXX)
pid= cl=
cleanup() {
	exec 3>&- 2>/dev/null
	[ -n "$cl" ] && kill "$cl" 2>/dev/null && wait "$cl" 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-nr-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-nr-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" --control-only > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { timeout 120 "$BUILD/nftdp-nft" "$@"; }
queued() {
	ss -xmpn 2>/dev/null | grep "pid=$pid," | grep -o ',t[0-9]*,' | tr -dc '0-9\n' |
		sort -n | tail -1
}
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$pid/status"; }
{
	echo "table ip t {"
	echo "  chain c {"
	for ((i = 0; i < N; i++)); do echo "    ip saddr 10.0.$((i >> 8 & 255)).$((i & 255)) counter accept"; done
	echo "  }"
	echo "}"
} > "$tmp/r.nft"
nft -f "$tmp/r.nft" || fail "load"
dump=$(nft list ruleset | wc -c)
rss0=$(rss)
mkfifo "$tmp/go"
LD_PRELOAD=$SHIM python3 "$here/never_reads.py" "$SECS" "$tmp/sent" < "$tmp/go" > "$tmp/client.out" 2>&1 &
cl=$!
exec 3> "$tmp/go"
sleep 2
# another client is served while the first does not read
t0=$(date +%s%N)
n=$(nft list chain ip t c | grep -c counter)
[ "$n" -eq "$N" ] || fail "another client listed $n rules"
echo "another client listed $N rules in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
for _ in $(seq $((SECS * 10 + 50))); do [ -s "$tmp/sent" ] && break; sleep 0.1; done
[ -s "$tmp/sent" ] || fail "the client did not finish sending: $(cat "$tmp/client.out")"
q=$(queued)
rss1=$(rss)
rmem=$(cat /proc/sys/net/core/rmem_default)
echo "never-reading client: $(cat "$tmp/sent") dump requests; queued $q bytes (rcvbuf $rmem);" \
	"daemon RSS $rss0 -> $rss1 kB (one listing is $dump bytes of text)"
[ "$q" -le $((rmem + 65536)) ] || fail "queued $q bytes past the receive buffer $rmem"
bound=262144 # one listing's rest, and ASan's quarantine in a sanitizer build
ldd "$BUILD/nftdp" | grep -q libasan && bound=$((bound + 256 * 1024))
[ $((rss1 - rss0)) -le $bound ] || fail "daemon grew by $((rss1 - rss0)) kB"
echo go >&3
exec 3>&-
wait "$cl" || fail "client: $(cat "$tmp/client.out")"
cl=
cat "$tmp/client.out"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
