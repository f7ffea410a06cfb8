# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Sourced by the bench scripts and tools/test.sh: add 2 MB hugepages to the
# kernel's pool for one run, and give back exactly what was added.
#
#   hp_reserve N [DIR [MIN]]  nr_hugepages += N and, with DIR, a private
#                             hugetlbfs mounted on DIR (EAL's --huge-dir);
#                             without DIR, EAL finds the pages through the
#                             system's own mount (--in-memory). Fails
#                             unless at least MIN (default N) came.
#   hp_restore                unmount, and take back the pages added (not
#                             a saved total: what another user of the pool
#                             added meanwhile stays); call it from the EXIT
#                             trap; safe to repeat
hp_nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hp_added=0
hp_mount=

hp_reserve() {
	local n=$1 dir=${2:-} min=${3:-$1} before
	before=$(cat "$hp_nr") || return 1
	echo $((before + n)) > "$hp_nr" 2> /dev/null || true
	hp_added=$(($(cat "$hp_nr") - before))
	[ "$hp_added" -gt 0 ] || hp_added=0
	if [ -n "$dir" ]; then
		mkdir -p "$dir"
		mount -t hugetlbfs -o pagesize=2M nodev "$dir" || return 1
		hp_mount=$dir
	fi
	if [ "$hp_added" -lt "$min" ]; then
		echo "hugepages: the kernel gave $hp_added of $n" >&2
		return 1
	fi
}

hp_restore() {
	local now
	if [ -n "$hp_mount" ]; then
		umount "$hp_mount" 2> /dev/null || true
		hp_mount=
	fi
	if [ "$hp_added" -gt 0 ]; then
		now=$(cat "$hp_nr")
		echo $((now > hp_added ? now - hp_added : 0)) > "$hp_nr" || true
		hp_added=0
	fi
}
