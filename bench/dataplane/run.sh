#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Dataplane benchmark: Mpps per worker core of dpdk-testpmd (io forwarding,
# the ceiling) and of nftdp with an empty ruleset, a 20-rule stateless
# forward chain with sets, the same without the per-flow verdict cache
# (rules20-nocache: --flow-cache 0), the same chain with 100k-element
# sets, and the same checks behind conntrack (stateful: policy drop,
# established first; the replay's connections are established after its
# first lap); then the commit-during-traffic check (commit.sh). Each nftdp run
# records its flow cache hits and misses (--stats-json) beside its rate.
#
# Every configuration reads the same generator traffic (nftdp-gen, many
# flows, written once to a pcap) from the same vdev, net_pcap with
# infinite_rx=1, and transmits into net_pcap's tx drop (no tx devarg): one
# forwarding core, no second process competing for the two cores. The
# forwarding lcore is 1 (-l 0,1); testpmd's main lcore and nftdp's control
# thread stay on 0. Configurations are interleaved, REPEAT rounds, medians
# reported; the load average is recorded with each run (the cores are
# shared with other work).
#
# usage: run.sh [--build DIR] [--smoke] [--repeat N] [--seconds S]
#               [--record]   (write bench/results/dataplane.json and .svg)
# --smoke: 2 s per configuration, one round, 1000-element sets, 1 s of
#          commits: a CI check that everything runs and the commit check
#          holds, not a measurement. No hugepages of its own: --no-huge,
#          or --in-memory from the pool tools/test.sh filled
#          (NFTDP_TEST_HUGEPAGES=1).
# Full runs reserve 2 MB hugepages (nr_hugepages + 640) on a private
# hugetlbfs mount and restore nr_hugepages at the end, also on failure.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build smoke=0 repeat=3 seconds=8 record=0
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--smoke) smoke=1 ;;
	--repeat) repeat=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--record) record=1 ;;
	*) echo "usage: $0 [--build DIR] [--smoke] [--repeat N] [--seconds S] [--record]" >&2
	   exit 2 ;;
	esac
	shift
done
elements=100000 commit_s=5 commit_rate=1
if [ "$smoke" -eq 1 ]; then
	seconds=2 repeat=1 elements=1000 commit_s=1 commit_rate=0.5 record=0
fi

[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
testpmd=$(command -v dpdk-testpmd || true)
[ -n "$testpmd" ] || { echo "SKIP: dpdk-testpmd missing (Debian package dpdk-dev)"; exit 77; }
for b in nftdp nftdp-gen nftdp-nft; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done

tmp=$(mktemp -d /tmp/nftdp-bench-dp.XXXXXX)
pfx="nftdp-bdp-$$"
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
	hp_restore
	rm -rf "$tmp" /var/run/dpdk/"$pfx"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# one process at a time gets 1 GiB; the commit check runs two at 512 MiB
if [ "$smoke" -eq 1 ] && [ "${NFTDP_TEST_HUGEPAGES:-}" = 1 ]; then
	# under tools/test.sh, which has put 2 MiB pages in the kernel's pool:
	# EAL takes them as it needs them, and a start costs no 4 KiB faults
	mem=(--in-memory)
	cmem="--in-memory"
elif [ "$smoke" -eq 1 ]; then
	mem=(--no-huge -m 1024)
	cmem="--no-huge -m 512"
else
	hp_reserve 640 "$tmp/huge" 512 || exit 1
	mem=(--huge-dir "$tmp/huge" --huge-unlink -m 1024)
	cmem="--huge-dir $tmp/huge --huge-unlink -m 512"
fi
eal=("${mem[@]}" --no-pci --log-level=error)

# the traffic: 1024 flows (IPv4 and IPv6, TCP and UDP; 255 sources per
# family), 4 packets each in the file: a TCP flow's SYN, SYN-ACK, ACK, data
pcap=$tmp/traffic.pcap
"$build/nftdp-gen" --flows 1024 --family 46 --proto tcp,udp --data 2 --size 64 \
	--src 10.0.0.1-10.0.0.255 --src6 2001:db8::1-2001:db8::ff --dport 5000 \
	--pcap-out "$pcap" --count 4096
/usr/bin/python3 "$here/gen_rulesets.py" "$tmp/rules" --elements "$elements"
vdev="net_pcap0,rx_pcap=$pcap,infinite_rx=1"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
loadavg() { cut -d' ' -f1 /proc/loadavg; }

# testpmd: the Rx-pps of every stats period but the first (a partial one)
run_testpmd() {
	local log=$tmp/testpmd.log
	timeout $((seconds + 90)) "$testpmd" -l 0,1 "${eal[@]}" --file-prefix "$pfx-t" \
		--vdev="$vdev" -- --forward-mode=io --port-topology=loop --nb-cores=1 \
		--total-num-mbufs=32768 --stats-period 1 --auto-start > "$log" 2>&1 &
	local p=$!
	pids+=("$p")
	# its EAL start takes seconds on a loaded machine: count from its
	# first stats period, as nftdp's rows count from the ruleset load
	for _ in $(seq 600); do
		grep -q 'Rx-pps' "$log" && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	sleep $((seconds + 1))
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
	sed -n 's/.*Rx-pps: *\([0-9]*\).*/\1/p' "$log" | tail -n +2 |
		awk '{ printf "%.4f\n", $1 / 1e6 }' | median
}

# nftdp: load the ruleset through the control socket, then the worker's rx
# rate of every stats period after that but the first; more arguments go
# to nftdp. The flow cache's hits and misses of the run go to $tmp/fc.
run_nftdp() {
	local rules=$1 log=$tmp/nftdp.log sock=$tmp/nl.sock
	shift
	rm -f "$sock" "$tmp/stats.json"
	echo "hits ? misses ?" > "$tmp/fc"
	timeout $((seconds + 300)) "$build/nftdp" -l 0,1 "${eal[@]}" --file-prefix "$pfx-n" \
		--vdev="$vdev" -- --socket "$sock" --workers 1 --stats-period 1 \
		--stats-json "$tmp/stats.json" "$@" > "$log" 2>&1 &
	local p=$!
	pids+=("$p")
	for _ in $(seq 300); do
		[ -S "$sock" ] && break
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	NFTDP_SOCKET=$sock timeout 200 "$build/nftdp-nft" -f "$rules" >&2 || {
		echo "nftdp: loading $rules failed" >&2
		kill "$p"
		echo 0
		return
	}
	local mark
	mark=$(wc -l < "$log")
	sleep $((seconds + 1))
	kill -INT "$p" 2>/dev/null || true
	wait "$p" || true
	[ -s "$tmp/stats.json" ] && /usr/bin/python3 -c '
import json, sys
fc = json.load(open(sys.argv[1])).get("flow_cache", {})
print("hits %s misses %s" % (fc.get("hits", "?"), fc.get("misses", "?")))' \
		"$tmp/stats.json" > "$tmp/fc" || true
	tail -n +$((mark + 1)) "$log" | sed -n 's/^nftdp: worker 0 .* rx *\([0-9.]*\) Mpps.*/\1/p' |
		tail -n +2 | median
}

names=(testpmd empty rules20 rules20-nocache sets100k stateful)
declare -A runs fcs
for r in $(seq "$repeat"); do
	for n in "${names[@]}"; do
		l=$(loadavg)
		fc=
		case $n in
		testpmd) v=$(run_testpmd) ;;
		rules20-nocache)
			v=$(run_nftdp "$tmp/rules/rules20.nft" --flow-cache 0)
			fc=$(cat "$tmp/fc") ;;
		*)
			v=$(run_nftdp "$tmp/rules/$n.nft")
			fc=$(cat "$tmp/fc") ;;
		esac
		echo "round $r $n: $v Mpps (load average before: $l)${fc:+, flow cache $fc}"
		loads="${loads:-} $l"
		runs[$n]="${runs[$n]:-} $v"
		fcs[$n]=$fc
	done
done

declare -A med
for n in "${names[@]}"; do
	med[$n]=$(tr ' ' '\n' <<< "${runs[$n]}" | grep . | median)
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "null" }'; }
echo
echo "| config | Mpps per worker core (median of $repeat) | ratio to testpmd | runs | flow cache (last run) |"
echo "|---|---|---|---|---|"
for n in "${names[@]}"; do
	echo "| $n | ${med[$n]} | $(ratio "${med[$n]}" "${med[testpmd]}") |${runs[$n]} | ${fcs[$n]:--} |"
done
echo "sets100k / rules20: $(ratio "${med[sets100k]}" "${med[rules20]}")"
echo "rules20 / rules20-nocache: $(ratio "${med[rules20]}" "${med[rules20-nocache]}")"

fail=0
for n in "${names[@]}"; do
	awk -v v="${med[$n]}" 'BEGIN { exit !(v > 0) }' || { echo "FAIL: no rate for $n"; fail=1; }
done

"$here/commit.sh" "$build" "$tmp/commit" "$commit_s" "$commit_rate" "$cmem" || fail=1

if [ "$record" -eq 1 ]; then
	out=$root/bench/results
	{
		echo '{"title": "nftdp dataplane, 64-byte frames, 1024 flows, one worker core",'
		printf ' "configs": ['
		sep=
		for n in "${names[@]}"; do
			case $n in
			empty) t='target >= 90%' ;; rules20) t='target >= 70%' ;;
			stateful) t='target >= 50%' ;;
			rules20-nocache) t='rules20 without the flow cache' ;;
			sets100k) t='within 10% of rules20' ;; *) t='ceiling' ;;
			esac
			# the last run's flow cache counts, null for testpmd
			fcj=null
			if [[ ${fcs[$n]:-} =~ ^hits\ ([0-9]+)\ misses\ ([0-9]+)$ ]]; then
				fcj="{\"hits\": ${BASH_REMATCH[1]}, \"misses\": ${BASH_REMATCH[2]}}"
			fi
			printf '%s\n  {"name": "%s", "mpps": %s, "ratio": %s, "target": "%s", "runs": [%s], "flow_cache": %s}' \
				"$sep" "$n" "${med[$n]}" "$(ratio "${med[$n]}" "${med[testpmd]}")" "$t" \
				"$(tr ' ' '\n' <<< "${runs[$n]}" | grep . | paste -sd,)" "$fcj"
			sep=,
		done
		printf '\n ],\n "load_average_before_runs": [%s]}\n' "$(tr ' ' '\n' <<< "$loads" | grep . | paste -sd,)"
	} > "$out/dataplane.json"
	/usr/bin/python3 "$here/plot.py" "$out/dataplane.json" "$out/dataplane.svg"
	echo "recorded $out/dataplane.json and $out/dataplane.svg"
fi
exit "$fail"
