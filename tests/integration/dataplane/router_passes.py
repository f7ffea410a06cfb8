#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--router takes the fast passes, with the full pipeline's results.

usage: router_passes.py BUILD_DIR [COUNT]

Under --router the empty plan (burst_empty) and the cached plan
(burst_cached) do the router step themselves (pipeline.c, fast_route:
martians, TTL, the decrement, forward's devices) and leave to the full
pipeline, one by one, the packets it does anything else with. COUNT random
and mutated frames (random_frames.py, fixed seed: bad headers, IP
options, TTLs of 0 and 1, martians, tags, ARP) are replayed with --router
--wire 0:1 under:
- empty: no ruleset (the empty pass), against accept: one forward chain
  that accepts all, with --flow-cache 0 (the full pipeline);
- chains: prerouting and forward chains whose verdicts read the TTL after
  the decrement and the output device (the cached pass), against the same
  with --flow-cache 0.
What leaves each port (ICMP errors included), every drop reason and every
hook's counts must be the same, and the stats' passes must say which pass
ran. Exit 0 when they agree, 1 otherwise, 77 when not root.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
COUNT = int(sys.argv[2]) if len(sys.argv) > 2 else 20000
HERE = os.path.dirname(os.path.abspath(__file__))
ACCEPT = ('flush ruleset\ntable inet t {\n\tchain c {\n\t\ttype filter hook forward '
          'priority 0; policy accept;\n\t}\n}\n')
# forward sees the decremented TTL and the output port; prerouting the
# TTL as received
CHAINS = '''flush ruleset
table inet t {
	chain pre {
		type filter hook prerouting priority 0; policy accept;
		ip ttl 3 counter drop
		ip6 hoplimit 3 counter drop
		counter
	}
	chain fw {
		type filter hook forward priority 0; policy accept;
		ip ttl 2 counter drop
		ip6 hoplimit 2 counter drop
		oifname != "dp0" oifname != "dp1" counter drop
		meta l4proto udp oifname "dp0" ip ttl < 40 counter drop
		meta l4proto tcp oifname "dp1" counter accept
		counter
	}
	chain post {
		type filter hook postrouting priority 0; policy accept;
		ip ttl 4 counter drop
		oifname "dp1" ip6 hoplimit 4 counter drop
	}
}
'''
RUNS = {
    'empty': ('flush ruleset\n', []),
    'accept': (ACCEPT, ['--flow-cache', '0']),
    'chains': (CHAINS, []),
    'chains-full': (CHAINS, ['--flow-cache', '0']),
}


def run(tmp, name):
    prefix = 'nftdp-rpass-%d-%s' % (os.getpid(), name)
    rules = os.path.join(tmp, name + '.nft')
    with open(rules, 'w') as f:
        f.write(RUNS[name][0])
    out = [os.path.join(tmp, '%s-out%d.pcap' % (name, p)) for p in (0, 1)]
    sj = os.path.join(tmp, name + '.json')
    eal = T.eal_args(prefix, ['net_pcap%d,rx_pcap=%s,tx_pcap=%s' %
                              (p, os.path.join(tmp, 'in%d.pcap' % p), out[p]) for p in (0, 1)],
                     ('-l', '0'), mem=1024, log_level='error')
    r = T.run_offline(BUILD, eal, ['--socket', os.path.join(tmp, name + '.sock'),
                                   '--wire', '0:1', '--router', '--ruleset', rules,
                                   '--exit-on-idle', '500', '--stats-json', sj] + RUNS[name][1],
                      prefix, timeout=120)
    if r.returncode != 0:
        print(r.stdout[-2000:])
        sys.exit(1)
    frames = []
    for path in out:
        with open(path, 'rb') as f:
            frames.append(T.strip_times(f.read()[24:]))
    with open(sj) as f:
        stats = json.load(f)
    return frames, stats


def main():
    if not T.is_root():
        T.skip('SKIP: needs root')
    tmp = tempfile.mkdtemp(prefix='nftdp-router-passes-')
    checks = []
    try:
        subprocess.run([sys.executable, os.path.join(HERE, 'random_frames.py'),
                        os.path.join(tmp, 'in0.pcap'), os.path.join(tmp, 'in1.pcap'),
                        str(COUNT), '5'], check=True)
        res = {name: run(tmp, name) for name in RUNS}
        for fast, full, kind in (('empty', 'accept', 'empty'), ('chains', 'chains-full', 'cached')):
            (a_frames, a_stats), (b_frames, b_stats) = res[fast], res[full]
            sent = sum(len(f) for f in a_frames)
            passes, ref = a_stats.get('passes', {}), b_stats.get('passes', {})
            checks += [
                ('%s: frames out of each port, in order (%d)' % (fast, sent), a_frames == b_frames),
                ('%s: drop reasons' % fast, a_stats.get('drops') == b_stats.get('drops')),
                ('%s: hook counts' % fast, a_stats.get('hooks') == b_stats.get('hooks')),
                ('%s: something left and something was dropped' % fast,
                 sent > COUNT // 20 and sum(a_stats.get('drops', {}).values()) > 0),
                ('%s: every burst took the %s pass (%s)' % (fast, kind, passes),
                 passes.get(kind, 0) > 0 and passes.get(kind) == a_stats.get('per_worker', [{}])[0].get('bursts')),
                ('%s: the full pipeline ran them all (%s)' % (full, ref),
                 ref.get('full', 0) > 0 and ref.get('full') == b_stats.get('per_worker', [{}])[0].get('bursts')),
            ]
            if a_stats.get('drops') != b_stats.get('drops'):
                print('   %s: %s\n   %s: %s' % (fast, a_stats.get('drops'), full, b_stats.get('drops')))
            if a_stats.get('hooks') != b_stats.get('hooks'):
                print('   %s: %s\n   %s: %s' % (fast, a_stats.get('hooks'), full, b_stats.get('hooks')))
            if a_frames != b_frames:
                for p in (0, 1):
                    diff = [i for i, (x, y) in enumerate(zip(a_frames[p], b_frames[p])) if x != y]
                    print('   port %d: %d / %d frames, first differing at %s' %
                          (p, len(a_frames[p]), len(b_frames[p]), diff[:3]))
        print('   drops: %s' % {k: v for k, v in res['empty'][1].get('drops', {}).items() if v})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    failed = 0
    for what, ok in checks:
        print(('ok   ' if ok else 'FAIL ') + what)
        failed += not ok
    print('%d passed, %d failed' % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
