#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# meson install: put the example config at $1 unless one is there already
# (a reinstall never overwrites the admin's settings).
set -eu
dst="${DESTDIR:-}$1"
src="$2"
if [ -e "$dst" ]; then
	echo "nftdp: keeping $dst"
	exit 0
fi
mkdir -p "$(dirname "$dst")"
install -m 0644 "$src" "$dst"
