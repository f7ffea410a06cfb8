#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""--idle-sleep (docs/dataplane.md "Workers"): a worker whose rx queues have
been empty for a millisecond sleeps between polls, so an idle daemon leaves
its core to others, and traffic that comes back is forwarded whole.

usage: idle_sleep.py BUILD_DIR

- Values outside 0-10000, on the command line or in NFTDP_IDLE_SLEEP_US,
  are refused at start with a message.
- A daemon with --idle-sleep 1000 on a veth (net_af_packet) in a scratch
  netns uses under a quarter of a core while nothing arrives; the same
  daemon without it is shown for comparison (a polling worker takes what
  the host gives it).
- After a second of sleep, 300 frames sent at once are all forwarded, in
  order, out of the wired port.
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS = T.netns_name('idle')
checks = T.Checks(flush=True)
check = checks.check
daemons = []


def cleanup():
    for d in daemons:
        d.stop()
    del daemons[:]
    T.netns_del(NS)


def daemon_pid(d):
    """nftdp's own pid: the child of `timeout` (Daemon's limit), which the
    netns wrapper's sh became."""
    pid = d.pid()
    with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
        kids = f.read().split()
    return int(kids[0]) if kids else pid


def cpu_seconds(pid):
    """utime + stime of pid and its threads, in seconds."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def refused(tmp, args, env, want, what):
    r = T.run([os.path.join(BUILD, 'nftdp')] +
              T.eal_args('nftdp-idle-%d-bad' % os.getpid()) +
              ['--', '--socket', os.path.join(tmp, 'bad.sock')] + args,
              env=dict(os.environ, **env), timeout=60)
    T.rm_runtime('nftdp-idle-%d-bad' % os.getpid())
    check(r.rc == 2 and want in r.err + r.out, '%s refused (%s)' % (what, want))


def start(tmp, tag, extra):
    prefix = 'nftdp-idle-%d-%s' % (os.getpid(), tag)
    rules = os.path.join(tmp, 'fw.nft')
    with open(rules, 'w') as f:
        f.write('table inet fw {\n\tchain forward {\n\t\ttype filter hook forward priority 0;\n'
                '\t\tudp dport 9 counter\n\t}\n}\n')
    d = T.Daemon(BUILD, T.eal_args(prefix, ['net_af_packet0,iface=a1', 'net_af_packet1,iface=b1']),
                 ['--socket', os.path.join(tmp, tag + '.sock'), '--ruleset', rules,
                  '--wire', '0:1', '--workers', '1', '--stats-json',
                  os.path.join(tmp, tag + '.json')] + extra,
                 prefix, os.path.join(tmp, tag + '.log'), ns=NS, limit=60)
    daemons.append(d)
    d.wait_started()
    return d


def sleeps(pid):
    """Voluntary context switches of pid's threads: a worker that sleeps
    between polls makes one a poll, a polling one none."""
    n = 0
    for t in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/status' % (pid, t)) as f:
            for line in f:
                if line.startswith('voluntary_ctxt_switches:'):
                    n += int(line.split()[1])
    return n


def idle_use(d, seconds=1.5):
    """The daemon's share of one core and its voluntary context switches a
    second over seconds of no traffic, after half a second for its worker
    to find the queues empty."""
    time.sleep(0.5)
    pid = daemon_pid(d)
    c0, s0, t0 = cpu_seconds(pid), sleeps(pid), time.monotonic()
    time.sleep(seconds)
    t = time.monotonic() - t0
    return (cpu_seconds(pid) - c0) / t, (sleeps(pid) - s0) / t


def main(tmp):
    env = {'NFTDP_IDLE_SLEEP_US': ''}
    refused(tmp, ['--idle-sleep', '10001'], env, "bad value '10001'", '--idle-sleep 10001')
    refused(tmp, ['--idle-sleep', 'x'], env, "bad value 'x'", '--idle-sleep x')
    refused(tmp, [], {'NFTDP_IDLE_SLEEP_US': '20000'}, 'NFTDP_IDLE_SLEEP_US=20000',
            'NFTDP_IDLE_SLEEP_US=20000')

    T.netns_add(NS, ipv6=False)
    T.veth(NS, 'a0', 'a1')
    T.veth(NS, 'b0', 'b1')
    os.environ.pop('NFTDP_IDLE_SLEEP_US', None)  # the suite's own, if any
    d = start(tmp, 'poll', [])
    polling, polling_sw = idle_use(d)
    d.stop()
    daemons.remove(d)
    d = start(tmp, 'sleep', ['--idle-sleep', '1000'])
    sleeping, sleeping_sw = idle_use(d)
    print('idle: %.2f of a core and %d sleeps a second polling, %.2f and %d with '
          '--idle-sleep 1000' % (polling, polling_sw, sleeping, sleeping_sw))
    # the control thread sleeps too (about 100 a second): the worker's
    # sleeps are the difference, one a poll, at most 1000 a second
    check(sleeping_sw - polling_sw > 300, 'an idle worker with --idle-sleep 1000 sleeps between '
          'polls (%d more sleeps a second)' % (sleeping_sw - polling_sw))
    check(sleeping < 0.25, 'an idle worker with --idle-sleep uses under a quarter of a core '
          '(%.2f)' % sleeping)

    # traffic after the sleep: all of it, in order
    tx = T.packet_socket(NS, 'a0')
    rx = T.packet_socket(NS, 'b0')
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # all 300 at once
    rx.settimeout(0.2)
    frames = []
    for i in range(300):
        eth = bytes.fromhex('020000000002020000000001') + b'\x08\x00'
        udp = (4000).to_bytes(2, 'big') + (9).to_bytes(2, 'big') + (8 + 2).to_bytes(2, 'big') + \
            b'\x00\x00' + i.to_bytes(2, 'big')
        ip = bytearray(b'\x45\x00' + (20 + len(udp)).to_bytes(2, 'big') + b'\x00\x00\x00\x00'
                       b'\x40\x11\x00\x00' + bytes([10, 0, 0, 1, 10, 0, 1, 1]))
        ip[10:12] = T.inet_csum(bytes(ip)).to_bytes(2, 'big')
        frames.append(eth + bytes(ip) + udp)
    for f in frames:
        tx.send(f)
    got = []
    end = time.monotonic() + 5
    while len(got) < len(frames) and time.monotonic() < end:
        try:
            data, addr = rx.recvfrom(2048)
        except OSError:
            continue
        if addr[2] != 4 and data[12:14] == b'\x08\x00' and data[23] == 17:
            got.append(data[:len(frames[0])])
    check(got == frames, 'after the sleep every frame is forwarded, in order (%d of %d)'
          % (len(got), len(frames)))
    tx.close()
    rx.close()


T.run_root_test('idle_sleep', checks, main, cleanup)
