#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Conntrack benchmark: Mpps per worker core of nftdp with connection
# tracking, next to dpdk-testpmd's io forwarding in the same run
# (bench/results/conntrack.md).
#
#   testpmd      io forwarding, net_pcap infinite_rx over 4096 frames: the
#                port's ceiling, as bench/dataplane/run.sh measures it
#   empty        nftdp with an empty ruleset over the testpmd row's vdev
#   empty-file   nftdp with an empty ruleset reading the established-flows
#                capture from its file, as the established, new-conns and
#                nat rows do (libpcap reading a file costs more than
#                infinite_rx, and those captures of millions of packets do
#                not fit the port's default pool: the "no file" column
#                estimates each of them without that cost,
#                1 / (1/row - 1/empty-file + 1/empty))
#   established  `ct state established,related accept; ct state new accept`
#                after four stateless rules, FLOWS concurrent TCP flows: the
#                capture holds each flow's SYN, SYN-ACK and ACK (the
#                warm-up that fills the table, not measured), then DATA
#                data segments per flow, interleaved (measured)
#   established-mem  the same ruleset and FLOWS concurrent TCP flows,
#                replayed from memory as the testpmd row is: the capture
#                (nftdp-gen --mid-stream --data 1) is every flow's data
#                segment, then every flow's ACK of it (2 x FLOWS packets),
#                held by net_pcap infinite_rx in a pool of 2 x FLOWS +
#                65536 mbufs of 256 bytes (--mbufs, --mbuf-size). The first
#                pass picks every connection up (nf_conntrack_tcp_loose)
#                and establishes it with the reply, the second makes each
#                direction's carried result (docs/dataplane.md): the
#                warm-up, not measured; every later pass is an
#                established lookup per packet, both directions, judged
#                by its carried result, measured for 5 s (2 s in --smoke)
#   new-conns    every packet a new connection (2 x FLOWS distinct SYNs,
#                a table large enough for all): connections per second
#   nat          the same filter plus snat to a /24 in postrouting, FLOWS
#                UDP flows of DATA datagrams: the first one binds, the rest
#                are rewritten (measured). A replayed capture cannot hold
#                replies to translated addresses, so these flows stay
#                unreplied ("new"), every packet still tracked and NATed.
#   memory       sizeof(struct nftdp_ct_entry) (gdb, from the debug info),
#                and the RSS nftdp has more at idle with --conntrack-max
#                2 x FLOWS than with 1024, per entry
#
# Every row is one forwarding core (-l 0,1: lcore 1 forwards, lcore 0 is
# testpmd's main or nftdp's control thread), rx from net_pcap, tx into
# net_pcap's drop. nftdp's rate: its port count (stats lines every 0.1 s)
# over wall time across the measured part of the capture; testpmd's: its
# total over the time it forwarded. Medians over REPEAT rounds.
#
# usage: run.sh [--build DIR] [--smoke] [--repeat N] [--flows N] [--data N]
#               [--rows LIST] [--record]   (write bench/results/conntrack.json)
# --rows: only these rows (comma-separated names from the list above, e.g.
# testpmd,established-mem), and only their captures made; no --record, and
# the memory lines only with the established row.
# --smoke: no hugepages, 20000 flows, one round: that every row runs (CI);
# established-mem runs 2 s with counters on its two ct rules, which must
# count FLOWS new and every other packet established.
# Full runs reserve 2 MB hugepages for the largest EAL memory of a row
# (established-mem's: 1024 MB plus its pool and net_pcap's ring, about
# 2 GB for 1M flows; bench/lib/hugepages.sh) and give them back at the
# end, also on failure. Time: about a minute per round with the defaults
# (1M flows) on two shared cores.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build smoke=0 repeat=3 flows=1000000 data=6 record=0 rows=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--smoke) smoke=1 ;;
	--repeat) repeat=$2; shift ;;
	--flows) flows=$2; shift ;;
	--data) data=$2; shift ;;
	--record) record=1 ;;
	--rows) rows=$2; shift ;;
	*) echo "usage: $0 [--build DIR] [--smoke] [--repeat N] [--flows N] [--data N] [--rows LIST] [--record]" >&2
	   exit 2 ;;
	esac
	shift
done
mem_secs=5
all_rows=(testpmd empty empty-file established established-mem new-conns nat)
names=()
for n in "${all_rows[@]}"; do
	if [ -z "$rows" ]; then
		names+=("$n")
		continue
	fi
	case ,$rows, in *,"$n",*) names+=("$n") ;; esac
done
if [ ${#names[@]} -eq 0 ] || { [ -n "$rows" ] && [ "$record" -eq 1 ]; }; then
	echo "$0: --rows takes names of ${all_rows[*]}, and no --record" >&2
	exit 2
fi
want() { case " ${names[*]} " in *" $1 "*) return 0 ;; esac; return 1; }
if [ "$smoke" -eq 1 ]; then
	flows=20000 repeat=1 record=0 mem_secs=2
fi
period=0.5

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
testpmd=$(command -v dpdk-testpmd || true)
[ -n "$testpmd" ] || { echo "SKIP: dpdk-testpmd missing (Debian package dpdk-dev)"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done

tmp=$(mktemp -d /tmp/nftdp-bench-ct.XXXXXX)
pfx="nftdp-bct-$$"
pids=()
# shellcheck source=../lib/hugepages.sh
. "$here/../lib/hugepages.sh"
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	hp_restore
	rm -rf "$tmp" /var/run/dpdk/"$pfx"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# established-mem: net_pcap's infinite_rx holds the whole capture in the
# port's pool and copies each packet into a new mbuf of it: 2 x FLOWS
# mbufs plus a working set (the daemon's own minimum is about 12k). Its
# EAL memory: 448 bytes per mbuf of 256 bytes' room (object header, struct
# rte_mbuf, room), net_pcap's ring of pointers (a power of two above the
# capture), on top of the 1024 MB every other row has.
mid_total=$((2 * flows))
mem_mbufs=$((mid_total + 65536))
ring=1
while [ "$ring" -le "$mid_total" ]; do ring=$((ring * 2)); done
mem_mb=$((1024 + (mem_mbufs * 448 + ring * 8) / 1048576 + 64))
if [ "$smoke" -eq 1 ]; then
	mem=(--no-huge)
else
	# nftdp's runs come one at a time: pages for the largest, plus slack
	hp_reserve $(((mem_mb + 1) / 2 + 128)) "$tmp/huge" $(((mem_mb + 1) / 2)) || exit 1
	mem=(--huge-dir "$tmp/huge" --huge-unlink)
fi
eal=("${mem[@]}" -m 1024 --no-pci --log-level=error)

# ---------------------------------------------------------------- traffic
# flows differ by source address (10.0.0.0/8, odometer order) to one server
nsrc=$((flows < 16777216 ? flows : 16777215))
srcs="10.0.0.1-10.$(((nsrc >> 16) & 255)).$(((nsrc >> 8) & 255)).$((nsrc & 255))"
gen() { "$build/nftdp-gen" --family 4 --size 64 --src "$srcs" --dst 172.16.0.1 \
	--sport 40000 --dport 80 "$@" > /dev/null; }
est_total=$((flows * (3 + data)))
if want empty-file || want established; then
	gen --flows "$flows" --proto tcp --data "$data" --count "$est_total" --pcap-out "$tmp/est.pcap"
fi
# twice as many sources for the SYNs: every one a new connection
nsyn=$((2 * flows))
if want new-conns; then
	srcs="10.0.0.1-10.$(((nsyn >> 16) & 255)).$(((nsyn >> 8) & 255)).$((nsyn & 255))"
	gen --flows "$nsyn" --proto tcp --syn-flood --count "$nsyn" --pcap-out "$tmp/syn.pcap"
	srcs="10.0.0.1-10.$(((nsrc >> 16) & 255)).$(((nsrc >> 8) & 255)).$((nsrc & 255))"
fi
nat_total=$((flows * data))
if want nat; then
	gen --flows "$flows" --proto udp --data "$data" --count "$nat_total" --pcap-out "$tmp/nat.pcap"
fi
if want established-mem; then
	gen --flows "$flows" --proto tcp --mid-stream --data 1 --count "$mid_total" --pcap-out "$tmp/mid.pcap"
fi
"$build/nftdp-gen" --flows 1024 --family 4 --proto tcp,udp --data 2 --size 64 \
	--src 10.0.0.1-10.0.0.255 --dport 5000 --count 4096 --pcap-out "$tmp/ceil.pcap" > /dev/null

filter='
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
	}'
printf 'flush ruleset\ntable inet bench {%s\n}\n' "$filter" > "$tmp/ct.nft"
# the smoke run counts what established-mem's two ct rules accept
printf 'flush ruleset\ntable inet bench {%s\n}\n' \
	"$(sed 's/ct state \(.*\) accept/ct state \1 counter accept/' <<< "$filter")" > "$tmp/ct-count.nft"
{
	printf 'flush ruleset\ntable inet bench {%s\n}\n' "$filter"
	printf 'table ip nat {\n\tchain post {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n'
	printf '\t\tip saddr 10.0.0.0/8 snat to 192.0.2.1-192.0.2.254\n\t}\n}\n'
} > "$tmp/nat.nft"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }
rss_kb() { awk '/^(VmRSS|HugetlbPages):/ { s += $2 } END { print s + 0 }' "/proc/$1/status"; }

now() { date +%s.%N; }

# testpmd over vdev $1 for $2 seconds: packets forwarded (its total at the
# end) over the time from the start of forwarding to the stop (its stats
# period keeps it from reading commands on stdin)
run_testpmd() {
	local vdev=$1 secs=$2 log=$tmp/testpmd.log p t0 t1
	timeout $((secs + 30)) "$testpmd" -l 0,1 "${eal[@]}" --file-prefix "$pfx-t" \
		--vdev="$vdev" -- --forward-mode=io --port-topology=loop --nb-cores=1 \
		--total-num-mbufs=32768 --stats-period 1 --auto-start > "$log" 2>&1 &
	p=$!
	pids+=("$p")
	for _ in $(seq 600); do
		grep -q 'forwards packets on' "$log" && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.02
	done
	t0=$(now)
	sleep "$secs"
	t1=$(now)
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
	sed -n 's/.*Accumulated.*//; s/^ *RX-packets: *\([0-9]*\) .*RX-total.*/\1/p' "$log" |
		tail -1 | awk -v t="$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
		'{ printf "%.4f\n", $1 / t / 1e6 }'
}

# nftdp over net_pcap with devargs $1 (rx_pcap=FILE...), ruleset $2 and --conntrack-max $3. Its stats
# lines (every 0.1 s) give the port's packet count; the rate is packets
# over wall time between the first line past the first $4 packets and the
# last line before the capture's end ($5 packets), or, when $6 is given
# (an infinite_rx capture), the last line $6 seconds after that first one.
# $7: EAL memory in MB (default 1024); further arguments go to nftdp.
# Writes "RATE READ RSS_IDLE_KB RSS_GROWN_KB" to $tmp/result: READ is how
# many packets it read (the smoke run wants all), RSS_IDLE with the
# ruleset loaded.
run_nftdp() {
	local pcap=$1 rules=$2 ctmax=$3 skip=$4 total=$5 limit=${6:-0} mb=${7:-1024}
	local log=$tmp/nftdp.log sock=$tmp/nl.sock p np cum last=-1 still=0 rss0 rss1 t
	local ta= ca= tb= cb= t_end=0
	shift $(($# < 7 ? $# : 7))
	rm -f "$sock"
	timeout 600 "$build/nftdp" -l 0,1 "${mem[@]}" -m "$mb" --no-pci --log-level=error \
		--file-prefix "$pfx-n" --vdev="net_pcap0,$pcap" -- --socket "$sock" \
		--ruleset "$rules" --workers 1 --conntrack-max "$ctmax" --stats-period 0.1 \
		"$@" > "$log" 2>&1 &
	p=$!
	pids+=("$p")
	# the ruleset is loaded before the first packet is read (the log's
	# "... mode" line); RSS is taken then. infinite_rx reads its whole
	# capture into mbufs before that.
	for _ in $(seq 3000); do
		grep -q ' mode$' "$log" && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.02
	done
	# timeout's child is nftdp
	np=$(pgrep -P "$p" | head -1 || true)
	np=${np:-$p}
	rss0=$(rss_kb "$np" 2>/dev/null || echo 0)
	while kill -0 "$p" 2>/dev/null; do
		sleep 0.05
		t=$(now)
		cum=$(sed -n 's/^nftdp: port 0 .* rx *\([0-9]*\) .*/\1/p' "$log" | tail -1)
		cum=${cum:-0}
		if [ "$cum" != "$last" ]; then
			still=0
			if [ "$cum" -ge "$skip" ] && [ "$cum" -gt 0 ] && [ "$cum" -lt "$total" ]; then
				if [ -z "$ta" ]; then
					ta=$t ca=$cum
					t_end=$(awk -v t="$t" -v l="$limit" \
						'BEGIN { printf "%.3f\n", (l > 0 ? t + l : 0) }')
				fi
				tb=$t cb=$cum
			fi
		else
			still=$((still + 1))
		fi
		last=$cum
		[ "$cum" -ge "$total" ] && break
		[ "$still" -ge 100 ] && break # 5 s without a packet
		awk -v t="$t" -v e="$t_end" 'BEGIN { exit !(e > 0 && t >= e) }' && break
	done
	rss1=$(rss_kb "$np" 2>/dev/null || echo 0)
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
	awk -v ta="${ta:-0}" -v ca="${ca:-0}" -v tb="${tb:-0}" -v cb="${cb:-0}" -v read="$last" \
		-v r0="$rss0" -v r1="$rss1" 'BEGIN {
			rate = tb > ta ? (cb - ca) / (tb - ta) / 1e6 : 0
			printf "%.4f %d %d %d\n", rate, read, r0, r1 - r0 }' > "$tmp/result"
}

# an empty capture, for the idle memory run
/usr/bin/python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("d4c3b2a1020004000000000000000000ffff000001000000"))' \
	> "$tmp/idle.pcap"

declare -A runs
loads= fail=0
# every nftdp row must have read its whole capture
nftdp_row() {
	run_nftdp "$@"
	read -r v got last_rss_kb last_grow_kb < "$tmp/result"
	if [ "$got" -lt "$5" ]; then
		echo "FAIL: $n: nftdp read $got of $5 packets" >&2
		fail=1
	fi
}
# established-mem got past its warm-up, and conntrack saw FLOWS new
# connections, nothing invalid; with the smoke run's counters, every packet
# after each flow's first was `ct state established`
mem_check() {
	if [ "$1" -le $((2 * mid_total)) ]; then
		echo "FAIL: established-mem: nftdp read $1 packets, the warm-up is $((2 * mid_total))" >&2
		return 1
	fi
	/usr/bin/python3 - "$tmp/mem-stats.json" "$tmp/mem-list.json" "$flows" <<'PY'
import json, os, sys
st, ls, flows = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(st))
ct, rx = s["conntrack"], s["packets"]["rx"]
err, got = [], {}
if (ct["new"], ct["count"], ct["invalid"]) != (flows, flows, 0):
    err.append(f"conntrack new {ct['new']} count {ct['count']} invalid {ct['invalid']}")
if os.path.exists(ls):
    for o in json.load(open(ls))["nftables"]:
        r = o.get("rule")
        if not r:
            continue
        st_ = [e["match"]["right"] for e in r["expr"] if "match" in e]
        n = [e["counter"]["packets"] for e in r["expr"] if "counter" in e]
        if st_ and n:
            got["new" if st_[0] == "new" else "established"] = n[0]
    want = {"new": flows, "established": rx - flows}
    if got != want:
        err.append(f"ct state counters {got}, want {want}")
if err:
    sys.exit("FAIL: established-mem: " + "; ".join(err))
print(f"established-mem: {ct['new']} connections picked up, {rx} packets"
      + (f", ct state new {got['new']}, established {got['established']}" if got else ""))
PY
}
printf 'flush ruleset\n' > "$tmp/empty.nft"
for r in $(seq "$repeat"); do
	for n in "${names[@]}"; do
		l=$(loadavg)
		case $n in
		testpmd) v=$(run_testpmd "net_pcap0,rx_pcap=$tmp/ceil.pcap,infinite_rx=1" 5) ;;
		empty) run_nftdp "rx_pcap=$tmp/ceil.pcap,infinite_rx=1" "$tmp/empty.nft" 1024 1 999999999999 5
			read -r v _ _ _ < "$tmp/result" ;;
		empty-file) nftdp_row "rx_pcap=$tmp/est.pcap" "$tmp/empty.nft" 1024 0 "$est_total" ;;
		established) nftdp_row "rx_pcap=$tmp/est.pcap" "$tmp/ct.nft" $((2 * flows)) $((3 * flows)) \
			"$est_total"
			est_rss=$last_rss_kb est_grow=$last_grow_kb ;;
		established-mem)
			ml=()
			rules=$tmp/ct.nft
			if [ "$smoke" -eq 1 ]; then
				rules=$tmp/ct-count.nft ml=(--listing-json "$tmp/mem-list.json")
			fi
			rm -f "$tmp/mem-stats.json" "$tmp/mem-list.json"
			run_nftdp "rx_pcap=$tmp/mid.pcap,infinite_rx=1" "$rules" $((2 * flows)) \
				$((2 * mid_total)) 999999999999 "$mem_secs" "$mem_mb" --mbufs "$mem_mbufs" \
				--mbuf-size 256 --stats-json "$tmp/mem-stats.json" "${ml[@]}"
			read -r v got _ _ < "$tmp/result"
			mem_check "$got" || fail=1 ;;
		new-conns) nftdp_row "rx_pcap=$tmp/syn.pcap" "$tmp/ct.nft" $((nsyn + nsyn / 4)) 0 "$nsyn" ;;
		nat) nftdp_row "rx_pcap=$tmp/nat.pcap" "$tmp/nat.nft" $((2 * flows)) "$flows" "$nat_total" ;;
		esac
		echo "round $r $n: $v Mpps (load average before: $l)"
		loads="$loads $l"
		runs[$n]="${runs[$n]:-} $v"
	done
done

# memory: idle RSS with a 1024-entry table against the established run's
entry=$(gdb -batch -ex 'print sizeof(struct nftdp_ct_entry)' "$build/nftdp" 2>/dev/null |
	sed -n 's/^\$1 = //p' || true)
entry=${entry:-null}
small_rss=0
if want established; then
	run_nftdp "rx_pcap=$tmp/idle.pcap" "$tmp/ct.nft" 1024 0 1
	read -r _ _ small_rss _ < "$tmp/result"
fi
per_entry=$(awk -v a="${est_rss:-0}" -v b="$small_rss" -v n=$((2 * flows - 1024)) \
	'BEGIN { if (a > b && n > 0) printf "%.1f", (a - b) * 1024 / n; else print "null" }')

declare -A med
for n in "${all_rows[@]}"; do med[$n]=0; done
for n in "${names[@]}"; do
	med[$n]=$(tr ' ' '\n' <<< "${runs[$n]}" | grep . | median)
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "null" }'; }
# the row's rate without the file's cost (see the header)
nofile() {
	awk -v r="$1" -v f="${med[empty-file]}" -v e="${med[empty]}" 'BEGIN {
		c = (r > 0 && f > 0 && e > 0) ? 1 / r - 1 / f + 1 / e : 0
		if (c > 0) printf "%.4f", 1 / c; else print "null" }'
}
echo
echo "$flows flows, $data data packets per flow, one worker core, 64-byte frames"
echo
echo "| config | Mpps per worker core (median of $repeat) | ratio to testpmd | ratio to empty-file | no file: Mpps, ratio to testpmd | runs |"
echo "|---|---|---|---|---|---|"
for n in "${names[@]}"; do
	nf=- rf=$(ratio "${med[$n]}" "${med[empty-file]}")
	case $n in established | new-conns | nat)
		nf=$(nofile "${med[$n]}")
		nf="$nf, $(ratio "$nf" "${med[testpmd]}")" ;;
	established-mem) rf=- ;; # read from memory, not the file
	esac
	echo "| $n | ${med[$n]} | $(ratio "${med[$n]}" "${med[testpmd]}") | $rf | $nf |${runs[$n]} |"
done
echo
echo "new connections per second per worker: $(awk -v m="${med[new-conns]}" 'BEGIN { printf "%.0f", m * 1e6 }')"
echo "sizeof(struct nftdp_ct_entry): $entry bytes"
echo "RSS at idle: ${est_rss:-0} kB with --conntrack-max $((2 * flows)), $small_rss kB with 1024:" \
	"$per_entry bytes per entry; grown while filling $flows flows: ${est_grow:-0} kB"

# a smoke run's captures are too short for a rate; a full run needs one
if [ "$smoke" -eq 0 ]; then
	for n in "${names[@]}"; do
		awk -v v="${med[$n]}" 'BEGIN { exit !(v > 0) }' || { echo "FAIL: no rate for $n"; fail=1; }
	done
fi

if [ "$record" -eq 1 ]; then
	out=$root/bench/results
	{
		printf '{"title": "nftdp conntrack, 64-byte frames, one worker core",\n'
		printf ' "flows": %s, "data_per_flow": %s, "repeat": %s,\n' "$flows" "$data" "$repeat"
		printf ' "configs": ['
		sep=
		for n in "${names[@]}"; do
			nf=null rf=$(ratio "${med[$n]}" "${med[empty-file]}")
			case $n in
			established | new-conns | nat) nf=$(nofile "${med[$n]}") ;;
			established-mem) rf=null ;;
			esac
			printf '%s\n  {"name": "%s", "mpps": %s, "ratio": %s, "ratio_file": %s, "mpps_no_file": %s, "runs": [%s]}' \
				"$sep" "$n" "${med[$n]}" "$(ratio "${med[$n]}" "${med[testpmd]}")" \
				"$rf" "$nf" \
				"$(tr ' ' '\n' <<< "${runs[$n]}" | grep . | paste -sd,)"
			sep=,
		done
		printf '\n ],\n "entry_size_bytes": %s, "rss_per_entry_bytes": %s,' "$entry" "$per_entry"
		printf ' "rss_idle_kb": {"ct_max_%s": %s, "ct_max_1024": %s}, "rss_grown_filling_kb": %s,\n' \
			$((2 * flows)) "${est_rss:-0}" "$small_rss" "${est_grow:-0}"
		printf ' "established_mem": {"packets": %s, "mbufs": %s, "mbuf_size": 256, "eal_mb": %s, "seconds": %s},\n' \
			"$mid_total" "$mem_mbufs" "$mem_mb" "$mem_secs"
		printf ' "load_average_before_runs": [%s]}\n' "$(tr ' ' '\n' <<< "$loads" | grep . | paste -sd,)"
	} > "$out/conntrack.json"
	echo "recorded $out/conntrack.json"
fi
exit "$fail"
