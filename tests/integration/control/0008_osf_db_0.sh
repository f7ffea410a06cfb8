#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# osf: the fingerprint database through NFNL_SUBSYS_OSF (osf_db.py sends
# what nfnl_osf sends: add, add again with NLM_F_EXCL (EEXIST), add
# without NLM_F_CREATE (EINVAL), remove, remove again (ENOENT), add; a
# short record ERANGE), and osf rules load and list. The kernel's database
# is global, so this runs against nftdp only.
set -u
BUILD=${1:?build dir}
[ "$(id -u)" -eq 0 ] || exit 77
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/nftdp-osf-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp" "/var/run/dpdk/nftdp-osf-$$" # the EAL leaves its runtime folder
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -5 "$tmp/daemon.log"; exit 1; }
"$BUILD/nftdp" --no-huge -m 512 --no-pci --vdev=net_null0 --file-prefix "nftdp-osf-$$" \
	--log-level=lib.*:error -- --socket "$tmp/nl.sock" > "$tmp/daemon.log" 2>&1 &
pid=$!
for _ in $(seq 200); do [ -S "$tmp/nl.sock" ] && break; sleep 0.05; done
[ -S "$tmp/nl.sock" ] || fail "daemon did not start"
export NFTDP_SOCKET=$tmp/nl.sock
nft() { timeout 60 "$BUILD/nftdp-nft" "$@"; }
shim=$(sed -n 's/^preload="\(.*\)"$/\1/p' "$BUILD/nftdp-nft")
[ -r "$shim" ] || fail "no shim at '$shim'"
out=$(LD_PRELOAD=$shim timeout 30 python3 "$HERE/osf_db.py") || fail "osf_db.py: $out"
[ "$out" = "$(printf '0 17 22 0 2 0\n34')" ] || fail "OSF_MSG_ADD/REMOVE answers: $out"
nft add table ip t || fail "add table"
nft add chain ip t c '{ type filter hook prerouting priority 0; }' || fail "add chain"
nft add rule ip t c osf name "Linux" counter || fail "osf name"
nft add rule ip t c osf ttl skip version \"Linux:3.11\" counter || fail "osf version"
n=$(nft list chain ip t c | grep -c 'osf')
[ "$n" -eq 2 ] || fail "listed $n osf rules, want 2"
kill -0 "$pid" || fail "daemon died"
echo "1 passed, 0 failed"
