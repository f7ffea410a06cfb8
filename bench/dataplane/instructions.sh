#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per packet of nftdp's packet path (nftdp_dp_pipeline_burst:
# everything between the rx burst and the tx burst, the PMD's own rx/tx
# excluded), counted by callgrind over an offline replay. Unlike Mpps on
# the shared 2-core machine, the count does not move with the load: this
# is the figure to compare before and after a change.
#
# Traffic: the dataplane benchmark's (run.sh): FLOWS flows (default 1024),
# IPv4 and IPv6, TCP and UDP, 64-byte frames; PACKETS of them (TCP flows
# repeat their SYN, SYN-ACK, ACK, data rounds). With the defaults a flow
# has 20 packets, so the per-flow cache's first packets weigh: --flows 256
# (80 packets a flow) is nearer a long-running link.
# Rulesets (CONFIG-nocache: the same with --flow-cache 0):
#   empty     no ruleset
#   rules20   run.sh's 20-rule stateless forward chain with sets
#   stateful  gen_rulesets.py's: a forward chain, policy drop: ct state
#             established,related accept, ct state invalid drop, then the
#             same 20 checks and ct state new accept
#   nat       stateful plus snat of 10.0.0.0/8 in postrouting
#
# --router: nftdp with --router (the kernel's forwarding step: TTL, martians);
# --route: with --route too, in a scratch netns whose port dp0 has default
# routes (both families) via a gateway with a permanent neighbour, as
# bench/route/forward.sh's small table: a route lookup and MAC rewrite per
# packet on top (docs/dataplane.md "Router mode: --route").
#
# usage: instructions.sh [--build DIR] [--packets N] [--flows N] [--router | --route]
#                        [CONFIG...]
# Prints a table; never fails on a figure. Needs root and valgrind.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$root/build packets=20480 flows=1024 mode=wire
configs=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift ;;
	--packets) packets=$2; shift ;;
	--flows) flows=$2; shift ;;
	--router) mode=router ;;
	--route) mode=route ;;
	-*) echo "usage: $0 [--build DIR] [--packets N] [--flows N] [--router | --route]" \
		"[CONFIG...]" >&2; exit 2 ;;
	*) configs+=("$1") ;;
	esac
	shift
done
[ ${#configs[@]} -gt 0 ] || configs=(empty rules20 stateful nat)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v valgrind > /dev/null || { echo "SKIP: valgrind missing (Debian package valgrind)"; exit 77; }
for b in nftdp nftdp-gen; do
	[ -x "$build/$b" ] || { echo "SKIP: $build/$b missing"; exit 77; }
done

tmp=$(mktemp -d /tmp/nftdp-bench-ins.XXXXXX)
pfx="nftdp-bins-$$"
ns=nftdp-bins-$$
trap 'ip netns del "$ns" 2> /dev/null || true; rm -rf "$tmp" /var/run/dpdk/"$pfx"-*' EXIT
trap 'exit 1' INT TERM HUP
run=() mode_args=()
case $mode in
router) mode_args=(--router) ;;
route)
	# the traffic's destinations (10.1.0.1, 2001:db8:1::1) and sources
	# by the default routes out of dp0, port 0's name
	ip netns add "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" link add dp0 type veth peer name p0
	for d in dp0 p0; do ip -n "$ns" link set "$d" up; done
	ip -n "$ns" addr add 10.9.0.1/24 dev dp0
	ip -n "$ns" addr add 2001:db8:ff09::1/64 dev dp0 nodad
	ip -n "$ns" neigh replace 10.9.0.2 lladdr 02:00:00:00:09:02 dev dp0 nud permanent
	ip -n "$ns" neigh replace 2001:db8:ff09::2 lladdr 02:00:00:00:09:02 dev dp0 nud permanent
	ip -n "$ns" route add default via 10.9.0.2 dev dp0
	ip -n "$ns" route add default via 2001:db8:ff09::2 dev dp0
	run=(ip netns exec "$ns")
	mode_args=(--route) ;;
esac

"$build/nftdp-gen" --no-huge -m 128 --no-pci --log-level=error --file-prefix "$pfx-g" -- \
	--flows "$flows" --family 46 --proto tcp,udp --data 2 --size 64 \
	--src 10.0.0.1-10.0.0.255 --src6 2001:db8::1-2001:db8::ff --dport 5000 \
	--pcap-out "$tmp/traffic.pcap" --count "$packets" > /dev/null
/usr/bin/python3 "$here/gen_rulesets.py" "$tmp/rules" --elements 4
{
	cat "$tmp/rules/stateful.nft"
	printf 'table ip nat {\n\tchain post {\n\t\ttype nat hook postrouting priority srcnat; policy accept;\n'
	printf '\t\tip saddr 10.0.0.0/8 snat to 192.0.2.1-192.0.2.254\n\t}\n}\n'
} > "$tmp/rules/nat.nft"

# one replay under callgrind; prints "instructions packets hit%"
count() {
	local cfg=$1 args=()
	# CONFIG-nocache: the same without the per-flow verdict cache
	case $cfg in *-nocache) cfg=${cfg%-nocache}; args=(--flow-cache 0) ;; esac
	[ "$cfg" = empty ] || args+=(--ruleset "$tmp/rules/$cfg.nft")
	rm -f "$tmp/cg" "$tmp/stats.json"
	"${run[@]}" timeout 900 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
		--toggle-collect=nftdp_dp_pipeline_burst \
		"$build/nftdp" -l 0,1 --no-huge -m 512 --no-pci --log-level=error \
		--file-prefix "$pfx-n" --vdev="net_pcap0,rx_pcap=$tmp/traffic.pcap" -- \
		--socket "$tmp/nl.sock" "${args[@]}" "${mode_args[@]}" --workers 1 --exit-on-idle 1000 \
		--stats-json "$tmp/stats.json" > "$tmp/$cfg.log" 2>&1 ||
		{ echo "0 0 -"; return; }
	local ins pk hit
	ins=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$tmp/cg")
	pk=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["rx"])' \
		"$tmp/stats.json" 2> /dev/null || echo 0)
	hit=$(/usr/bin/python3 -c '
import json, sys
f = json.load(open(sys.argv[1])).get("flow_cache", {})
n = f.get("hits", 0) + f.get("misses", 0)
print("%.0f" % (100.0 * f["hits"] / n) if n else "-")' "$tmp/stats.json" 2> /dev/null || echo -)
	echo "${ins:-0} $pk $hit"
}

[ "$mode" = wire ] || echo "mode: --$mode"
echo "| config | instructions per packet | packets | flow cache hits % |"
echo "|---|---|---|---|"
for c in "${configs[@]}"; do
	read -r ins pk hit < <(count "$c")
	awk -v c="$c" -v i="$ins" -v p="$pk" -v h="$hit" \
		'BEGIN { if (p > 0) printf "| %s | %.0f | %d | %s |\n", c, i / p, p, h; else printf "| %s | failed | 0 | - |\n", c }'
done
