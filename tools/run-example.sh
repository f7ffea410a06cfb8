#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job: replay a capture offline through a ruleset and show what the
# ruleset did with it. Installs what is missing, builds, then runs
#   build/nftdp -l 0-1 --no-huge -m 512 --no-pci \
#     --vdev=net_pcap0,rx_pcap=IN,tx_pcap=OUT -- \
#     --ruleset RULES --exit-on-idle 500 --listing AFTER
# and prints the listing with its counters and a summary of --stats-json.
# A run leaves nothing behind: EAL's runtime folder (/var/run/dpdk/PREFIX) is
# removed on exit (EAL's --in-memory, which would keep none, refuses --no-huge).
# Run as root (tools/deps.sh installs with apt-get, no sudo).
# usage: tools/run-example.sh [RULESET [CAPTURE]]
#   (default: docs/examples/edge-firewall.nft and edge-firewall.pcap)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
ruleset=${1:-docs/examples/edge-firewall.nft}
capture=${2:-docs/examples/edge-firewall.pcap}
[ -f "$capture" ] || /usr/bin/python3 docs/examples/make-capture.py "$capture" >/dev/null
dir=$(mktemp -d /tmp/nftdp-example.XXXXXX)
prefix=nftdp-example-$$
runtime=${XDG_RUNTIME_DIR:-/var/run}/dpdk
[ "$(id -u)" -eq 0 ] && runtime=/var/run/dpdk
trap 'rm -rf "$dir" "$runtime/$prefix"; rmdir "$runtime" 2>/dev/null || true' EXIT
timeout 120 build/nftdp -l 0-1 --no-huge -m 512 --no-pci \
	--vdev="net_pcap0,rx_pcap=$capture,tx_pcap=$dir/out.pcap" \
	--file-prefix "$prefix" --log-level=lib.*:warning -- \
	--socket "$dir/nl.sock" --ruleset "$ruleset" --exit-on-idle 500 \
	--listing "$dir/after.nft" --stats-json "$dir/stats.json" >"$dir/log" 2>&1 || {
	cat "$dir/log" >&2
	echo "nftdp failed" >&2
	exit 1
}
echo "# nftdp: $capture through $ruleset (nft list ruleset afterwards, with counters)"
cat "$dir/after.nft"
echo
echo "# summary (--stats-json)"
/usr/bin/python3 - "$dir/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
p = s['packets']
print('received %d, sent %d: accepted %d, dropped by rules %d, rejected %d, '
      'dropped before the rules %d' % (p['rx'], p['tx'], p['accepted'], p['dropped'],
                                       p['rejected'], p['dropped_before_rules']))
for hook, v in s['hooks'].items():
    if any(v[k] for k in ('drop', 'reject', 'stolen', 'queue')):
        print('  %-14s accepted %d, dropped %d, rejected %d' % (hook, v['accept'], v['drop'],
                                                              v['reject']))
for why, n in s['drops'].items():
    if n:
        print('  before the rules: %-13s %d' % (why, n))
PY
