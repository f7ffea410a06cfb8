#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""nftdp.service without systemd: the config file, start, reload (issue 15).

usage: service.py BUILD_DIR

Runs nftdp as nftdp.service's ExecStart does (BUILD/tools/nftdp-service
CONF, with NFTDP pointing at BUILD/nftdp) in a scratch netns, two
net_af_packet ports over veths, from a config file in the format of
/etc/nftdp/nftdp.conf, with $NOTIFY_SOCKET bound by the test as systemd
would (Type=notify):

- a ruleset file with an error: nftdp does not start, exits non-zero and
  its output has nft's message;
- a good file: READY=1 arrives, `nft list ruleset` through the shim shows
  the file's ruleset;
- SIGHUP (ExecReload) with a new good file: RELOADING=1 then READY=1, the
  listing is the new file's (the old table flushed in the same
  transaction);
- SIGHUP with a file whose first table is fine and whose second fails at
  commit (a rule in a chain that does not exist): the listing stays the
  previous one (nothing of the bad file applied), the log says the
  reload failed with nft's error;
- SIGTERM ends it with status 0.
Bounded: nftdp runs under timeout 60.
"""
import os
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

BUILD = os.path.abspath(sys.argv[1])
NS = T.netns_name('svc')
checks = T.Checks(flush=True)
check = checks.check

GOOD1 = '''#!/usr/sbin/nft -f
flush ruleset
table inet filter {
	chain input { type filter hook input priority 0; policy accept; }
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related accept
		iifname "lan0" accept
	}
}
'''
GOOD2 = '''table inet fw2 {
	chain forward {
		type filter hook forward priority 0; policy accept;
		tcp dport 22 counter drop
	}
}
table ip nat {
	chain post { type nat hook postrouting priority 100; policy accept; oifname "wan0" masquerade; }
}
'''
BAD_SYNTAX = 'table inet filter {\n\tchain forward { type filter hook forward priority 0; polcy drop; }\n}\n'
# parses, fails at commit: the second table refers to a chain it lacks
BAD_COMMIT = '''table inet fw3 {
	chain c { type filter hook forward priority 0; policy accept; }
}
add rule inet fw3 nosuchchain counter
'''

CONF = '''PORTS="net_af_packet0,iface=dp0 net_af_packet1,iface=dp1"
NAMES="lan0 wan0"
CORES="0-1"
WORKERS=1
MODE=wire
PAIRS="0:1"
RULESET=%s
HOST_PORTS=no
MEMORY=512
EAL_ARGS="--no-huge --no-pci --file-prefix %s --log-level=lib.*:warning"
SOCKET=%s
'''


def cleanup():
    T.netns_del(NS)


def start(conf, log, notify):
    env = dict(os.environ, NFTDP=os.path.join(BUILD, 'nftdp'), NOTIFY_SOCKET=notify)
    argv = ['ip', 'netns', 'exec', NS, 'timeout', '60',
            os.path.join(BUILD, 'tools', 'nftdp-service'), conf]
    f = open(log, 'w')
    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         env=env)
    f.close()
    return p


def notes(sock, want, timeout=30):
    """Datagrams on the notify socket until one equals want."""
    got = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        sock.settimeout(max(0.1, end - time.monotonic()))
        try:
            m = sock.recv(4096).decode()
        except socket.timeout:
            break
        got.append(m)
        if m == want:
            break
    return got


def listing(sock):
    r = subprocess.run(T.nft_argv(BUILD, ns=NS) + ['list', 'ruleset'], env=T.nft_env(sock),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
    return r.stdout


def daemon_pid(p):
    """nftdp's pid: nftdp-service execs it under timeout(1), p's child."""
    for _ in range(100):
        try:
            kids = open('/proc/%d/task/%d/children' % (p.pid, p.pid)).read().split()
        except OSError:
            kids = []
        for k in kids:
            for kk in [k] + open('/proc/%s/task/%s/children' % (k, k)).read().split():
                try:
                    if os.readlink('/proc/%s/exe' % kk).endswith('/nftdp'):
                        return int(kk)
                except OSError:
                    pass
        time.sleep(0.05)
    return None


def main(tmp):
    T.netns_add(NS, ipv6=False)
    T.veth(NS, 'dp0', 't0')
    T.veth(NS, 'dp1', 't1')
    rules, conf, sock = (os.path.join(tmp, x) for x in ('rules.nft', 'nftdp.conf', 'nl.sock'))
    notify_path = os.path.join(tmp, 'notify')
    ns_sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    ns_sock.bind(notify_path)
    with open(conf, 'w') as f:
        f.write(CONF % (rules, T.netns_name('svc'), sock))

    # a bad file: refused at start with nft's message
    with open(rules, 'w') as f:
        f.write(BAD_SYNTAX)
    log = os.path.join(tmp, 'bad.log')
    p = start(conf, log, notify_path)
    rc = p.wait(timeout=60)
    out = open(log, errors='replace').read()
    T.rm_runtime(T.netns_name('svc'))
    check(rc != 0 and 'syntax error' in out and 'loading ruleset' in out,
          'a ruleset with an error: nftdp does not start (status %d) and says why:\n%s' %
          (rc, out[-600:]))

    with open(rules, 'w') as f:
        f.write(GOOD1)
    log = os.path.join(tmp, 'nftdp.log')
    p = start(conf, log, notify_path)
    try:
        got = notes(ns_sock, 'READY=1')
        check(got[-1:] == ['READY=1'], 'READY=1 once started (%s)' % got)
        pid = daemon_pid(p)
        check(pid is not None, 'nftdp runs as the service script\'s exec (pid %s)' % pid)
        l1 = listing(sock)
        check('table inet filter' in l1 and 'iifname "lan0" accept' in l1,
              'the ruleset file is loaded:\n' + l1)

        with open(rules, 'w') as f:
            f.write(GOOD2)
        os.kill(pid, signal.SIGHUP)
        got = notes(ns_sock, 'READY=1')
        check(got == ['RELOADING=1', 'READY=1'], 'reload: RELOADING=1, READY=1 (%s)' % got)
        l2 = listing(sock)
        check('table inet fw2' in l2 and 'masquerade' in l2 and 'table inet filter' not in l2,
              'SIGHUP: the new file replaced the old ruleset:\n' + l2)

        with open(rules, 'w') as f:
            f.write(BAD_COMMIT)
        os.kill(pid, signal.SIGHUP)
        got = notes(ns_sock, 'READY=1')
        check(got == ['RELOADING=1', 'READY=1'], 'bad reload: RELOADING=1, READY=1 (%s)' % got)
        l3 = listing(sock)
        check(l3 == l2, 'SIGHUP with a bad file: the ruleset stays as it was:\n' + l3)
        out = open(log, errors='replace').read()
        check('reload: loading %s failed' % rules in out and 'Error:' in out and
              'reload: %s loaded' % rules in out,
              'the log says why the reload failed (nft\'s error):\n' + out[-800:])
    finally:
        pid = daemon_pid(p) if p.poll() is None else None
        if pid:
            os.kill(pid, signal.SIGTERM)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        T.rm_runtime(T.netns_name('svc'))
        ns_sock.close()
    check(p.returncode == 0, 'SIGTERM: exit status 0 (%s)' % p.returncode)


T.run_root_test('service', checks, main, cleanup)
