#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Commits during traffic lose and misclassify nothing.
#
# nftdp-gen (memif client) sends known flows at a fixed rate into nftdp's
# port 0 and counts what leaves port 1 by protocol and destination port;
# nftdp runs bench/dataplane's commit.nft (drops UDP to 5001 and TCP to
# 5003). While the traffic runs, a loop commits every 100 ms through the
# control socket: it inserts a rule at the head of the forward chain and
# deletes it again, so every other generation has a different chain. At
# the end tests/integration/vnf/check_counts.py requires exact counts:
# every class that passes arrives as often as it was sent, the dropped ones
# never, nftdp's totals and the drop rules' counters agree.
#
# usage: commit.sh BUILD_DIR OUTDIR SECONDS RATE_MPPS "EAL MEMORY ARGS"
# prints one line "commit: N commits ... PASS|FAIL"; exit 1 on FAIL.
set -euo pipefail

build=$1 out=$2 seconds=$3 rate=$4
read -r -a mem <<< "$5"
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pfx="nftdp-bcommit-$$"
count=$(awk -v s="$seconds" -v r="$rate" 'BEGIN { printf "%d", s * r * 1e6 }')
mkdir -p "$out"
pids=()
cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "/var/run/dpdk/$pfx-d" "/var/run/dpdk/$pfx-g" "$out/m0.sock" "$out/m1.sock"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

/usr/bin/python3 "$here/gen_rulesets.py" "$out/rules" --elements 4
eal=("${mem[@]}" --no-pci --log-level=error)
m0="socket=$out/m0.sock,rsize=13"
m1="socket=$out/m1.sock,rsize=13"
nft() { NFTDP_SOCKET="$out/nl.sock" timeout 20 "$build/nftdp-nft" "$@"; }

timeout $((seconds + 120)) "$build/nftdp" -l 0,1 "${eal[@]}" --file-prefix "$pfx-d" \
	--vdev="net_memif0,role=server,$m0" --vdev="net_memif1,role=server,$m1" -- \
	--socket "$out/nl.sock" --ruleset "$out/rules/commit.nft" --wire 0:1 --workers 1 \
	--stats-json "$out/commit-stats.json" > "$out/commit-nftdp.log" 2>&1 &
dpid=$!
pids+=("$dpid")
for _ in $(seq 300); do
	[ -S "$out/nl.sock" ] && nft list table inet commit > /dev/null 2>&1 && break
	kill -0 "$dpid" 2>/dev/null || { cat "$out/commit-nftdp.log"; exit 1; }
	sleep 0.1
done

timeout $((seconds + 60)) "$build/nftdp-gen" -l 0 "${eal[@]}" --file-prefix "$pfx-g" \
	--vdev="net_memif0,role=client,$m0" --vdev="net_memif1,role=client,$m1" -- \
	--tx-port 0 --rx-port 1 --flows 4096 --family 46 --proto tcp,udp,icmp --data 2 \
	--size 64 --src 10.0.0.1-10.0.3.255 --dport 5000-5003 --count "$count" --rate "$rate" \
	--drain-ms 500 --link-wait-ms 10000 --linger-ms 60000 --json "$out/commit-gen.json" \
	> "$out/commit-gen.log" 2>&1 &
gpid=$!
pids+=("$gpid")

# one commit every 100 ms while the generator runs: insert at the head,
# then delete it by the handle that nft echoes
commits=0 failed=0 handle=
: > "$out/commit-times"
next=$(date +%s%N)
while [ ! -f "$out/commit-gen.json" ] && kill -0 "$gpid" 2>/dev/null; do
	if [ -z "$handle" ]; then
		line=$(nft -e -a insert rule inet commit forward ip daddr 192.0.2.1 counter drop 2>&1) ||
			failed=$((failed + 1))
		handle=$(sed -n 's/.*# handle \([0-9]*\).*/\1/p' <<< "$line")
		[ -n "$handle" ] || failed=$((failed + 1))
	else
		nft delete rule inet commit forward handle "$handle" || failed=$((failed + 1))
		handle=
	fi
	commits=$((commits + 1))
	date +%s%N >> "$out/commit-times"
	next=$((next + 100000000))
	now=$(date +%s%N)
	[ "$now" -lt "$next" ] && sleep "$(awk -v d=$((next - now)) 'BEGIN { printf "%.3f", d / 1e9 }')"
done
# the generator lingers with its ports unpolled, so nftdp stops first (a
# memif side polling while its peer disconnects can fault)
nft -j list ruleset > "$out/commit-list.json" || true
kill -TERM "$dpid"
drc=0
wait "$dpid" || drc=$?
kill -TERM "$gpid" 2>/dev/null || true
grc=0
wait "$gpid" || grc=$?
[ "$grc" -eq 0 ] && [ -f "$out/commit-gen.json" ] ||
	{ echo "commit: nftdp-gen failed ($grc)"; cat "$out/commit-gen.log"; exit 1; }
[ "$drc" -eq 0 ] || { echo "commit: nftdp exited with $drc"; cat "$out/commit-nftdp.log"; exit 1; }

# commits inside the generator's tx window, and the largest gap between them
during=$(/usr/bin/python3 - "$out/commit-gen.json" "$out/commit-times" <<'EOF'
import json, sys
g = json.load(open(sys.argv[1]))
t0 = g["tx_start_ns"]
t1 = t0 + int(g["tx_seconds"] * 1e9)
ts = [int(x) for x in open(sys.argv[2]) if t0 <= int(x) <= t1]
gaps = [b - a for a, b in zip(ts, ts[1:])]
print(f"{len(ts)} during the {g['tx_seconds']:.2f} s of traffic, "
      f"largest gap {max(gaps) / 1e6 if gaps else 0:.0f} ms")
EOF
)
res=0
check=$(/usr/bin/python3 "$root/tests/integration/vnf/check_counts.py" "$out/commit-gen.json" \
	"$out/commit-stats.json" --count "$count" --drop udp:5001 --drop tcp:5003 \
	--listing "$out/commit-list.json") || res=1
[ "$failed" -eq 0 ] || res=1
echo "commit: $commits commits ($failed failed), $during; ${seconds}s at $rate Mpps: $check"
[ "$res" -eq 0 ] && echo "commit: PASS" || { echo "commit: FAIL"; exit 1; }
