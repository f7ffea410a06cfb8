#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Route-table rebuild cost at N4 IPv4 and N6 IPv6 routes (bench/results/route.md):
# a scratch netns with two veth devices and that many routes, bench_route in it.
# usage: bench/route/run.sh BUILD_DIR N4 [N6]   (root)
set -eu
build=$1 n4=$2 n6=${3:-0}
ns=nftdp-bench-route-$$
tmp=$(mktemp -d)
trap 'ip netns del $ns 2>/dev/null; rm -rf "$tmp"' EXIT
ip netns add $ns
ip -n $ns link add dp0 type veth peer name p0
ip -n $ns link add dp1 type veth peer name p1
for d in dp0 p0 dp1 p1; do ip -n $ns link set $d up; done
ip -n $ns addr add 10.255.0.1/16 dev dp0
python3 - "$n4" "$n6" >"$tmp/batch" <<'PY'
import sys
n4, n6 = int(sys.argv[1]), int(sys.argv[2])
for i in range(n4):
    print('route add %d.%d.%d.0/24 dev dp%d' % (11 + (i >> 16), (i >> 8) & 255, i & 255, i & 1))
for i in range(n6):
    print('route add 2001:db8:%x:%x::/64 dev dp%d' % (i >> 16, i & 0xffff, i & 1))
PY
timeout 600 ip -n $ns -batch "$tmp/batch"
timeout 600 ip netns exec $ns "$build/bench/route/bench_route" 5
