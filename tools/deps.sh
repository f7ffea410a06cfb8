#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install every Debian package nftdp's build, tests and benchmarks need.
# Quick when everything is present: it asks dpkg first and calls apt only
# for what is missing.
set -euo pipefail
pkgs=(meson ninja-build pkg-config gcc clang clang-format libclang-rt-14-dev
      libdpdk-dev dpdk dpdk-dev libmnl-dev libnftnl-dev nftables libcmocka-dev
      libbpf-dev libxdp-dev libpcap-dev python3 python3-scapy tcpreplay
      conntrack conntrackd iproute2 ethtool jq procps util-linux bc gdb libcap2-bin
      iptables bird2 tcpdump ipset)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}" >&2
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
