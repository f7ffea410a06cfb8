#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Where a forwarded packet's cycles go besides instructions: cachegrind's
# cache and branch simulation (--cache-sim=yes --branch-sim=yes) of the
# whole process, dpdk-testpmd io forwarding against nftdp, on the same
# traffic and vdev as run.sh (net_pcap, infinite_rx=1, tx into the drop).
#
# Each configuration runs twice under cachegrind, SHORT and LONG seconds
# of traffic (SIGINT ends it), and the figures per packet are the
# differences of the two runs' totals over the difference of their packet
# counts: the start (EAL, the ruleset load) and the exit cancel out, the
# forwarding loop stays, PMD rx and tx included. testpmd is stripped, so
# nothing narrower than the whole process can be selected there (its main
# thread sleeps meanwhile); nftdp runs under callgrind's simulation with
# only its worker collected (nftdp_dp_worker_main: its polls, rx, the
# pipeline, tx), which keeps the control thread's work out.
#
# Rows: instructions (I), first-level data misses (D1mr reads, D1mw
# writes), last-level data misses (DLmr + DLmw), conditional branch
# mispredicts (Bcm) and indirect ones (Bim), each a packet. The cache
# model is valgrind's (no hardware prefetcher): a miss here is a miss the
# code does nothing against; compare the two programs, not absolutes.
#
# usage: cachesim.sh [--build DIR] [--short S] [--long S] [--flows N] [CONFIG...]
# CONFIG: testpmd, empty, rules20, rules20-nocache (default: testpmd empty
# rules20). Needs root, valgrind, dpdk-testpmd.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build short=20 long=60 flows=1024
configs=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--short) short=$2; shift ;;
	--long) long=$2; shift ;;
	--flows) flows=$2; shift ;;
	-*) echo "usage: $0 [--build DIR] [--short S] [--long S] [--flows N] [CONFIG...]" >&2; exit 2 ;;
	*) configs+=("$1") ;;
	esac
	shift
done
[ ${#configs[@]} -gt 0 ] || configs=(testpmd empty rules20)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing"; exit 77; }
testpmd=$(command -v dpdk-testpmd || true)
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done

tmp=$(mktemp -d /tmp/nftdp-bench-cs.XXXXXX)
pfx="nftdp-bcs-$$"
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2> /dev/null || true
	[ -z "$pid" ] || wait "$pid" 2> /dev/null || true
	rm -rf "$tmp" /var/run/dpdk/"$pfx"-*
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# run.sh's traffic: FLOWS flows, 4 packets each in the file
"$build/nftdp-gen" --no-huge -m 128 --no-pci --log-level=error --file-prefix "$pfx-g" -- \
	--flows "$flows" --family 46 --proto tcp,udp --data 2 --size 64 \
	--src 10.0.0.1-10.0.0.255 --src6 2001:db8::1-2001:db8::ff --dport 5000 \
	--pcap-out "$tmp/traffic.pcap" --count $((flows * 4)) > /dev/null
/usr/bin/python3 "$here/gen_rulesets.py" "$tmp/rules" --elements 4
vdev="net_pcap0,rx_pcap=$tmp/traffic.pcap,infinite_rx=1"
eal=(-l 0,1 --no-huge -m 1024 --no-pci --log-level=error --vdev="$vdev")

# one run of CONFIG for S seconds of traffic; prints "packets I D1mr D1mw
# DLm Bcm Bim" (process totals)
one() {
	local cfg=$1 s=$2 out=$tmp/cg.$1.$2 log=$tmp/log.$1.$2 pk args=()
	rm -f "$out" "$tmp/stats.json"
	if [ "$cfg" = testpmd ]; then
		[ -n "$testpmd" ] || { echo "0"; return; }
		valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
			--cachegrind-out-file="$out" "$testpmd" "${eal[@]}" --file-prefix "$pfx-t" -- \
			--forward-mode=io --port-topology=loop --nb-cores=1 \
			--total-num-mbufs=32768 --auto-start --stats-period 1000 > "$log" 2>&1 < /dev/null &
	else
		case $cfg in *-nocache) cfg=${cfg%-nocache}; args=(--flow-cache 0) ;; esac
		[ "$cfg" = empty ] || args+=(--ruleset "$tmp/rules/$cfg.nft")
		# the worker's polls only: the control thread's work (which
		# valgrind runs on the same simulated caches) stays out
		valgrind --tool=callgrind --cache-sim=yes --branch-sim=yes \
			--toggle-collect=nftdp_dp_worker_main \
			--callgrind-out-file="$out" "$build/nftdp" "${eal[@]}" --file-prefix "$pfx-n" -- \
			--socket "$tmp/nl.sock" "${args[@]}" --workers 1 \
			--stats-json "$tmp/stats.json" > "$log" 2>&1 &
	fi
	pid=$!
	# count from the first forwarded packets: the start under valgrind is
	# long (testpmd: a stats period longer than any run, so that it waits
	# for the signal, not for stdin)
	for _ in $(seq 6000); do
		grep -q -e 'automatic packet forwarding' -e ' mode$' "$log" 2> /dev/null && break
		kill -0 "$pid" 2> /dev/null || break
		sleep 0.1
	done
	sleep "$s"
	kill -INT "$pid" 2> /dev/null || true
	wait "$pid" || true
	pid=
	if [ "$cfg" = testpmd ]; then
		pk=$(sed -n 's/.*RX-packets: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	else
		pk=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["rx"])' \
			"$tmp/stats.json" 2> /dev/null || echo 0)
	fi
	/usr/bin/python3 - "$out" "${pk:-0}" << 'EOF'
import sys
ev = summ = None
try:
    for line in open(sys.argv[1]):
        if line.startswith("events:"):
            ev = line.split()[1:]
        elif line.startswith("summary:") or line.startswith("totals:"):
            summ = [int(x) for x in line.split()[1:]]
except OSError:
    pass
if not ev or not summ:
    print("0")
    sys.exit()
v = dict(zip(ev, summ))
g = lambda k: v.get(k, 0)
print(sys.argv[2], g("Ir"), g("D1mr"), g("D1mw"), g("DLmr") + g("DLmw"), g("Bcm"), g("Bim"))
EOF
}

echo "| config | packets | I | D1mr | D1mw | DLm | Bcm | Bim |"
echo "|---|---|---|---|---|---|---|---|"
for c in "${configs[@]}"; do
	read -r -a a < <(one "$c" "$short")
	read -r -a b < <(one "$c" "$long")
	if [ "${#a[@]}" -lt 7 ] || [ "${#b[@]}" -lt 7 ] || [ "${b[0]}" -le "${a[0]}" ]; then
		echo "| $c | failed | | | | | | |"
		continue
	fi
	awk -v c="$c" -v a="${a[*]}" -v b="${b[*]}" 'BEGIN {
		split(a, x, " "); split(b, y, " "); p = y[1] - x[1]
		printf "| %s | %d | %.1f | %.2f | %.2f | %.3f | %.2f | %.3f |\n", c, p,
			(y[2] - x[2]) / p, (y[3] - x[3]) / p, (y[4] - x[4]) / p,
			(y[5] - x[5]) / p, (y[6] - x[6]) / p, (y[7] - x[7]) / p }'
done
