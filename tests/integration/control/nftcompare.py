#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Kernel-differential harness for nftdp's control plane.

The kernel is the oracle.  Every case runs the same nft input twice: against
the kernel, inside a scratch network namespace this script creates and
deletes (never the root namespace), and against a private nftdp daemon this
script starts and stops by pid.  stdout, stderr and exit status of every nft
command must be identical on both sides.

    nftcompare.py BUILD MODE [options]

MODE is one of listing, sequences, monitor, concurrency, permissions,
roundtrip, all.  The first five compare the control plane alone (the daemon
runs with --control-only: rules are stored, not compiled); roundtrip runs the
daemon as it is deployed: every ruleset the kernel loads must load and
compile, or be refused with EOPNOTSUPP exactly where
tests/data/rulesets/UNSUPPORTED says (what docs/vm.md lists as unsupported).
With --kernel-only the nftdp side is not run: the script checks that the
corpus behaves on the kernel as the files say (rulesets load, err_ files and
`!` commands fail, the rest succeed) and saves the kernel's transcripts.

Exit status: 0 all passed, 1 some check failed, 77 skipped (not root),
2 usage/setup error.  See docs/testing.md.
"""

import argparse
import atexit
import difflib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'lib'))
import nftdp_test as T  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRCROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..'))
RULESETS = os.path.join(SRCROOT, 'tests', 'data', 'rulesets')
SEQUENCES = os.path.join(SRCROOT, 'tests', 'data', 'sequences')

CMD_TIMEOUT = 20          # seconds for one nft command
DAEMON_START_TIMEOUT = 30  # seconds for the daemon's socket to appear
PID = os.getpid()


def log(*a):
    print(*a, flush=True)


Result = T.Result


def run(argv, env=None, cwd=None, timeout=CMD_TIMEOUT, stdin=None):
    """Run argv in its own process group; kill the group on timeout (rc 124)."""
    return T.run(argv, env=env, cwd=cwd, timeout=timeout, stdin=stdin)


NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups']
# who runs nft (user=...): nobody; root with CAP_NET_ADMIN dropped (from the
# bounding and inheritable sets, so exec does not give it back); nobody with
# CAP_NET_ADMIN (ambient, so it survives exec)
USERS = {
    'nobody': NOBODY,
    'root-nocap': ['setpriv', '--inh-caps=-net_admin', '--bounding-set=-net_admin'],
    'nobody-cap': NOBODY + ['--inh-caps=+net_admin', '--ambient-caps=+net_admin'],
}


class Side:
    name = '?'

    def argv(self, args, user=None):
        raise NotImplementedError

    def nft(self, args, cwd=None, user=None, timeout=CMD_TIMEOUT):
        return run(self.argv(args, user), env=self.env(), cwd=cwd, timeout=timeout)

    def popen(self, args, stdout, cwd=None):
        return subprocess.Popen(self.argv(args), stdout=stdout, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=self.env(), cwd=cwd,
                                start_new_session=True)

    def env(self):
        return None

    def alive(self):
        return None


class Kernel(Side):
    """The kernel, inside a scratch netns with dp0/dp1 like nftdp's ports."""
    name = 'kernel'

    def __init__(self, h, n):
        self.h = h
        self.ns = make_netns(h, 'nftdp-ct-%d-%d' % (PID, n))

    def argv(self, args, user=None):
        return ['ip', 'netns', 'exec', self.ns] + USERS.get(user, []) + ['nft'] + args


def make_netns(h, name):
    """A scratch netns with lo, dp0 and dp1 up; deleted at cleanup."""
    ns = Netns(name)
    r = run(['ip', 'netns', 'add', name], timeout=10)
    if r.rc:
        raise SetupError('ip netns add %s: %s' % (name, r.err.strip()))
    h.cleanups.append(ns.close)
    # dummy is the natural choice; kernels without it (this one) get a veth
    # pair, which names the same two devices.
    r = ns.ip('link', 'add', 'dp0', 'type', 'dummy')
    if r.rc == 0:
        r = ns.ip('link', 'add', 'dp1', 'type', 'dummy')
    else:
        r = ns.ip('link', 'add', 'dp0', 'type', 'veth', 'peer', 'name', 'dp1')
    if r.rc:
        raise SetupError('cannot create dp0/dp1 in %s: %s' % (name, r.err.strip()))
    # no IPv6 on dp0/dp1: the kernel's own DAD, router solicitations and
    # MLD reports would otherwise pass netdev egress chains at random times
    # and show in their counters (nftdp's ports send nothing by themselves)
    for d in ('dp0', 'dp1'):
        run(['ip', 'netns', 'exec', name, 'sysctl', '-q', '-w',
             'net.ipv6.conf.%s.disable_ipv6=1' % d], timeout=10)
    for d in ('lo', 'dp0', 'dp1'):
        ns.ip('link', 'set', d, 'up')
    return name


class Netns:
    def __init__(self, ns):
        self.ns = ns

    def ip(self, *a):
        return run(['ip', '-n', self.ns] + list(a), timeout=10)

    def close(self):
        T.netns_del(self.ns, timeout=10)


class Nftdp(Side):
    """A private nftdp daemon, started here and stopped by pid."""
    name = 'nftdp'

    def __init__(self, h, n):
        self.h = h
        self.dir = tempfile.mkdtemp(prefix='nftdp-ct-%d-%d.' % (PID, n))
        h.cleanups.append(lambda: shutil.rmtree(self.dir, ignore_errors=True))
        self.sock = os.path.join(self.dir, 'nl.sock')
        self.logpath = os.path.join(self.dir, 'daemon.log')
        self.prefix = 'nftdp-ct-%d-%d' % (PID, n)
        self.proc = self.daemon = None
        # nft resolves interface names (dup to "dp1", iif "lo") and prints
        # ifindexes back as names in its own netns: run it in a netns laid
        # out like the kernel side's, so both nft see the same interfaces.
        self.ns = make_netns(h, self.prefix + '-d')
        for b in (h.daemon, h.wrapper):
            if not os.access(b, os.X_OK):
                raise SetupError('%s is not built' % b)
        extra = ['--control-only'] if h.control_only else []
        self.daemon = T.Daemon(None, T.eal_args(self.prefix, ['net_null0', 'net_null1'], (),
                                                log_level=None),
                               ['--socket', self.sock] + extra, self.prefix, self.logpath,
                               session=True, exe=h.daemon)
        self.proc = self.daemon.proc
        h.cleanups.append(self.stop)
        deadline = time.monotonic() + DAEMON_START_TIMEOUT
        while not os.path.exists(self.sock):
            if self.proc.poll() is not None:
                raise SetupError('nftdp exited with %d before creating its socket:\n%s'
                                 % (self.proc.returncode, self.logtail()))
            if time.monotonic() > deadline:
                raise SetupError('nftdp did not create %s within %ds:\n%s'
                                 % (self.sock, DAEMON_START_TIMEOUT, self.logtail()))
            time.sleep(0.05)

    def argv(self, args, user=None):
        return (['ip', 'netns', 'exec', self.ns] + USERS.get(user, [])
                + [self.h.wrapper] + args)

    def env(self):
        e = dict(os.environ)
        e['NFTDP_SOCKET'] = self.sock
        return e

    def alive(self):
        if self.proc is None:
            return 'not started'
        if self.proc.poll() is not None:
            return 'daemon exited with status %d' % self.proc.returncode
        return None

    def logtail(self, n=30):
        try:
            with open(self.logpath, errors='replace') as f:
                return ''.join(f.readlines()[-n:])
        except OSError:
            return ''

    def stop(self):
        if self.proc is None:
            return
        self.proc = None
        # SIGTERM, 5 s, SIGKILL; and the EAL's runtime folder of our --file-prefix
        self.daemon.stop(wait=5)


class SetupError(Exception):
    pass


# Elements with a timeout list the time left ("expires 59m59s992ms", JSON
# "expires": 3599), which depends on when the listing ran: that one field is
# normalised everywhere, nothing else.
EXPIRES = re.compile(r'(expires )[0-9dhms]+|("expires": )[0-9]+')


def norm_expires(s):
    return EXPIRES.sub(lambda m: (m.group(1) or m.group(2)) + '*', s)


def norm_common(s):
    return norm_monitor(norm_expires(s))


# nft -e and nft monitor print "# new generation N by process PID (nft)": the
# PID is that of the nft process that made the commit, which differs between
# the two runs; N and the process name are compared, only the PID is
# normalised.
GEN_PID = re.compile(r'(# new generation \d+ by process )\d+')


# A binding chain (`jump { ... }`) is named "__chainN" from one counter the
# kernel keeps since boot (nftdp: since the daemon started); nft prints the
# name only in echoes and monitor lines, where N is normalised.
BINDING_NAME = re.compile(r'\b__chain\d+\b')


def norm_monitor(s):
    return BINDING_NAME.sub('__chainN', GEN_PID.sub(r'\1PID', s))


def diff(a, b, la, lb):
    return ''.join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), la, lb))


class Harness:
    def __init__(self, opts):
        self.opts = opts
        self.build = os.path.abspath(opts.build)
        self.daemon = os.path.join(self.build, 'nftdp')
        self.wrapper = os.path.join(self.build, 'nftdp-nft')
        self.kernel_only = opts.kernel_only
        self.control_only = True
        self.passed = 0
        self.failed = 0
        self.failures = []   # (case, first line of the difference)
        self.cleanups = []
        self.nsessions = 0
        self.transcript = None
        self.daemons = []

    # --- sessions -------------------------------------------------------
    def session(self):
        """One kernel netns and (unless --kernel-only) one daemon."""
        self.nsessions += 1
        self.session_mark = len(self.cleanups)
        k = Kernel(self, self.nsessions)
        d = None
        if not self.kernel_only:
            try:
                d = Nftdp(self, self.nsessions)
                self.daemons.append(d)
            except SetupError as e:
                log('nftdp: ' + str(e))
                d = Broken(str(e))
        return k, d

    def resync(self, k, d, failed_before):
        """After a case that differed, both sides' histories (table handles,
        generation ids) may have diverged: start the next case on a fresh
        netns and a fresh daemon instead of cascading the difference."""
        if d is None or self.failed == failed_before:
            return k, d
        if isinstance(d, Nftdp) and d.alive():
            log('nftdp: %s; restarting; its log ended:\n%s' % (d.alive(), d.logtail()))
        self.cleanup(self.session_mark)
        self.daemons = []
        return self.session()

    def cleanup(self, mark=0):
        while len(self.cleanups) > mark:
            f = self.cleanups.pop()
            try:
                f()
            except Exception as e:  # keep cleaning
                log('cleanup: %s' % e)

    # --- results --------------------------------------------------------
    def ok(self, case):
        self.passed += 1
        if self.opts.verbose:
            log('PASS ' + case)

    def fail(self, case, detail, first=None):
        self.failed += 1
        log('FAIL ' + case)
        if detail:
            log(detail.rstrip('\n'))
        first = first or (detail.splitlines() or [''])[0]
        self.failures.append((case, first[:160] + ('...' if len(first) > 160 else '')))

    def record(self, label, args, r):
        if self.transcript is not None:
            self.transcript.append('$ nft %s\n%s' % (shlex.join(args), norm_common(r.text())))

    def compare(self, case, args, kr, dr, norm=None):
        """Compare one command's results; returns True when equal."""
        self.record(case, args, kr)
        if dr is None:
            return True
        kt, dt = norm_common(kr.text()), norm_common(dr.text())
        if norm:
            kt, dt = norm(kt), norm(dt)
        if kt == dt:
            self.ok(case)
            return True
        d = diff(kt, dt, 'kernel: nft ' + shlex.join(args), 'nftdp:  nft ' + shlex.join(args))
        first = next((l for l in d.splitlines()[2:] if l[:1] in '+-'), '')
        self.fail(case, d, first)
        return False

    def expect(self, case, cond, why):
        """A kernel-side sanity check of the corpus itself."""
        if cond:
            if self.kernel_only:
                self.ok(case)
            return True
        self.fail(case, 'kernel: ' + why)
        return False

    def both(self, k, d, case, args, cwd=None, user=None, norm=None):
        kr = k.nft(args, cwd=cwd, user=user)
        dr = d.nft(args, cwd=cwd, user=user) if d else None
        if d is not None and dr.rc != kr.rc and d.alive():
            dr.err += '[harness: %s]\n' % d.alive()
        self.compare(case, args, kr, dr, norm)
        return kr, dr

    def save(self, kind, name):
        if self.transcript is None or not self.opts.save:
            return
        path = os.path.join(self.opts.save, kind, name + '.out')
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w') as f:
            f.write(''.join(self.transcript))


class Broken(Side):
    """Stands in for a daemon that would not start: every command fails."""
    name = 'nftdp'

    def __init__(self, why):
        self.why = why

    def nft(self, args, cwd=None, user=None, timeout=CMD_TIMEOUT):
        return Result(125, '', '[harness: nftdp not running: %s]\n' % self.why.splitlines()[0])

    def popen(self, args, stdout, cwd=None):
        return subprocess.Popen(['sh', '-c', 'echo "[harness: nftdp not running]"'],
                                stdout=stdout, stderr=subprocess.STDOUT)

    def alive(self):
        return self.why


def selected(names, pattern):
    if not pattern:
        return names
    rx = re.compile(pattern)
    return [n for n in names if rx.search(n)]


# --- mode 1: listing conformance ------------------------------------------

OBJ_LIST = {   # -j key -> list command words
    'counter': ['counter'], 'quota': ['quota'], 'limit': ['limit'],
    'flowtable': ['flowtable'],
}


def listing_commands(js):
    """The per-object list commands for everything the kernel's -j dump shows."""
    cmds = []
    try:
        items = json.loads(js).get('nftables', [])
    except ValueError:
        return cmds
    for it in items:
        (kind, o), = it.items()
        if kind == 'table':
            cmds.append(['list', 'table', o['family'], o['name']])
        elif kind == 'chain':
            cmds.append(['list', 'chain', o['family'], o['table'], o['name']])
        elif kind in ('set', 'map'):
            cmds.append(['list', kind, o['family'], o['table'], o['name']])
        elif kind in OBJ_LIST:
            cmds.append(['list'] + OBJ_LIST[kind] + [o['family'], o['table'], o['name']])
    return cmds


def mode_listing(h):
    files = sorted(f for f in os.listdir(RULESETS) if f.endswith('.nft'))
    files = selected(files, h.opts.filter)
    k, d = h.session()
    nfailed = h.failed
    for f in files:
        name = f[:-4]
        h.transcript = []
        k, d = h.resync(k, d, nfailed)
        nfailed = h.failed
        t0 = time.monotonic()
        want_fail = name.startswith('err_')
        h.both(k, d, name + ': flush ruleset', ['flush', 'ruleset'], cwd=RULESETS)
        kr, _ = h.both(k, d, name + ': -f', ['-f', f], cwd=RULESETS)
        if want_fail:
            h.expect(name + ': kernel rejects', kr.rc != 0, 'expected -f %s to fail, it loaded' % f)
        elif not h.expect(name + ': kernel loads', kr.rc == 0,
                          'nft -f %s failed:\n%s' % (f, kr.err)):
            h.save('rulesets', name)
            continue
        cmds = [['list', 'ruleset'], ['-a', 'list', 'ruleset'], ['-j', 'list', 'ruleset']]
        kj = None
        for c in cmds:
            kr, _ = h.both(k, d, '%s: %s' % (name, ' '.join(c)), c, cwd=RULESETS)
            if c[0] == '-j':
                kj = kr.out
        if not want_fail:
            h.expect(name + ': non-empty', kj and '"table"' in kj, 'ruleset is empty after -f')
        for c in listing_commands(kj or '{}'):
            h.both(k, d, '%s: %s' % (name, ' '.join(c)), c, cwd=RULESETS)
            h.both(k, d, '%s: -a %s' % (name, ' '.join(c)), ['-a'] + c, cwd=RULESETS)
        h.save('rulesets', name)
        log('%s: %s (%.1fs)' % (name, 'ok' if h.failed == nfailed else 'DIFFERS',
                                time.monotonic() - t0))
    h.transcript = None


def unsupported_manifest():
    """tests/data/rulesets/UNSUPPORTED: 'FILE WHAT' lines, WHAT a word of the
    daemon's refusal ('nat: not supported by nftdp')."""
    out = {}
    with open(os.path.join(RULESETS, 'UNSUPPORTED')) as f:
        for line in f:
            line = line.split('#', 1)[0].strip()
            if line:
                name, what = line.split(None, 1)
                out[name] = what.strip()
    return out


def mode_roundtrip(h):
    """Every ruleset the kernel accepts is accepted and compiled by the
    deployed daemon (same listing), or refused with EOPNOTSUPP, leaving the
    ruleset empty, for the expression the manifest names."""
    files = sorted(f for f in os.listdir(RULESETS) if f.endswith('.nft')
                   and not f.startswith('err_'))
    files = selected(files, h.opts.filter)
    unsupported = unsupported_manifest()
    for f in unsupported:
        h.expect('UNSUPPORTED: %s exists' % f, os.path.exists(os.path.join(RULESETS, f)),
                 'manifest names a file that is not in the corpus')
    h.control_only = False
    try:
        k, d = h.session()
    finally:
        h.control_only = True
    compiled = refused = 0
    for f in files:
        name = f[:-4]
        kr = k.nft(['flush', 'ruleset'], cwd=RULESETS)
        kc = k.nft(['-c', '-f', f], cwd=RULESETS)
        h.expect(name + ': kernel checks', kc.rc == 0, 'nft -c -f %s:\n%s' % (f, kc.err))
        kr = k.nft(['-f', f], cwd=RULESETS)
        if not h.expect(name + ': kernel loads', kr.rc == 0, 'nft -f %s failed:\n%s'
                        % (f, kr.err)):
            continue
        if d is None or isinstance(d, Broken):
            continue
        d.nft(['flush', 'ruleset'], cwd=RULESETS)
        # nft -c runs every check a commit runs (issue 12): same exit
        # status and stderr as the real load, and it loads nothing
        cr = d.nft(['-c', '-f', f], cwd=RULESETS)
        after = d.nft(['list', 'ruleset'], cwd=RULESETS)
        h.expect(name + ': nft -c loads nothing', after.rc == 0 and after.out.strip() == '',
                 'ruleset after nft -c:\n%s' % after.out)
        log_before = len(d.logtail(100000))
        dr = d.nft(['-f', f], cwd=RULESETS)
        h.expect(name + ': nft -c as the load', (cr.rc, cr.err) == (dr.rc, dr.err),
                 'nft -c: exit %d\n%s\nnft -f: exit %d\n%s' % (cr.rc, cr.err, dr.rc, dr.err))
        if f in unsupported:
            refusal = d.logtail(100000)[log_before:]
            h.expect(name + ': refused with EOPNOTSUPP',
                     dr.rc != 0 and 'Operation not supported' in dr.err,
                     'expected EOPNOTSUPP for %s, got exit %d:\n%s'
                     % (unsupported[f], dr.rc, dr.err))
            h.expect(name + ': refusal names ' + unsupported[f], unsupported[f] in refusal,
                     'daemon log says:\n%s' % refusal)
            after = d.nft(['list', 'ruleset'], cwd=RULESETS)
            h.expect(name + ': nothing loaded', after.rc == 0 and after.out.strip() == '',
                     'ruleset after the refused batch:\n%s' % after.out)
            refused += 1
            continue
        if not h.expect(name + ': compiled and loaded', dr.rc == 0,
                        'exit %d:\n%s' % (dr.rc, dr.err)):
            continue
        compiled += 1
        kl = k.nft(['list', 'ruleset'], cwd=RULESETS)
        dl = d.nft(['list', 'ruleset'], cwd=RULESETS)
        h.compare(name + ': list ruleset', ['list', 'ruleset'], kl, dl)
    log('roundtrip: %d rulesets compiled, %d refused as the manifest says' % (compiled, refused))


# --- mode 2: command sequences ----------------------------------------------

def parse_cmds(path):
    """Lines of a .cmds file: (lineno, expect_fail, args).  '#' starts a
    comment line; a leading '!' says the kernel must reject the command."""
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith('#'):
                continue
            fail = s.startswith('!')
            if fail:
                s = s[1:].strip()
            out.append((i, fail, shlex.split(s)))
    return out


def directives(path, key):
    """'#@key: value' lines of a .cmds file."""
    vals = []
    with open(path) as f:
        for line in f:
            m = re.match(r'#@%s:\s*(.*)$' % key, line.strip())
            if m:
                vals.append(m.group(1))
    return vals


def run_sequence(h, k, d, name, path, stats):
    h.both(k, d, name + ': flush ruleset', ['flush', 'ruleset'], cwd=SEQUENCES)
    for lineno, fail, args in parse_cmds(path):
        case = '%s:%d: nft %s' % (name, lineno, shlex.join(args))
        atomic = fail and '-f' in args
        if atomic:   # a failing batch must leave the ruleset exactly as it was
            snap = ['-a', 'list', 'ruleset']
            before = [side.nft(snap, cwd=SEQUENCES).text() for side in (k, d) if side]
        kr, _ = h.both(k, d, case, args, cwd=SEQUENCES)
        if atomic:
            for side, b in zip([x for x in (k, d) if x], before):
                a = side.nft(snap, cwd=SEQUENCES).text()
                c = '%s (atomic: %s ruleset unchanged)' % (case, side.name)
                if a == b:
                    if side is d or h.kernel_only:
                        h.ok(c)
                else:
                    h.fail(c, diff(b, a, 'before', 'after'))
        stats['cmds'] += 1
        stats['fail'] += fail
        if fail:
            h.expect(case + ' (kernel rejects)', kr.rc != 0, 'expected failure, got exit 0')
        else:
            h.expect(case + ' (kernel accepts)', kr.rc == 0,
                     'expected success, got exit %d:\n%s' % (kr.rc, kr.err))
    for c in (['list', 'ruleset'], ['-a', 'list', 'ruleset']):
        h.both(k, d, '%s: final %s' % (name, ' '.join(c)), c, cwd=SEQUENCES)


def mode_sequences(h):
    """Files with a '#@daemon: deployed' line run against the daemon as it
    is deployed (rules compiled, generations built); the others against the
    control plane alone."""
    files = sorted(f for f in os.listdir(SEQUENCES)
                   if f.endswith('.cmds') and not f.startswith('mon_'))
    files = selected(files, h.opts.filter)
    deployed = [f for f in files
                if directives(os.path.join(SEQUENCES, f), 'daemon') == ['deployed']]
    stats = {'cmds': 0, 'fail': 0}
    for group, control_only in ((files, True), (deployed, False)):
        group = [f for f in group if control_only != (f in deployed)]
        if not group:
            continue
        h.control_only = control_only
        try:
            k, d = h.session()
            nfailed = h.failed
            for f in group:
                k, d = h.resync(k, d, nfailed)
                nfailed = h.failed
                h.transcript = []
                run_sequence(h, k, d, f[:-5], os.path.join(SEQUENCES, f), stats)
                h.save('sequences', f[:-5])
        finally:
            h.control_only = True
    h.transcript = None
    log('sequences: %d files (%d deployed), %d commands, %d expected to fail'
        % (len(files), len(deployed), stats['cmds'], stats['fail']))


# --- mode 3: monitor ----------------------------------------------------------

def monitor_run(h, side, margs, name, path):
    """Start `nft MARGS` in the background, run the sequence, stop it by pid."""
    outpath = os.path.join(h.tmp, '%s.%s.mon' % (name, side.name))
    with open(outpath, 'wb') as f:
        p = side.popen(margs, stdout=f, cwd=SEQUENCES)
    results = []
    try:
        time.sleep(0.7)     # let it join the multicast group
        for lineno, fail, args in parse_cmds(path):
            results.append((lineno, fail, args, side.nft(args, cwd=SEQUENCES)))
        time.sleep(0.5)     # let the last notifications arrive
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=5)
    with open(outpath, errors='replace') as f:
        return results, f.read()


def mode_monitor(h):
    files = sorted(f for f in os.listdir(SEQUENCES)
                   if f.startswith('mon_') and f.endswith('.cmds'))
    files = selected(files, h.opts.filter)
    k, d = h.session()
    nfailed = h.failed
    for f in files:
        name, path = f[:-5], os.path.join(SEQUENCES, f)
        h.transcript = []
        for mline in directives(path, 'monitor') or ['monitor']:
            k, d = h.resync(k, d, nfailed)
            nfailed = h.failed
            margs = shlex.split(mline)
            case = '%s [nft %s]' % (name, mline)
            h.both(k, d, case + ': flush ruleset', ['flush', 'ruleset'], cwd=SEQUENCES)
            kres, kmon = monitor_run(h, k, margs, name, path)
            dres, dmon = monitor_run(h, d, margs, name, path) if d else (None, None)
            for i, (lineno, fail, args, kr) in enumerate(kres):
                c = '%s:%d: nft %s' % (case, lineno, shlex.join(args))
                h.compare(c, args, kr, dres[i][3] if dres else None)
                h.expect(c + ' (kernel %s)' % ('rejects' if fail else 'accepts'),
                         (kr.rc != 0) == fail, 'unexpected exit %d' % kr.rc)
            kt = norm_monitor(kmon)
            if h.transcript is not None:
                h.transcript.append('$ nft %s  # output, PIDs normalised\n%s' % (mline, kt))
            h.expect(case + ': kernel monitor saw events', kt.strip() != '',
                     'monitor printed nothing')
            if d:
                dt = norm_monitor(dmon)
                if kt == dt:
                    h.ok(case + ': output')
                else:
                    dd = diff(kt, dt, 'kernel: nft ' + mline, 'nftdp:  nft ' + mline)
                    first = next((l for l in dd.splitlines()[2:] if l[:1] in '+-'), '')
                    h.fail(case + ': output', dd, first)
        h.save('monitor', name)
    h.transcript = None


# --- mode 4: concurrency ----------------------------------------------------

NPROC, NITER = 8, 50
HANDLE = re.compile(r'# handle (\d+)\s*$', re.M)


def concurrent_side(h, side):
    """8 workers at once, each adding NITER rules and deleting every other
    one again; returns a list of problems (empty when consistent)."""
    problems = []
    for args in (['flush', 'ruleset'], ['add', 'table', 'ip', 'cc'],
                 ['add', 'chain', 'ip', 'cc', 'c'],
                 ['add', 'rule', 'ip', 'cc', 'c', 'counter', 'comment', '"base"']):
        r = side.nft(args)
        if r.rc:
            return ['setup: nft %s: exit %d: %s' % (shlex.join(args), r.rc, r.err.strip())]
    lock = threading.Lock()

    def worker(w):
        for i in range(NITER):
            tag = 'w%d-i%d' % (w, i)
            r = side.nft(['-e', '-a', 'add', 'rule', 'ip', 'cc', 'c', 'counter',
                          'comment', '"%s"' % tag])
            m = HANDLE.search(r.out)
            if r.rc or not m:
                with lock:
                    problems.append('%s: add: exit %d, out %r, err %r'
                                    % (tag, r.rc, r.out.strip(), r.err.strip()))
                continue
            if i % 2 == 0:
                r = side.nft(['delete', 'rule', 'ip', 'cc', 'c', 'handle', m.group(1)])
                if r.rc:
                    with lock:
                        problems.append('%s: delete handle %s: exit %d: %s'
                                        % (tag, m.group(1), r.rc, r.err.strip()))

    ts = [threading.Thread(target=worker, args=(w,)) for w in range(NPROC)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    r = side.nft(['-j', 'list', 'chain', 'ip', 'cc', 'c'])
    if r.rc:
        return problems + ['final -j list chain: exit %d: %s' % (r.rc, r.err.strip())]
    try:
        rules = [it['rule'] for it in json.loads(r.out)['nftables'] if 'rule' in it]
    except (ValueError, KeyError) as e:
        return problems + ['final -j list chain: unparsable: %s' % e]
    got = sorted(x.get('comment', '') for x in rules)
    want = sorted(['base'] + ['w%d-i%d' % (w, i) for w in range(NPROC)
                              for i in range(NITER) if i % 2])
    if got != want:
        problems.append('final rules differ from the net effect:\n'
                        + diff('\n'.join(want) + '\n', '\n'.join(got) + '\n', 'expected', 'listed'))
    handles = [x['handle'] for x in rules]
    if len(set(handles)) != len(handles):
        problems.append('duplicate rule handles in the listing')
    # the text listing must agree with the JSON one
    t = side.nft(['-a', 'list', 'chain', 'ip', 'cc', 'c'])
    th = sorted(int(m.group(1)) for l in t.out.splitlines()
                if not l.lstrip().startswith(('table ', 'chain '))
                for m in [HANDLE.search(l)] if m)
    if th != sorted(handles):
        problems.append('-a list chain shows handles %d..., -j shows %d...'
                        % (len(th), len(handles)))
    return problems


def mode_concurrency(h):
    k, d = h.session()
    for side in [k] + ([d] if d else []):
        t0 = time.monotonic()
        problems = concurrent_side(h, side)
        case = 'concurrency: %s: %d workers x %d adds' % (side.name, NPROC, NITER)
        if problems:
            h.fail(case, '\n'.join(problems[:10]), problems[0].splitlines()[0])
        else:
            h.ok(case)
        log('%s: %.1fs' % (case, time.monotonic() - t0))


# --- mode 5: permissions ----------------------------------------------------

PERM_CMDS = [
    ['list', 'ruleset'],
    ['list', 'tables'],
    ['list', 'table', 'ip', 'p'],
    ['add', 'table', 'ip', 'x'],
    ['add', 'rule', 'ip', 'p', 'c', 'accept'],
    ['delete', 'table', 'ip', 'p'],
    ['flush', 'ruleset'],
    ['-f', 'perm_load.nft'],
]


def mode_permissions(h):
    k, d = h.session()
    if isinstance(d, Nftdp):
        # The daemon's socket is 0666, as anyone may open a netlink socket;
        # let everyone reach its directory, so that the daemon itself must
        # refuse (CAP_NET_ADMIN of the peer, docs/shim.md).
        os.chmod(d.dir, 0o755)
    h.transcript = []
    for args in (['flush', 'ruleset'], ['add', 'table', 'ip', 'p'],
                 ['add', 'chain', 'ip', 'p', 'c'], ['add', 'rule', 'ip', 'p', 'c', 'counter']):
        h.both(k, d, 'permissions: setup: nft ' + shlex.join(args), args, cwd=SEQUENCES)
    for args in PERM_CMDS:
        case = 'permissions: nobody: nft ' + shlex.join(args)
        kr, _ = h.both(k, d, case, args, cwd=SEQUENCES, user='nobody')
        h.expect(case + ' (kernel refuses)', kr.rc != 0 and 'Operation not permitted' in kr.err,
                 'expected EPERM, got exit %d: %s' % (kr.rc, kr.err))
    # root without CAP_NET_ADMIN: EPERM for everything (nfnetlink_rcv)
    for args in PERM_CMDS:
        case = 'permissions: root without CAP_NET_ADMIN: nft ' + shlex.join(args)
        kr, _ = h.both(k, d, case, args, cwd=SEQUENCES, user='root-nocap')
        h.expect(case + ' (kernel refuses)', kr.rc != 0 and 'Operation not permitted' in kr.err,
                 'expected EPERM, got exit %d: %s' % (kr.rc, kr.err))
    # conntrack -F (ctnetlink through the same socket) the same way
    if shutil.which('conntrack'):
        # the wrapper's preload list (with libasan first in a sanitizer build)
        shim = os.path.join(h.build, 'control', 'shim', 'libnftdp_shim.so')
        with open(h.wrapper) as f:
            m = re.search(r'^preload="([^"]*)"', f.read(), re.M)
        if m:
            shim = m.group(1)
        for user, ok in (('root-nocap', False), ('nobody', False)):
            case = 'permissions: %s: conntrack -F' % user
            pre = USERS[user] + ['conntrack', '-F']
            kr = run(['ip', 'netns', 'exec', k.ns] + pre)
            # EPERM: "sorry, you must be root or get CAP_NET_ADMIN", exit 1
            h.expect(case + ' (kernel)', (kr.rc == 0) == ok and 'CAP_NET_ADMIN' in kr.err,
                     'kernel: exit %d: %s' % (kr.rc, kr.err))
            if isinstance(d, Nftdp):
                e = d.env()
                e['LD_PRELOAD'] = shim
                dr = run(['ip', 'netns', 'exec', d.ns] + pre, env=e)
                h.expect(case + ' (nftdp as the kernel)', (dr.rc, dr.err) == (kr.rc, kr.err),
                         'nftdp: exit %d: %s' % (dr.rc, dr.err))
    h.both(k, d, 'permissions: unchanged', ['-a', 'list', 'ruleset'], cwd=SEQUENCES)
    # nobody with CAP_NET_ADMIN: allowed, as the kernel allows it
    for args in (['add', 'table', 'ip', 'x'], ['add', 'chain', 'ip', 'x', 'c'],
                 ['add', 'rule', 'ip', 'x', 'c', 'counter', 'accept'],
                 ['-a', 'list', 'ruleset'], ['delete', 'table', 'ip', 'x'],
                 ['list', 'tables']):
        case = 'permissions: nobody with CAP_NET_ADMIN: nft ' + shlex.join(args)
        kr, _ = h.both(k, d, case, args, cwd=SEQUENCES, user='nobody-cap')
        h.expect(case + ' (kernel allows)', kr.rc == 0,
                 'expected success, got exit %d: %s' % (kr.rc, kr.err))
    h.both(k, d, 'permissions: after', ['-a', 'list', 'ruleset'], cwd=SEQUENCES)
    h.save('permissions', 'permissions')
    h.transcript = None


def grp_gid(name):
    import grp
    return grp.getgrnam(name).gr_gid


MODES = {
    'listing': mode_listing, 'sequences': mode_sequences, 'monitor': mode_monitor,
    'concurrency': mode_concurrency, 'permissions': mode_permissions,
    'roundtrip': mode_roundtrip,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('build', help='meson build directory (holds nftdp and nftdp-nft)')
    ap.add_argument('mode', choices=sorted(MODES) + ['all'])
    ap.add_argument('--kernel-only', action='store_true',
                    help='run the kernel side only: check the corpus, save transcripts')
    ap.add_argument('--save', metavar='DIR',
                    help='write kernel transcripts under DIR (default with --kernel-only: '
                    'BUILD/nftcompare-kernel)')
    ap.add_argument('-k', dest='filter', metavar='REGEX',
                    default=os.environ.get('NFTCOMPARE_FILTER'),
                    help='only cases whose file matches (default: $NFTCOMPARE_FILTER, '
                    'for runs under meson test)')
    ap.add_argument('-v', dest='verbose', action='store_true', help='print passing checks too')
    ap.add_argument('--deadline', type=int, default=280,
                    help='give up (and clean up) after this many seconds')
    opts = ap.parse_args()
    if opts.kernel_only and not opts.save:
        opts.save = os.path.join(os.path.abspath(opts.build), 'nftcompare-kernel')

    if os.geteuid() != 0:
        log('SKIP: needs root (network namespaces, the daemon)')
        return 77
    for tool in ('ip', 'nft', 'setpriv'):
        if not shutil.which(tool):
            log('SKIP: %s not found' % tool)
            return 77

    h = Harness(opts)
    h.tmp = tempfile.mkdtemp(prefix='nftcompare-%d.' % PID)
    h.cleanups.append(lambda: shutil.rmtree(h.tmp, ignore_errors=True))
    atexit.register(h.cleanup)

    def on_signal(sig, frame):
        raise SystemExit('harness: %s' % signal.Signals(sig).name)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, on_signal)

    def on_alarm(sig, frame):
        raise SystemExit('harness: deadline of %ds passed' % opts.deadline)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(opts.deadline)

    t0 = time.monotonic()
    try:
        for m in (sorted(MODES) if opts.mode == 'all' else [opts.mode]):
            MODES[m](h)
    except SetupError as e:
        h.fail('setup', str(e))
    except (SystemExit, KeyboardInterrupt) as e:
        h.fail('harness', str(e) or 'interrupted')
    finally:
        signal.alarm(0)
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)   # let the cleanup finish
        for d in h.daemons:
            if d.alive():
                log('--- nftdp daemon log (%s), last lines:\n%s' % (d.alive() or 'running',
                                                                     d.logtail()))
        h.cleanup()
    if h.failures:
        log('\nfailures (case: first difference):')
        for case, first in h.failures[:200]:
            log('  %s: %s' % (case, first))
    log('(%.1fs%s)' % (time.monotonic() - t0, ', kernel only, transcripts in ' + opts.save
                       if opts.kernel_only else ''))
    log('%d passed, %d failed' % (h.passed, h.failed))
    return 1 if h.failed else 0


if __name__ == '__main__':
    sys.exit(main())
