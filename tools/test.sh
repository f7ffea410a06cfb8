#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what is missing, build, and run every test: the whole suite on the
# normal build, then the unit tests again under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh
# the tree as .clang-format says (clang-format 14), before anything builds
tools/check-format.sh
# without LTO: the build links a hundred test programs, and LTO does its
# code generation again at every link (480 of a clean build's 615 CPU
# seconds); the suite checks behaviour, and the benches build their own
[ -f build/build.ninja ] || meson setup build -Db_lto=false >/dev/null
ninja -C build
# CI runs as root, where no root-only suite has a reason to skip (exit 77):
# there a skipped test counts as a failure and fails this script
skip_fails() { [ "$(id -u)" -eq 0 ] && [ "${CI:-}" = true ]; }
summary() { # the Ok:/Fail: counts of a meson test log (and Skipped:, see above)
	local counts='Ok\|Fail\|Timeout'
	skip_fails && counts="$counts\\|Skipped"
	sed -n "s/^\\($counts\\):[[:space:]]*\\([0-9]*\\).*/\\1 \\2/p" "$1"
	skip_fails && awk '/^test:/ { t = $NF } /^result:[[:space:]]*exit status 77$/ {
		print "SKIP as root under CI (a failure): " t > "/dev/stderr" }' "$1"
	return 0
}
# the sanitizer and fuzzer builds, niced, while the main suite runs: its
# tests wait on namespaces, sleeps and the kernel more than they compute,
# and a niced compiler takes only the CPU they leave (CI time, not results)
side_builds() {
	[ -f build-asan/build.ninja ] ||
		meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false
	ninja -C build-asan
	[ -f build-fuzz/build.ninja ] ||
		CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false -Db_lto=false \
			-Db_sanitize=address,undefined -Db_lundef=false
	ninja -C build-fuzz tests/fuzz/fuzz_nfnl tests/fuzz/fuzz_pkt tests/fuzz/libnftdp_shim_plain.so
}
# hugepages for the main suite's daemons: while NFTDP_TEST_HUGEPAGES=1,
# tests/lib/nftdp_test.py (and the bench smokes) give them --in-memory
# (EAL takes 2 MiB pages from the kernel's pool as it needs them) instead
# of --no-huge, whose 4 KiB pages cost a fault each: seconds for a route
# table on a loaded VM. Added to the pool before the suite and taken back
# after it (and on any exit, bench/lib/hugepages.sh); where the kernel
# cannot give them all, none are kept and the daemons run --no-huge.
. bench/lib/hugepages.sh
hp_release() {
	unset NFTDP_TEST_HUGEPAGES
	hp_restore
}
hp_for_suite() {
	[ "$(id -u)" -eq 0 ] && [ -w "$hp_nr" ] || return 0
	if hp_reserve "$1"; then
		export NFTDP_TEST_HUGEPAGES=1
	else
		echo "hugepages: the daemons run --no-huge"
		hp_release
	fi
}
side_log=$(mktemp /tmp/nftdp-side-builds.XXXXXX)
side_pid= nfnl_pid= corpus=
# what is still running in the background when the script ends, by a
# failure or not, ends with it (not `[ -z ] || kill`: under set -e a
# failed kill of a finished job would end the trap, and the script,
# with status 1)
cleanup() {
	local p
	for p in $side_pid $nfnl_pid; do
		kill -- "-$p" 2> /dev/null || kill "$p" 2> /dev/null || true
	done
	rm -rf "$side_log" ${corpus:+"$corpus"}
	hp_release
}
trap cleanup EXIT
# (setsid: the side builds in a process group of their own, ended whole)
setsid nice -n 19 bash -c "$(declare -f side_builds); set -e; side_builds" > "$side_log" 2>&1 &
side_pid=$!
hp_for_suite 1536 # 3 GiB: two tests at a time, a few daemons each
meson test -C build --print-errorlogs --num-processes 2
hp_release
summary build/meson-logs/testlog.txt > /tmp/nftdp-test-summary.$$
wait "$side_pid" || { tail -40 "$side_log"; exit 1; }
side_pid=
meson test -C build-asan --suite unit --print-errorlogs --num-processes 2
summary build-asan/meson-logs/testlog.txt >> /tmp/nftdp-test-summary.$$
# the control-plane integration suites against the sanitizer build of the
# daemon (and shim): the first ASan or UBSan report aborts the daemon
# (halt_on_error), which the harnesses see as a daemon that died; leaks are
# not checked (the daemon ends by SIGTERM). control-listing runs without
# 0016_dormant (NFTCOMPARE_FILTER): nft 1.0.6 itself prints `-j list` of a
# dormant table cut at "flags" when libasan is preloaded into it (against
# the kernel too).
# conntrack-tool is left out: its packet counts need a dataplane that keeps
# up with the capture, which the ASan build does not on a loaded machine.
# Two at a time, as in build/ (tests/meson.build says which run alone).
if [ "$(id -u)" -eq 0 ]; then
	export ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:abort_on_error=1
	export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	NFTCOMPARE_FILTER='^(?!0016_dormant)' meson test -C build-asan --print-errorlogs \
		--num-processes 2 control-listing \
		control-sequences control-monitor control-concurrency control-permissions \
		control-badinput control-never-reads control-stopped-monitor \
		control-iptables-restore conntrack-inject shim_fails_closed shim_ack_server \
		dataplane-random-frames
	summary build-asan/meson-logs/testlog.txt >> /tmp/nftdp-test-summary.$$
	unset ASAN_OPTIONS UBSAN_OPTIONS
fi
# a short libFuzzer run over the netlink parser (tests/fuzz), seeded from
# tests/fuzz/corpus; a fixed seed and run count keep CI reproducible
# (FUZZ_RUNS=-1 FUZZ_SECONDS=600 for a longer, random exploration). It
# runs in the background on one core while the fuzz_pkt runs below take
# the other, one after another.
corpus=$(mktemp -d /tmp/nftdp-fuzz.XXXXXX)
mkdir "$corpus/nfnl"
build-fuzz/tests/fuzz/fuzz_nfnl -seed="${FUZZ_SEED:-1}" -runs="${FUZZ_RUNS:-3000000}" \
	-max_total_time="${FUZZ_SECONDS:-120}" -rss_limit_mb=4096 \
	-artifact_prefix="$corpus/nfnl/" "$corpus/nfnl" tests/fuzz/corpus/nfnl > "$corpus/nfnl.log" 2>&1 &
nfnl_pid=$!
# the same over the whole packet path (fuzz_pkt: frames through every hook,
# conntrack, NAT, defrag, --router under tests/fuzz/fuzz_pkt.nft); docs/testing.md
# (FUZZ_PKT_RUNS=-1 FUZZ_PKT_SECONDS=1800 for a longer run)
# fuzz_pkt NAME [ENV=VALUE...]: one run, its corpus and log under $corpus/NAME
fuzz_pkt() {
	local name=$1 rc=0 before d
	shift
	mkdir "$corpus/$name"
	before=$(ls -d /var/run/dpdk/nftdp-fuzz-pkt-* 2> /dev/null || true)
	env UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}" "$@" \
		build-fuzz/tests/fuzz/fuzz_pkt -seed="${FUZZ_SEED:-1}" -runs="${FUZZ_PKT_RUNS:-100000}" \
		-max_total_time="${FUZZ_PKT_SECONDS:-120}" -rss_limit_mb=4096 \
		-artifact_prefix="$corpus/$name/" "$corpus/$name" tests/fuzz/corpus/pkt \
		> "$corpus/$name.log" 2>&1 || rc=$?
	# the EAL runtime folder of this run (libFuzzer exits without
	# rte_eal_cleanup): the ones that were not there before
	for d in /var/run/dpdk/nftdp-fuzz-pkt-*; do
		[ -d "$d" ] || continue
		grep -qxF "$d" <<< "$before" || rm -rf "$d"
	done
	[ "$rc" -eq 0 ] ||
		{ grep -A30 "ERROR\|runtime error" "$corpus/$name.log" | head -60; exit 1; }
	! grep -q "runtime error" "$corpus/$name.log" ||
		{ grep -A30 "runtime error" "$corpus/$name.log" | head -60; exit 1; }
	tail -2 "$corpus/$name.log"
	echo "Ok 1" >> /tmp/nftdp-test-summary.$$
}
fuzz_pkt pkt
echo "fuzz_pkt: no crash"
# again under a stateless ruleset (tests/fuzz/fuzz_pkt_stateless.nft): wire-mode
# inputs then take the per-flow cache's one cached pass (docs/dataplane.md)
fuzz_pkt pkt-stateless FUZZ_PKT_RULESET=tests/fuzz/fuzz_pkt_stateless.nft
echo "fuzz_pkt (stateless ruleset): no crash"
# and under conntrack with nothing before it, without and with NAT: the
# tracked pass (docs/dataplane.md)
fuzz_pkt pkt-tracked FUZZ_PKT_RULESET=tests/fuzz/fuzz_pkt_tracked.nft
echo "fuzz_pkt (tracked ruleset): no crash"
fuzz_pkt pkt-tracked-nat FUZZ_PKT_RULESET=tests/fuzz/fuzz_pkt_tracked_nat.nft
echo "fuzz_pkt (tracked ruleset with NAT): no crash"
# and with chains before conntrack: they run over the whole burst first
# (BURST_PRE_CT, docs/dataplane.md)
fuzz_pkt pkt-raw FUZZ_PKT_RULESET=tests/fuzz/fuzz_pkt_raw.nft
echo "fuzz_pkt (chains before conntrack): no crash"
wait "$nfnl_pid" || { grep -A30 "ERROR\|runtime error" "$corpus/nfnl.log" | head -60; exit 1; }
tail -2 "$corpus/nfnl.log"
echo "fuzz_nfnl: no crash"
echo "Ok 1" >> /tmp/nftdp-test-summary.$$
awk '$1 == "Ok" { p += $2 } $1 != "Ok" { f += $2 } END { printf "%d passed, %d failed\n", p, f }' \
	/tmp/nftdp-test-summary.$$
if grep -q '^Skipped [1-9]' /tmp/nftdp-test-summary.$$; then
	echo "tests skipped as root under CI=true: failing"
	rm -f /tmp/nftdp-test-summary.$$
	exit 1
fi
rm -f /tmp/nftdp-test-summary.$$
