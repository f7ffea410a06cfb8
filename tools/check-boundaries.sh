#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Module boundaries (docs/architecture.md): each module (a top-level folder
# with a meson.build, but tests/, bench/ and tools/) exports include/ only;
# everything else in its folder is private. Fails, naming each place, when
# outside tests/ and bench/:
#   - a C file includes a header outside its own module by a path
#     ("../vm/vm_priv.h"), or by name a header private to another module;
#   - a meson.build uses a *_test_dep (tests only: internals) other than to
#     declare its own module's, or puts another module's folder, or a module
#     folder from the root, on an include path (or passes -I at all).
# The include paths already make such an include fail to compile; this
# catches the paths and deps that would let one through.
# Usage: check-boundaries.sh [SOURCE_ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

modules=()
for f in */meson.build; do
	d=${f%/meson.build}
	case $d in tests | bench | tools | build*) ;; *) modules+=("$d") ;; esac
done
status=0
bad() {
	echo "check-boundaries: $*" >&2
	status=1
}
# the top-level folder of a path relative to the root ("." for the root)
top() {
	local p
	p=$(realpath -m --relative-to=. "$1")
	case $p in */*) echo "${p%%/*}" ;; *) [ -d "$p" ] && echo "$p" || echo . ;; esac
}
is_module() {
	local m
	for m in "${modules[@]}"; do [ "$m" = "$1" ] && return 0; done
	return 1
}

# C sources and headers outside tests/ and bench/
while IFS=: read -r f line text; do
	[[ $text =~ ^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]*)\" ]] || continue
	inc=${BASH_REMATCH[1]}
	case $f in */*) own=${f%%/*} ;; *) own=. ;; esac
	case $inc in
	*/*)
		t=$(top "$(dirname "$f")/$inc")
		[ "$t" = "$own" ] || bad "$f:$line: includes \"$inc\", outside $own/"
		;;
	*)
		[ -e "$(dirname "$f")/$inc" ] && continue
		for m in "${modules[@]}"; do
			[ "$m" != "$own" ] && [ -e "$m/$inc" ] &&
				bad "$f:$line: includes \"$inc\", private to $m/"
		done
		;;
	esac
done < <(find . \( -path './build*' -o -path './.*' -o -path ./tests -o -path ./bench \) -prune \
	-o \( -name '*.c' -o -name '*.h' \) -type f -print |
	sed 's|^\./||' | sort | xargs -r grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"')

# meson.build files outside tests/ and bench/
while read -r f; do
	dir=$(dirname "$f")
	own=$(top "$dir/x")
	n=0
	while IFS= read -r text; do
		n=$((n + 1))
		text=${text%%#*}
		if [[ $text =~ [A-Za-z0-9_]*_test_dep ]]; then
			name=${BASH_REMATCH[0]}
			if ! [[ $text =~ ^${name}\ =\ declare_dependency ]] || ! is_module "$own" ||
				[ "$dir" != "$own" ]; then
				bad "$f:$n: uses $name (tests only: internals)"
			fi
		fi
		[[ $text == *\'-I* ]] && bad "$f:$n: an include path in compiler arguments"
		[[ $text == *include_directories\(* ]] || continue
		args=${text#*include_directories(}
		args=${args%%)*}
		while [[ $args =~ \'([^\']*)\' ]]; do
			p=${BASH_REMATCH[1]}
			args=${args#*"'$p'"}
			t=$(top "$dir/$p/x")
			if [ "$own" = . ]; then
				is_module "$t" && bad "$f:$n: include path '$p' into $t/"
			elif [ "$t" != "$own" ]; then
				bad "$f:$n: include path '$p' outside $own/"
			fi
		done
	done <"$f"
done < <(find . \( -path './build*' -o -path './.*' -o -path ./tests -o -path ./bench \) -prune \
	-o -name meson.build -type f -print | sed 's|^\./||' | sort)

[ $status = 0 ] && echo "check-boundaries: ${#modules[@]} modules, no private include across"
exit $status
