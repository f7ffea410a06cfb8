#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every C source and header git tracks is formatted as .clang-format says.
#   tools/check-format.sh          fail (exit 1) naming each file that differs
#   tools/check-format.sh --fix    format them in place
# clang-format 14 (Debian 12's); another version may format differently.
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format || true)
[ -n "$cf" ] || { echo "SKIP: clang-format missing (Debian package clang-format)"; exit 77; }
mapfile -t files < <(git ls-files '*.c' '*.h')
if [ "${1:-}" = --fix ]; then
	"$cf" -i "${files[@]}"
	exit 0
fi
bad=0
for f in "${files[@]}"; do
	if ! "$cf" --dry-run -Werror "$f" > /dev/null 2>&1; then
		echo "not formatted: $f (tools/check-format.sh --fix)"
		bad=1
	fi
done
[ "$bad" -eq 0 ] && echo "format: ${#files[@]} files as .clang-format says"
exit "$bad"
