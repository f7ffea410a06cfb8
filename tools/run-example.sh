#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The main job on its embedded default: install what is missing, build,
# start the daemon on null vdevs (no NIC, no hugepages), load the shipped
# edge-firewall ruleset through the stock nft and list it back.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
ruleset=${1:-docs/examples/edge-firewall.nft}
dir=$(mktemp -d /tmp/nftdp-example.XXXXXX)
build/nftdp --no-huge -m 512 --no-pci --vdev=net_null0 --vdev=net_null1 \
	--file-prefix "nftdp-example-$$" --log-level=lib.*:warning -- \
	--socket "$dir/nl.sock" --ruleset "$ruleset" &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT
for _ in $(seq 100); do
	[ -S "$dir/nl.sock" ] && NFTDP_SOCKET="$dir/nl.sock" timeout 5 build/nftdp-nft list tables \
		>/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { echo "nftdp exited" >&2; exit 1; }
	sleep 0.1
done
# --ruleset loads before the daemon serves other clients; wait for it
for _ in $(seq 100); do
	out=$(NFTDP_SOCKET="$dir/nl.sock" timeout 5 build/nftdp-nft -a list ruleset)
	[ -n "$out" ] && break
	sleep 0.1
done
echo "# nftdp: ruleset $ruleset as the daemon holds it (nft -a list ruleset)"
echo "$out"
