# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the bench scripts: reserve 2 MB hugepages on a private
# hugetlbfs mount for one run, and give back exactly what was taken.
#
#   hp_reserve N DIR [MIN]   nr_hugepages += N, hugetlbfs mounted on DIR;
#                            fails unless at least MIN (default N) came
#   hp_restore               unmount, nr_hugepages back to what it was
#                            (call it from the EXIT trap; safe to repeat)
hp_nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
hp_before=
hp_mount=

hp_reserve() {
	local n=$1 dir=$2 min=${3:-$1} got
	hp_before=$(cat "$hp_nr")
	echo $((hp_before + n)) > "$hp_nr"
	mkdir -p "$dir"
	mount -t hugetlbfs -o pagesize=2M nodev "$dir" || return 1
	hp_mount=$dir
	got=$(cat "$hp_nr")
	if [ "$got" -lt $((hp_before + min)) ]; then
		echo "FAIL: only $((got - hp_before)) of $n hugepages" >&2
		return 1
	fi
}

hp_restore() {
	if [ -n "$hp_mount" ]; then
		umount "$hp_mount" 2>/dev/null || true
		hp_mount=
	fi
	if [ -n "$hp_before" ]; then
		echo "$hp_before" > "$hp_nr"
		hp_before=
	fi
}
