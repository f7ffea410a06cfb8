#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# No frame can crash the packet path (issue 11): COUNT random and mutated
# frames (random_frames.py, fixed seed) replayed offline on two ports
# through BUILD_DIR/nftdp in --router mode, under tests/fuzz/fuzz_pkt.nft
# (every expression the VM runs, conntrack, NAT, defrag, reject, log).
# Meant for the ASan+UBSan build (tools/test.sh runs it on build-asan): the
# daemon must exit 0, receive every frame, and print no sanitizer report.
#
# usage: 0004_random_frames_0.sh BUILD_DIR [COUNT] [SEED]   (exit 77 = skipped)
set -euo pipefail

build=$(cd "${1:?usage: $0 BUILD_DIR [COUNT] [SEED]}" && pwd)
count=${2:-100000}
seed=${3:-11}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
[ -x "$build/nftdp" ] && [ -x "$build/nftdp-nft" ] || { echo "SKIP: $build/nftdp missing"; exit 77; }
[ -x /usr/sbin/nft ] || { echo "SKIP: no /usr/sbin/nft"; exit 77; }
tmp=$(mktemp -d /tmp/nftdp-random-frames.XXXXXX)
pfx="nftdp-randframes-$$"
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"; rm -rf /var/run/dpdk/"$pfx"' EXIT

/usr/bin/python3 "$here/random_frames.py" "$tmp/in0.pcap" "$tmp/in1.pcap" "$count" "$seed"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
rc=0
timeout 150 "$build/nftdp" -l 0 --no-huge -m 1024 --no-pci --log-level=error \
	--file-prefix "$pfx" \
	--vdev="net_pcap0,rx_pcap=$tmp/in0.pcap,tx_pcap=$tmp/out0.pcap" \
	--vdev="net_pcap1,rx_pcap=$tmp/in1.pcap,tx_pcap=$tmp/out1.pcap" -- \
	--socket "$tmp/nl.sock" --router --wire 0:1 --ifaddr 0=10.1.255.254/16 \
	--ifaddr 1=10.2.255.254/16 --ruleset "$root/tests/fuzz/fuzz_pkt.nft" \
	--exit-on-idle 500 --stats-json "$tmp/stats.json" \
	> "$tmp/out.log" 2> "$tmp/err.log" || rc=$?
if [ $rc -ne 0 ] || grep -q "runtime error\|ERROR: AddressSanitizer\|SUMMARY: " "$tmp/err.log"; then
	echo "FAIL: nftdp exit $rc"
	grep -B2 -A40 "runtime error\|ERROR: AddressSanitizer" "$tmp/err.log" | head -80 || tail -20 "$tmp/err.log"
	exit 1
fi
got=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["packets"]["rx"])' "$tmp/stats.json")
if [ "$got" != "$count" ]; then
	echo "FAIL: received $got of $count frames"
	exit 1
fi
echo "ok   $count random and mutated frames (seed $seed): no crash, no sanitizer report"
