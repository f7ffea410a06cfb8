#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The empty plan's one pass gives what the full pipeline gives.

usage: empty_plan.py BUILD_DIR [COUNT]

With no base chain, no conntrack and no --router step, a burst takes one
pass (pipeline.c, burst_empty): L2 parse, inet ingress's version check,
ip_rcv / ipv6_rcv, the trim, out. COUNT random and mutated frames
(random_frames.py, fixed seed) are replayed in wire mode over two ports
under an empty ruleset, then under a ruleset whose one base chain accepts
everything (which takes the full pipeline). What leaves each port, every
drop reason and every hook's accept count must be the same. Exit 0 when
they agree, 1 otherwise, 77 when not root.
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
RULESETS = {
    'empty': 'flush ruleset\n',
    # one chain that accepts everything: the full pipeline, same results
    'one-chain': 'flush ruleset\ntable inet t {\n\tchain c {\n\t\ttype filter hook forward '
                 'priority 0; policy accept;\n\t}\n}\n',
}


def run(tmp, name):
    prefix = 'nftdp-empty-%d-%s' % (os.getpid(), name)
    rules = os.path.join(tmp, name + '.nft')
    with open(rules, 'w') as f:
        f.write(RULESETS[name])
    out = [os.path.join(tmp, '%s-out%d.pcap' % (name, p)) for p in (0, 1)]
    sj = os.path.join(tmp, name + '.json')
    eal = T.eal_args(prefix, ['net_pcap%d,rx_pcap=%s,tx_pcap=%s' %
                              (p, os.path.join(tmp, 'in%d.pcap' % p), out[p]) for p in (0, 1)],
                     ('-l', '0'), mem=1024, log_level='error')
    r = T.run_offline(BUILD, eal, ['--socket', os.path.join(tmp, name + '.sock'),
                                   '--wire', '0:1', '--ruleset', rules, '--exit-on-idle', '500',
                                   '--stats-json', sj], prefix, timeout=120)
    if r.returncode != 0:
        print(r.stdout[-2000:])
        sys.exit(1)
    frames = []
    for path in out:
        with open(path, 'rb') as f:
            frames.append(f.read()[24:])  # the records, headers' times aside below
    with open(sj) as f:
        stats = json.load(f)
    return [T.strip_times(b) for b in frames], stats


def main():
    if not T.is_root():
        T.skip('SKIP: needs root')
    tmp = tempfile.mkdtemp(prefix='nftdp-empty-plan-')
    failed = 0
    try:
        subprocess.run([sys.executable, os.path.join(HERE, 'random_frames.py'),
                        os.path.join(tmp, 'in0.pcap'), os.path.join(tmp, 'in1.pcap'),
                        str(COUNT), '5'], check=True)
        a_frames, a_stats = run(tmp, 'empty')
        b_frames, b_stats = run(tmp, 'one-chain')
        sent = sum(len(f) for f in a_frames)
        checks = [
            ('frames out of each port, in order (%d)' % sent, a_frames == b_frames),
            ('drop reasons', a_stats.get('drops') == b_stats.get('drops')),
            ('hook accept counts',
             {h: v.get('accept') for h, v in a_stats.get('hooks', {}).items()} ==
             {h: v.get('accept') for h, v in b_stats.get('hooks', {}).items()}),
            ('something left and something was dropped',
             sent > COUNT // 10 and sum(a_stats.get('drops', {}).values()) > 0),
        ]
        for what, ok in checks:
            print(('ok   ' if ok else 'FAIL ') + what)
            failed += not ok
        print('   drops: %s' % {k: v for k, v in a_stats.get('drops', {}).items() if v})
        if a_stats.get('drops') != b_stats.get('drops'):
            print('   empty:     %s\n   one-chain: %s' % (a_stats.get('drops'), b_stats.get('drops')))
        if a_stats.get('hooks') != b_stats.get('hooks'):
            print('   empty:     %s\n   one-chain: %s' % (a_stats.get('hooks'), b_stats.get('hooks')))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d passed, %d failed' % (len(checks) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
