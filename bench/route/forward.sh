#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Router-mode forwarding against wire mode (bench/results/route.md).
#
# Two scratch netns hold the routes nftdp mirrors: "big" with ROUTES4 IPv4
# /24s (default 1,000,000) and ROUTES6 IPv6 /64s (default 100,000), all via
# one gateway with a permanent neighbour on dp0, and "small" with the same
# address space in 17 aggregates. The traffic (FLOWS UDP flows, half IPv4
# and half IPv6, 64-byte frames, each destination in a different route of
# the big table) is read from net_pcap port 0 with infinite_rx=1 and sent
# back into its tx drop (no tx devarg; the routes lead out of dp0, and a
# second pcap port would make nftdp merge captures): one worker core
# (lcore 1), the control thread on lcore 0, as bench/dataplane/run.sh.
# Configurations, interleaved, REPEAT rounds, medians of the per-second
# rates after the first second:
#   wire         one port, no pairs: out where it came in (no route lookup,
#                no MAC rewrite, no TTL)
#   route-small  --route in the small netns
#   route-big    --route in the big netns
# Then route updates absorbed while forwarding: nftdp --route runs in the
# big netns, and one `ip -batch` replaces UPDATES/2 routes of the big
# table (another gateway) then adds UPDATES/2 more /24s; the kernel's
# time for the batch, the time until nftdp's table has them all (its
# "routes: N IPv4" log line: the adds come last), how many updates were
# deltas and how many refills, and the Mpps before and during.
# Then, with nftdp --route in the big netns sending out of port 0 into
# the veth p0 (tx_iface: slower than the tx drop) and tcpdump on dp0
# waiting for the first frame of the traffic's first flow to a gateway's
# MAC: a second batch undoes the first (replaces back, deletes) and ends
# with that flow's route replaced via 10.1.0.3: the time from the batch's
# start to that frame (the log line above is at most one a second); then
# REPLACES single `ip route replace`s of that route, alternately via
# 10.1.0.2 and 10.1.0.3: the time from just before each to the frame's
# kernel timestamp.
# Then instructions per packet (callgrind, the offline replay of the same
# traffic, as bench/dataplane/instructions.sh) for wire and route-small.
#
# usage: forward.sh [--build DIR] [--routes4 N] [--routes6 N] [--flows N]
#                   [--seconds S] [--repeat N] [--updates N] [--no-callgrind]
#                   [--updates-only] [--replaces N] [--smoke]
# --updates-only: no forwarding rounds nor callgrind, only the updates and
#          the replace latency (ROUTES4 at 1M: about 5 minutes on 2 cores).
# --smoke: 20,000 / 2,000 routes, 2 s, one round, no callgrind: that it
#          runs, not a measurement. No hugepages of its own: --no-huge, or
#          --in-memory from the pool tools/test.sh filled
#          (NFTDP_TEST_HUGEPAGES=1).
# Full runs reserve 2 MB hugepages (nr_hugepages + 3000) on a private
# hugetlbfs mount and give them back at the end, also on failure; every
# netns and temporary file is removed. Bounded: each nftdp run is under
# timeout, the whole under ~15 minutes at the defaults on 2 cores.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build n4=1000000 n6=100000 flows=1024 seconds=6 repeat=3 updates=10000 smoke=0 callgrind=1
only=0 replaces=5
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--routes4) n4=$2; shift ;;
	--routes6) n6=$2; shift ;;
	--flows) flows=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--repeat) repeat=$2; shift ;;
	--updates) updates=$2; shift ;;
	--smoke) smoke=1 ;;
	--no-callgrind) callgrind=0 ;;
	--updates-only) only=1 callgrind=0 ;;
	--replaces) replaces=$2; shift ;;
	*) echo "usage: $0 [--build DIR] [--routes4 N] [--routes6 N] [--flows N] [--seconds S]" \
		"[--repeat N] [--updates N] [--no-callgrind] [--updates-only] [--replaces N]" \
		"[--smoke]" >&2
	   exit 2 ;;
	esac
	shift
done
if [ "$smoke" -eq 1 ]; then
	n4=20000 n6=2000 seconds=2 repeat=1 updates=1000 replaces=2
fi
command -v tcpdump > /dev/null || replaces=0
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -x "$build/nftdp" ] || { echo "SKIP: $build/nftdp missing"; exit 77; }

tmp=$(mktemp -d /tmp/nftdp-bench-rt.XXXXXX)
pfx="nftdp-brt-$$"
nsb=nftdp-brt-big-$$ nss=nftdp-brt-small-$$
# shellcheck source=../lib/hugepages.sh
. "$here/../lib/hugepages.sh"
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	ip netns del "$nsb" 2>/dev/null || true
	ip netns del "$nss" 2>/dev/null || true
	hp_restore
	rm -rf "$tmp" /var/run/dpdk/"$pfx"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# the big table: 1.1M routes need tables of 4M-route size (next hops are
# one per route, both families), current and spare, over 1 GiB each
if [ "$smoke" -eq 1 ] && [ "${NFTDP_TEST_HUGEPAGES:-}" = 1 ]; then
	# under tools/test.sh, which has put 2 MiB pages in the kernel's pool:
	# the route tables are zeroed without a 4 KiB fault each
	mem=(--in-memory)
elif [ "$smoke" -eq 1 ]; then
	mem=(--no-huge -m 1024)
else
	hp_reserve 3000 "$tmp/huge" 2900 || exit 1
	mem=(--huge-dir "$tmp/huge" --huge-unlink -m 5800)
fi
eal=("${mem[@]}" --no-pci --log-level=error)

setup_ns() { # NS: a veth named like port 0, addresses, the gateways' permanent neighbours
	local ns=$1
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link add dp0 type veth peer name p0
	for d in dp0 p0; do ip -n "$ns" link set "$d" up; done
	ip -n "$ns" addr add 10.1.0.1/24 dev dp0
	ip -n "$ns" addr add 2001:db8:ffff:1::1/64 dev dp0 nodad
	ip -n "$ns" neigh replace 10.1.0.2 lladdr 02:00:00:00:02:02 dev dp0 nud permanent
	ip -n "$ns" neigh replace 10.1.0.3 lladdr 02:00:00:00:02:03 dev dp0 nud permanent
	ip -n "$ns" neigh replace 2001:db8:ffff:1::2 lladdr 02:00:00:00:02:02 dev dp0 nud permanent
}
setup_ns "$nsb"
setup_ns "$nss"
/usr/bin/python3 - "$n4" "$n6" "$tmp" "$flows" <<'PY'
import random, struct, sys
n4, n6, tmp, flows = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def p4(i):  # the i-th IPv4 /24 of the big table
    return (11 + (i >> 16), (i >> 8) & 255, i & 255)
def p6(i):
    return (i >> 16, i & 0xffff)
with open(tmp + '/big', 'w') as f:
    for i in range(n4):
        f.write('route add %d.%d.%d.0/24 via 10.1.0.2 dev dp0\n' % p4(i))
    for i in range(n6):
        f.write('route add 2001:db8:%x:%x::/64 via 2001:db8:ffff:1::2 dev dp0\n' % p6(i))
with open(tmp + '/small', 'w') as f:
    for a in range(11, 11 + ((n4 - 1) >> 16) + 1):
        f.write('route add %d.0.0.0/8 via 10.1.0.2 dev dp0\n' % a)
    f.write('route add 2001:db8::/32 via 2001:db8:ffff:1::2 dev dp0\n')
# the traffic: each flow to a different route of the big table
rnd = random.Random(15)
def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
eth = bytes.fromhex('02000000aa01' '02000000bb01')
frames = []
for k in range(flows):
    sport = 1024 + k
    if k % 2 == 0:
        a, b, c = p4(rnd.randrange(n4))
        if k == 0:  # the route the replace latency changes
            with open(tmp + '/first', 'w') as f:
                f.write('%d.%d.%d.0/24\n' % (a, b, c))
        src = bytes([10, 1, 0, 2 + k % 200])
        dst = bytes([a, b, c, 1 + k % 250])
        udp = struct.pack('!HHHH', sport, 5000, 8 + 18, 0) + b'x' * 18
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), k, 0, 64, 17, 0, src, dst)
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        frames.append(eth + b'\x08\x00' + ip + udp)
    else:
        x, y = p6(rnd.randrange(n6))
        src = bytes.fromhex('20010db8ffff0001' '0000000000%06x' % (2 + k))
        dst = bytes.fromhex('20010db8%04x%04x' % (x, y) + '%016x' % (1 + k))
        udp = struct.pack('!HHHH', sport, 5000, 8 + 2, 0) + b'xx'
        ph = src + dst + struct.pack('!IxxxB', len(udp), 17)
        udp = udp[:6] + struct.pack('!H', csum(ph + udp) or 0xffff) + udp[8:]
        ip = struct.pack('!IHBB16s16s', 6 << 28, len(udp), 17, 64, src, dst)
        frames.append(eth + b'\x86\xdd' + ip + udp)
with open(tmp + '/traffic.pcap', 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for r in range(4):
        for fr in frames:
            fr = fr + b'\0' * max(0, 60 - len(fr))
            f.write(struct.pack('<IIII', 0, 0, len(fr), len(fr)) + fr)
PY
# half replaces of the big table's routes (another gateway), then half
# adds of /24s past it
/usr/bin/python3 - "$n4" "$updates" > "$tmp/updates" <<'PY'
import sys
n4, updates = int(sys.argv[1]), int(sys.argv[2])
nrep = min(updates // 2, n4)
for i in range(nrep):
    j = (i * 7919) % n4
    print('route replace %d.%d.%d.0/24 via 10.1.0.3 dev dp0' % (11 + (j >> 16), (j >> 8) & 255, j & 255))
for i in range(updates - nrep):
    print('route add %d.%d.%d.0/24 via 10.1.0.3 dev dp0' % (60 + (i >> 16), (i >> 8) & 255, i & 255))
PY
nadds=$((updates - $(grep -c '^route replace' "$tmp/updates")))
t0=$(date +%s.%N)
timeout 900 ip -n "$nsb" -batch "$tmp/big"
t1=$(date +%s.%N)
timeout 60 ip -n "$nss" -batch "$tmp/small"
echo "kernel: $n4 IPv4 + $n6 IPv6 routes added in $(echo "$t1 - $t0" | bc) s (ip -batch)"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
vdevs=(--vdev="net_pcap0,rx_pcap=$tmp/traffic.pcap,infinite_rx=1")
# rates of worker 0 in log lines from line $2 on ($3: up to that line), the first dropped
rates() {
	tail -n +$(($2 + 1)) "$1" | head -n "${3:-1000000}" |
		sed -n 's/^nftdp: worker 0 .* rx *\([0-9.]*\) Mpps.*/\1/p'
}
# start nftdp in netns $1 with more arguments; sets $nft_pid, waits for its start
start_nftdp() {
	local ns=$1 log=$2
	shift 2
	rm -f "$tmp/nl.sock"
	ip netns exec "$ns" timeout 600 "$build/nftdp" -l 0,1 "${eal[@]}" --file-prefix "$pfx-n" \
		"${vdevs[@]}" -- --socket "$tmp/nl.sock" --workers 1 --stats-period 1 "$@" \
		> "$log" 2>&1 &
	nft_pid=$!
	pids+=("$nft_pid")
	for _ in $(seq 3000); do
		grep -q ' mode$' "$log" && return 0
		kill -0 "$nft_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "nftdp did not start:" >&2
	tail -5 "$log" >&2
	return 1
}
stop_nftdp() {
	kill -INT "$nft_pid" 2>/dev/null || true
	wait "$nft_pid" || true
}
run_cfg() {
	local log=$tmp/$1.log mark
	case $1 in
	wire) start_nftdp "$nsb" "$log" || { echo 0; return; } ;;
	route-small) start_nftdp "$nss" "$log" --route || { echo 0; return; } ;;
	route-big) start_nftdp "$nsb" "$log" --route || { echo 0; return; } ;;
	esac
	mark=$(wc -l < "$log")
	sleep $((seconds + 1))
	stop_nftdp
	grep -h 'mirrored' "$log" | head -1 > "$tmp/$1.mirror" || true
	rates "$log" "$mark" | tail -n +2 | median
}

names=(wire route-small route-big)
[ "$only" -eq 0 ] || names=()
declare -A runs med
for r in $(seq "$repeat"); do
	for n in "${names[@]}"; do
		l=$(cut -d' ' -f1 /proc/loadavg)
		v=$(run_cfg "$n")
		echo "round $r $n: $v Mpps (load average before: $l)"
		runs[$n]="${runs[$n]:-} $v"
	done
done
for n in "${names[@]}"; do
	med[$n]=$(tr ' ' '\n' <<< "${runs[$n]}" | grep . | median)
done
[ "$only" -eq 1 ] || echo "route-big start: $(cat "$tmp/route-big.mirror")"

# route updates while forwarding
log=$tmp/updates.log
start_nftdp "$nsb" "$log" --route
# the first refill of the spare runs once nftdp is idle: wait for it
sleep 3
for _ in $(seq 600); do
	grep -q 'mirrored' "$log" && break
	sleep 0.1
done
echo "updates: start: $(grep -h 'mirrored' "$log" | head -1)"
# first_packet SECONDS MAC: tcpdump (pid in $td) waits up to SECONDS for
# the first frame to MAC for the first flow's prefix, into $tmp/td.out;
# returns once it listens
first_packet() {
	rm -f "$tmp/td.out"
	ip netns exec "$nsb" timeout "$1" tcpdump -i dp0 -nn -e -c 1 -tt -Q in \
		"ether dst $2 and dst net $first" > "$tmp/td.out" 2> "$tmp/td.err" &
	td=$!
	pids+=("$td")
	for _ in $(seq 100); do
		grep -q 'listening' "$tmp/td.err" 2>/dev/null && break
		sleep 0.05
	done
	sleep 0.5
}

wait_spare() { # the first refill of the spare table (then updates are deltas)
	for _ in $(seq 1200); do
		grep -q 'spare table refilled' "$1" && break
		sleep 0.1
	done
	grep -h 'spare table refilled' "$1" | head -1
	sleep 2
}
echo "updates: $(wait_spare "$log")"
mark=$(wc -l < "$log")
t0=$(date +%s.%N)
timeout 300 ip -n "$nsb" -batch "$tmp/updates"
t1=$(date +%s.%N)
have=$(sed -n 's/^nftdp: mirrored \([0-9]*\) IPv4.*/\1/p' "$log" | head -1)
want=$((have + nadds))
absorbed=
for _ in $(seq 1200); do
	if tail -n +$((mark + 1)) "$log" | grep -q "routes: $want IPv4"; then
		absorbed=$(date +%s.%N)
		break
	fi
	sleep 0.05
done
mark2=$(wc -l < "$log")
sleep 2
stop_nftdp
before=$(rates "$log" 0 "$mark" | tail -n +2 | median)
during=$(rates "$log" "$mark" $((mark2 - mark)) | median)
kern_s=$(echo "$t1 - $t0" | bc)
echo "updates: $updates route replaces and adds: kernel $kern_s s ($(echo "$updates / $kern_s" | bc) /s)"
if [ -n "$absorbed" ]; then
	abs_s=$(echo "$absorbed - $t0" | bc)
	echo "updates: in nftdp's table $abs_s s after the batch began" \
		"($(echo "$updates / $abs_s" | bc) updates/s absorbed)"
else
	abs_s=
	echo "updates: not all in nftdp's table within 60 s:"
	tail -5 "$log"
fi
grep 'routes: .* rebuilt' "$log" | tail -3 || true
echo "updates: Mpps before $before, during $during"
deltas=$(sed -n 's/.* rebuilds\{0,1\}: \([0-9]*\) by deltas, \([0-9]*\) refilled.*/\1 \2/p' "$log" |
	awk '{ d += $1; r += $2 } END { printf "%d by deltas, %d refills", d, r }')
echo "updates: $deltas"

# the latency from ip route replace to the first packet on the new path
lat=()
if [ "$replaces" -gt 0 ]; then
	log=$tmp/replace.log
	first=$(cat "$tmp/first")
	vdevs=(--vdev="net_pcap0,rx_pcap=$tmp/traffic.pcap,infinite_rx=1,tx_iface=p0")
	ip -n "$nsb" route replace "$first" via 10.1.0.2 dev dp0 # as the big table has it
	start_nftdp "$nsb" "$log" --route
	wait_spare "$log" > /dev/null
	# the update batch undone (replaces back, adds deleted), then the
	# first flow's route replaced: its first packet on the new path says
	# when nftdp had the whole batch (the batch is applied in order)
	{
		sed -n 's/^route replace \(.*\) via 10.1.0.3 /route replace \1 via 10.1.0.2 /p' "$tmp/updates"
		sed -n 's/^route add \(.*\) via .*/route del \1/p' "$tmp/updates"
		echo "route replace $first via 10.1.0.3 dev dp0"
	} > "$tmp/undo"
	first_packet 120 02:00:00:00:02:03
	t0=$(date +%s.%N)
	timeout 300 ip -n "$nsb" -batch "$tmp/undo"
	t1=$(date +%s.%N)
	wait "$td" || true
	ts=$(awk 'NR == 1 { print $1 }' "$tmp/td.out")
	undo_n=$(wc -l < "$tmp/undo")
	undo_k=$(echo "$t1 - $t0" | bc -l | xargs printf '%.3f')
	if [ -n "$ts" ]; then
		undo_s=$(echo "$ts - $t0" | bc -l | xargs printf '%.3f')
		undo_rate=$(echo "$undo_n / $undo_s" | bc)
	else
		undo_s=none undo_rate=0
	fi
	echo "updates: $undo_n more (replaces, deletes, the first flow's route last):" \
		"kernel $undo_k s, in nftdp's forwarding $undo_s s after the batch began" \
		"($undo_rate updates/s absorbed)"
	sleep 2
	for i in $(seq "$replaces"); do
		if [ $((i % 2)) -eq 0 ]; then gw=10.1.0.3 mac=02:00:00:00:02:03
		else gw=10.1.0.2 mac=02:00:00:00:02:02; fi
		first_packet 20 "$mac"
		t0=$(date +%s.%N)
		ip -n "$nsb" route replace "$first" via "$gw" dev dp0
		wait "$td" || true
		ts=$(awk 'NR == 1 { print $1 }' "$tmp/td.out")
		if [ -n "$ts" ]; then
			lat+=("$(echo "($ts - $t0) * 1000" | bc -l | xargs printf '%.1f')")
		else
			lat+=(none)
		fi
		echo "replace $i via $gw: first packet after ${lat[-1]} ms"
		sleep 1
	done
	stop_nftdp
fi

ins_rows=()
if [ "$smoke" -eq 0 ] && [ "$callgrind" -eq 1 ] && command -v valgrind > /dev/null; then
	# instructions per packet: an offline replay of the traffic's 4 laps
	for n in wire route-small; do
		a=()
		[ "$n" = wire ] || a=(--route)
		rm -f "$tmp/cg" "$tmp/st.json"
		ip netns exec "$nss" timeout 900 valgrind --tool=callgrind \
			--callgrind-out-file="$tmp/cg" --toggle-collect=nftdp_dp_pipeline_burst \
			"$build/nftdp" -l 0,1 --no-huge -m 1024 --no-pci --log-level=error \
			--file-prefix "$pfx-c" --vdev="net_pcap0,rx_pcap=$tmp/traffic.pcap" \
			-- --socket "$tmp/nlc.sock" \
			--workers 1 --exit-on-idle 1000 --stats-json "$tmp/st.json" "${a[@]}" \
			> "$tmp/cg.log" 2>&1 || true
		ins=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/cg" 2> /dev/null || echo 0)
		pk=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["rx"])' \
			"$tmp/st.json" 2> /dev/null || echo 0)
		ins_rows+=("$n $(awk -v i="${ins:-0}" -v p="$pk" 'BEGIN { if (p > 0) printf "%.0f", i / p; else print "failed" }')")
	done
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }'; }
echo
echo "| config | Mpps, one worker core (median of $repeat) | ratio to wire | runs |"
echo "|---|---|---|---|"
for n in "${names[@]}"; do
	echo "| $n | ${med[$n]} | $(ratio "${med[$n]}" "${med[wire]}") |${runs[$n]} |"
done
echo
echo "| route updates while forwarding (route-big) | value |"
echo "|---|---|"
echo "| route adds in one ip -batch | $updates |"
echo "| kernel's time for the batch | $kern_s s |"
echo "| until all were in nftdp's table | $([ -n "$abs_s" ] && echo "$abs_s s" || echo "not within 60 s") |"
echo "| Mpps before / during | $before / $during |"
echo "| updates applied | $deltas |"
if [ "${#lat[@]}" -gt 0 ]; then
	echo "| second batch ($undo_n: replaces, deletes, one replace last), kernel / until its last route forwarded | $undo_k s / $undo_s s ($undo_rate updates/s) |"
	echo "| ip route replace to the first packet on the new path | ${lat[*]} ms |"
fi
for row in "${ins_rows[@]}"; do
	echo "instructions per packet: $row"
done
fail=0
for n in "${names[@]}"; do
	awk -v v="${med[$n]}" 'BEGIN { exit !(v > 0) }' || { echo "FAIL: no rate for $n"; fail=1; }
done
[ -n "$abs_s" ] || fail=1
[ "${undo_s:-x}" != none ] || { echo "FAIL: the second batch's last route never forwarded"; fail=1; }
for l in "${lat[@]}"; do
	[ "$l" != none ] || { echo "FAIL: no packet on the new path"; fail=1; }
done
exit "$fail"
