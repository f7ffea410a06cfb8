#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what is missing, build, and run every test: the whole suite on the
# normal build, then the unit tests again under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
meson test -C build --print-errorlogs --num-processes 2
[ -f build-asan/build.ninja ] ||
	meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-asan
meson test -C build-asan --suite unit --print-errorlogs --num-processes 2
