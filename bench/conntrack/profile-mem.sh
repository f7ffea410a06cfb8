#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh's established-mem row under callgrind with its cache simulation:
# instructions, D1 and LL (last-level) misses a packet of the established
# passes only, which the noisy shared machine lets us compare where its
# Mpps do not (bench/results/conntrack.md).
#
# The same capture (nftdp-gen --mid-stream --data 1, FLOWS flows, both
# directions), ruleset and pool as run.sh's established-mem row; nftdp runs
# under valgrind with instrumentation off through the warm-up (the first
# pass picks every connection up, the second makes each direction's
# carried result), then on (callgrind_control -i on) for about PACKETS
# more, collecting inside nftdp_dp_pipeline_burst
# only. Packets: the calls of nftdp_dp_ct_in_one, once per packet of the
# pipeline's established pass, which every packet of this capture takes
# (the port's counts reach the log too late to delimit the window). The
# cache simulation is callgrind's, set to the host's caches (D1 32 KB
# 8-way, LL the 32 MB L3 16-way; valgrind's own guess here is wrong): a
# model, not the machine's counters (this VM has none).
#
# usage: profile-mem.sh [--build DIR] [--flows N] [--packets N] [--out FILE] [-- NFTDP-ARGS]
# (NFTDP-ARGS: more options for nftdp, e.g. --flow-cache N)
# Needs root (net_pcap and the EAL as run.sh runs them), valgrind; about
# 3 GB of memory with 1M flows; a few minutes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build flows=1000000 packets=200000 out=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--flows) flows=$2; shift ;;
	--packets) packets=$2; shift ;;
	--out) out=$2; shift ;;
	--) shift; break ;;
	*) echo "usage: $0 [--build DIR] [--flows N] [--packets N] [--out FILE] [-- NFTDP-ARGS]" >&2
	   exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done

tmp=$(mktemp -d /tmp/nftdp-prof-ct.XXXXXX)
pfx="nftdp-pct-$$"
vg=
cleanup() {
	if [ -n "$vg" ]; then
		kill "$vg" 2>/dev/null || true
		wait "$vg" 2>/dev/null || true
	fi
	rm -rf "$tmp" /var/run/dpdk/"$pfx"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

mid_total=$((2 * flows))
mbufs=$((mid_total + 65536))
mb=$((1024 + mbufs * 448 / 1048576 + 64))
nsrc=$((flows < 16777216 ? flows : 16777215))
srcs="10.0.0.1-10.$(((nsrc >> 16) & 255)).$(((nsrc >> 8) & 255)).$((nsrc & 255))"
"$build/nftdp-gen" --family 4 --size 64 --src "$srcs" --dst 172.16.0.1 --sport 40000 \
	--dport 80 --flows "$flows" --proto tcp --mid-stream --data 1 --count "$mid_total" \
	--pcap-out "$tmp/mid.pcap" > /dev/null
cat > "$tmp/ct.nft" <<'NFT'
flush ruleset
table inet bench {
	chain pre {
		type filter hook prerouting priority filter; policy accept;
		ip saddr 192.168.0.0/16 drop
		tcp dport { 22, 23, 25 } drop
		udp dport 53 accept
		meta l4proto icmp accept
	}
	chain fw {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ct state new accept
	}
}
NFT

rx() { sed -n 's/^nftdp: port 0 .* rx *\([0-9]*\) .*/\1/p' "$tmp/log" | tail -1; }
wait_rx() { # until the log shows $1 packets received (or 20 minutes)
	local r
	for _ in $(seq 12000); do
		r=$(rx)
		[ "${r:-0}" -ge "$1" ] && return 0
		if ! kill -0 "$vg" 2>/dev/null; then
			echo "FAIL: nftdp exited" >&2
			grep -v '^==' "$tmp/log" | tail -5 >&2
			exit 1
		fi
		sleep 0.1
	done
	echo "FAIL: nftdp did not reach $1 packets" >&2
	exit 1
}
: > "$tmp/log" # before the first rx(): the background job may not have made it yet
valgrind --tool=callgrind --instr-atstart=no --cache-sim=yes --D1=32768,8,64 \
	--LL=33554432,16,64 --toggle-collect=nftdp_dp_pipeline_burst \
	--callgrind-out-file="$tmp/cg.out" \
	"$build/nftdp" -l 0,1 --no-huge -m "$mb" --no-pci --log-level=error --file-prefix "$pfx" \
	--vdev="net_pcap0,rx_pcap=$tmp/mid.pcap,infinite_rx=1" -- --socket "$tmp/nl.sock" \
	--ruleset "$tmp/ct.nft" --workers 1 --conntrack-max $((2 * flows)) --stats-period 0.1 \
	--mbufs "$mbufs" --mbuf-size 256 "$@" > "$tmp/log" 2>&1 &
vg=$!
wait_rx $((2 * mid_total + 65536))
callgrind_control -i on "$vg" > /dev/null
r0=$(rx)
wait_rx $((r0 + packets))
kill -INT "$vg"
wait "$vg" || true
vg=
# the totals, and the calls of nftdp_dp_ct_in_one
/usr/bin/python3 - "$tmp/cg.out" "$flows" <<'PY'
import re, sys
ev, tot, calls, names, cfn = None, None, 0, {}, None
for line in open(sys.argv[1]):
    if line.startswith("events:"):
        ev = line.split()[1:]
    elif line.startswith("summary:") or line.startswith("totals:"):
        tot = [int(x) for x in line.split()[1:]]
    m = re.match(r"(c?)fn=\((\d+)\)(?: (\S+))?", line)
    if m:  # a name comes with its id's first use, by fn= or cfn=
        if m.group(3):
            names[m.group(2)] = m.group(3)
        if m.group(1):
            cfn = names.get(m.group(2))
        continue
    if line.startswith("calls=") and cfn == "nftdp_dp_ct_in_one":
        calls += int(line.split("=")[1].split()[0])
if not tot or not calls:
    sys.exit("FAIL: no packet of the established pass collected")
v = dict(zip(ev, tot))
d1 = v.get("D1mr", 0) + v.get("D1mw", 0)
ll = v.get("DLmr", 0) + v.get("DLmw", 0)
print(f"{sys.argv[2]} flows, {calls} packets of the established pass under callgrind:")
print(f"instructions a packet {v['Ir'] / calls:.0f}, D1 misses a packet {d1 / calls:.2f}, "
      f"LL misses a packet {ll / calls:.2f} (data reads {v.get('Dr', 0) / calls:.0f})")
PY
if [ -n "$out" ]; then
	cp "$tmp/cg.out" "$out"
fi
