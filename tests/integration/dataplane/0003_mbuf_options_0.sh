#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --mbufs and --mbuf-size: values the daemon cannot work with are refused at
# start with a message that says why; a small room and a pool that holds a
# whole capture replay it from memory (net_pcap infinite_rx), every packet
# forwarded.
#
# usage: 0003_mbuf_options_0.sh BUILD_DIR     (root; exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (EAL runtime dir)"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done
tmp=$(mktemp -d /tmp/nftdp-mbuf-test.XXXXXX)
pfx="nftdp-mbuftest-$$"
trap 'rm -rf "$tmp" /var/run/dpdk/"$pfx"-*' EXIT

n=20000
timeout 60 "$build/nftdp-gen" --flows 5000 --proto udp --size 64 --count "$n" \
	--pcap-out "$tmp/in.pcap" > /dev/null
fail=0
run() { # ARGS...: the daemon on the capture; its output in $tmp/nftdp.log
	timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
		--file-prefix "$pfx-$((++k))" --vdev="net_pcap0,rx_pcap=$tmp/in.pcap" -- \
		--socket "$tmp/nl.sock" --workers 1 --exit-on-idle 300 "$@" \
		> "$tmp/nftdp.log" 2>&1
}
k=0
refused() { # WANT ARGS...: start must fail, and the log say WANT
	local want=$1
	shift
	if run "$@"; then
		echo "FAIL $*: started"
		fail=1
	elif ! grep -q -- "$want" "$tmp/nftdp.log"; then
		echo "FAIL $*: no '$want' in: $(head -3 "$tmp/nftdp.log")"
		fail=1
	else
		echo "ok   $*: refused ($want)"
	fi
}
refused "--mbuf-size '100'" --mbuf-size 100
refused "--mbuf-size '70000'" --mbuf-size 70000
refused "cannot hold a frame of --mtu 1500" --mtu 1500 --mbuf-size 256
refused "bad value '0'" --mbufs 0
refused "is below the" --mbufs 100

# a pool for the whole capture plus the working set, 256-byte rooms
timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
	--file-prefix "$pfx-mem" --vdev="net_pcap0,rx_pcap=$tmp/in.pcap,infinite_rx=1" -- \
	--socket "$tmp/nl.sock" --workers 1 --mbufs $((n + 20000)) --mbuf-size 256 \
	--stats-period 0.2 > "$tmp/mem.log" 2>&1 &
p=$!
got=0
for _ in $(seq 100); do
	sleep 0.1
	got=$(sed -n 's/^nftdp: port 0 .* rx *\([0-9]*\) .*/\1/p' "$tmp/mem.log" | tail -1)
	got=${got:-0}
	[ "$got" -gt $((3 * n)) ] && break
done
kill -INT "$p" 2>/dev/null || true
wait "$p" || true
if [ "$got" -gt $((3 * n)) ]; then
	echo "ok   --mbufs $((n + 20000)) --mbuf-size 256, infinite_rx: $got packets replayed"
else
	echo "FAIL --mbufs --mbuf-size with infinite_rx: $got packets, want > $((3 * n))"
	tail -5 "$tmp/mem.log"
	fail=1
fi
exit $fail
