#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SYN-flood benchmark (issue 14, synproxy): how fast one worker absorbs a
# SYN flood aimed at a synproxied server while established flows to
# another server keep passing (bench/results/conntrack.md).
#
# Traffic, one capture replayed offline through one port (wire mode, the
# answers leave by the port they came in): FLOWS established TCP flows to
# 172.16.0.1 (handshake, DATA data segments each way, FIN), and as many
# SYNs from distinct sources to 172.16.0.2 as make SHARE % of the
# capture, spread evenly over it.
# Ruleset: the kernel's synproxy recipe for 172.16.0.2 (raw prerouting
# `tcp flags syn notrack`, forward `ct state invalid,untracked synproxy`,
# `ct state invalid drop`), established and new accepted.
#
# Rows, each one run of nftdp over the capture file (-l 0,1: lcore 1
# forwards), the rate its packets over its run time less the idle time
# before it exits:
#   empty      no ruleset: the replay's ceiling from a file
#   synflood   the ruleset: the rate, the SYNs answered with a cookie
#              SYN-ACK (synproxy's syn_received), the other packets sent
#              (the established flows', which must all pass)
# and, with --instructions, both under callgrind
# (--toggle-collect=nftdp_dp_pipeline_burst): instructions a packet, which
# the shared machine's load does not move.
#
# usage: synflood.sh [--build DIR] [--flows N] [--data N] [--share PCT]
#                    [--instructions]
# No hugepages (--no-huge); leaves nothing behind. Needs root.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build flows=2000 data=8 share=50 ins=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--flows) flows=$2; shift ;;
	--data) data=$2; shift ;;
	--share) share=$2; shift ;;
	--instructions) ins=1 ;;
	*) echo "usage: $0 [--build DIR] [--flows N] [--data N] [--share PCT] [--instructions]" >&2
	   exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done
[ "$ins" -eq 0 ] || command -v valgrind > /dev/null ||
	{ echo "SKIP: valgrind missing (Debian package valgrind)"; exit 77; }

tmp=$(mktemp -d /tmp/nftdp-bench-syn.XXXXXX)
pfx="nftdp-bsyn-$$"
trap '[ -n "${KEEP:-}" ] && cp "$tmp/mix.pcap" "$tmp/syn.nft" "$KEEP"/; rm -rf "$tmp" /var/run/dpdk/"$pfx"-*' EXIT

# a flow's packets: SYN, SYN-ACK, ACK, DATA rounds of data and its ACK, FIN both ways
est_total=$((flows * (3 + 2 * data + 2)))
syns=$((est_total * share / (100 - share)))
"$build/nftdp-gen" --flows "$flows" --family 4 --proto tcp --data "$data" --size 64 \
	--src 10.0.0.1-10.0.255.255 --dst 172.16.0.1 --sport 40000 --dport 80 \
	--count "$est_total" --pcap-out "$tmp/est.pcap" > /dev/null
"$build/nftdp-gen" --flows "$syns" --family 4 --proto tcp --syn-flood --size 64 \
	--src 11.0.0.1-11.255.255.255 --dst 172.16.0.2 --sport 1024-65535 --dport 80 \
	--count "$syns" --pcap-out "$tmp/syn.pcap" > /dev/null
# interleave the two captures record by record in proportion, stamps in order
/usr/bin/python3 - "$tmp/est.pcap" "$tmp/syn.pcap" "$tmp/mix.pcap" << 'EOF'
import struct, sys
def records(path):
    d = open(path, 'rb').read()
    hdr, o, out = d[:24], 24, []
    while o + 16 <= len(d):
        n = struct.unpack('<I', d[o + 8:o + 12])[0]
        out.append(d[o + 8:o + 16 + n])
        o += 16 + n
    return hdr, out
hdr, est = records(sys.argv[1])
_, syn = records(sys.argv[2])
mix, i, j = [], 0, 0
while i < len(est) or j < len(syn):
    # keep the SYN share even over the capture
    if j < len(syn) and (i >= len(est) or j * len(est) <= i * len(syn)):
        mix.append(syn[j]); j += 1
    else:
        mix.append(est[i]); i += 1
with open(sys.argv[3], 'wb') as f:
    f.write(hdr)
    for k, r in enumerate(mix):
        f.write(struct.pack('<II', 1700000000 + k // 1000000, k % 1000000) + r)
EOF
cat > "$tmp/syn.nft" << 'EOF'
flush ruleset
table ip bench {
	chain pre {
		type filter hook prerouting priority raw; policy accept;
		ip daddr 172.16.0.2 tcp flags syn notrack
	}
	chain fw {
		type filter hook forward priority filter; policy drop;
		ip daddr 172.16.0.2 ct state invalid,untracked synproxy mss 1460 wscale 7 timestamp sack-perm
		ct state invalid drop
		ct state established,related accept
		ct state new accept
	}
}
EOF
total=$((est_total + syns))
idle=1000

# one replay: "rate_mpps syn_received tx"
run() {
	local tag=$1; shift
	local eal=(-l 0,1 --no-huge -m 1024 --no-pci --log-level=error --file-prefix "$pfx-$tag"
		--vdev="net_pcap0,rx_pcap=$tmp/mix.pcap,tx_pcap=/dev/null")
	timeout 600 "$@" "$build/nftdp" "${eal[@]}" -- --socket "$tmp/$tag.sock" \
		--workers 1 --exit-on-idle "$idle" --conntrack-max $((4 * total)) \
		--stats-json "$tmp/$tag.json" "${rules[@]}" > "$tmp/$tag.log" 2>&1 ||
		{ tail -5 "$tmp/$tag.log" >&2; echo "0 0 0"; return; }
	/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t = d["run_time_s"] - int(sys.argv[2]) / 1000.0
print("%.3f %d %d" % (d["packets"]["rx"] / t / 1e6 if t > 0 else 0,
      d.get("synproxy", {}).get("syn_received", 0), d["packets"]["tx"]))' "$tmp/$tag.json" "$idle"
}

echo "# $flows established flows ($est_total packets), $syns flood SYNs ($share %), load $(cut -d' ' -f1 /proc/loadavg)"
echo "| row | Mpps a worker | SYNs answered (cookie SYN-ACKs) | other packets sent |"
echo "|---|---|---|---|"
rules=()
read -r r s t < <(run empty)
echo "| empty | $r | $s | $((t - s)) |"
rules=(--ruleset "$tmp/syn.nft")
read -r r s t < <(run synflood)
echo "| synflood | $r | $s | $((t - s)) |"
if [ "$ins" -eq 1 ]; then
	for row in empty synflood; do
		if [ "$row" = empty ]; then rules=(); else rules=(--ruleset "$tmp/syn.nft"); fi
		run "cg-$row" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg-$row" \
			--toggle-collect=nftdp_dp_pipeline_burst > /dev/null
		i=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/cg-$row")
		awk -v r="$row" -v i="${i:-0}" -v n="$total" \
			'BEGIN { printf "instructions a packet, %s: %.0f\n", r, i / n }'
	done
fi
