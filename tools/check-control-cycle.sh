#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The call graph of control/'s files, from the symbols each object of the
# archive defines and uses (nm): fails when the files call each other in a
# cycle, or when one obj_*.c file calls another (they share state.c and
# dump.c instead, docs/control.md). server.c's up-calls go through the
# callback table ctl.c gives it (struct ctl_server_ops), not by name.
# Usage: check-control-cycle.sh build/control/libnftdp_control.a [-v]
set -eu
lib=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "archive:member.c.o:address T symbol" / "archive:member.c.o:   U symbol";
# a thin archive names its members by path: the file is the last part
file='split($1, p, ":"); n = split(p[2], q, "/"); f = q[n]; sub(/\.c\.o$/, "", f)'
nm -A --defined-only "$lib" | awk "\$2 ~ /^[TDBRCVW]\$/ { $file; print \$3, f }" |
	sort -u >"$tmp/defs"
nm -A -u "$lib" | awk "{ $file; print \$3, f }" | sort -u >"$tmp/uses"
if [ ! -s "$tmp/defs" ]; then
	echo "check-control-cycle: no symbols read from $lib" >&2
	exit 1
fi
# "user definer symbol" for every use of another file's symbol
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/calls"
awk '{ print $1, $2 }' "$tmp/calls" | sort -u >"$tmp/edges"
[ "${2:-}" = -v ] && cat "$tmp/calls"

status=0
if awk '$1 ~ /^obj_/ && $2 ~ /^obj_/' "$tmp/calls" | grep .; then
	echo "check-control-cycle: an object file calls another (above)" >&2
	status=1
fi
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
	cat "$tmp/loop" >&2
	echo "check-control-cycle: control/'s files call each other in a cycle" >&2
	status=1
fi
exit $status
