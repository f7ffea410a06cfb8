#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --exit-on-idle must wait for the rx queues to be idle: a worker's last-busy
# stamp taken after the control thread read the clock once looked 2^64
# cycles old, and the daemon left a large capture after a fraction of it.
# Three replays of 600 000 packets through net_pcap: every packet must be
# received and sent.
#
# usage: 0002_exit_on_idle_0.sh BUILD_DIR     (root; exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (EAL runtime dir)"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done
tmp=$(mktemp -d /tmp/nftdp-idle-test.XXXXXX)
pfx="nftdp-idletest-$$"
trap 'rm -rf "$tmp" /var/run/dpdk/"$pfx"-*' EXIT

n=600000
timeout 60 "$build/nftdp-gen" --flows 10000 --proto udp --size 64 --count "$n" \
	--pcap-out "$tmp/in.pcap" > /dev/null
fail=0
for round in 1 2 3; do
	timeout 60 "$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
		--file-prefix "$pfx-$round" --vdev="net_pcap0,rx_pcap=$tmp/in.pcap" -- \
		--socket "$tmp/nl.sock" --workers 1 --exit-on-idle 300 \
		--stats-json "$tmp/stats.json" > "$tmp/nftdp.log" 2>&1
	got=$(/usr/bin/python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["packets"]; print(d["rx"], d["tx"])' "$tmp/stats.json")
	if [ "$got" = "$n $n" ]; then
		echo "ok   round $round: rx/tx $got"
	else
		echo "FAIL round $round: rx/tx $got, want $n $n"
		fail=1
	fi
done
exit $fail
