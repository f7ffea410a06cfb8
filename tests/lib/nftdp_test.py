# SPDX-License-Identifier: BSD-3-Clause
"""Shared helpers of the Python test harnesses (issue 18, item 5).

A harness imports this module through its path relative to the harness:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    '..', '..', 'lib'))
    import nftdp_test as T

and finds each piece once here:

- outcome: Checks (an ok/FAIL line per check, exit 1 on any failure),
  skip() for exit 77, which tools/test.sh turns into a failure under CI as
  root, where no root-only suite has a reason to skip;
- commands: sh() (check=True, a timeout, optionally inside a netns) and
  run() (its own process group, killed whole on a timeout or an exception);
- scratch network namespaces with unique names: netns_add(), netns_del(),
  veth(), packet_socket(), and Cleanup to delete them (and kill daemons,
  remove folders) at exit and on SIGTERM/SIGINT/SIGHUP;
- the daemon: eal_args() (the EAL arguments every harness gives),
  run_offline() (a replay that ends by --exit-on-idle) and Daemon (a live
  nftdp, optionally inside a netns, stopped by pid with a bounded wait);
  the EAL's runtime folder is removed after both;
- the stock nft against a daemon's socket: nft_argv() and nft_env()
  (NFTDP_SOCKET, the nftdp-nft wrapper or the shim);
- captures: write_pcap() and read_pcap() on raw frames (scapy's raw pcap
  reader and writer, imported only when used).

Nothing here changes the root namespace: every namespace it creates is a
scratch one the harness names, and deletes.
"""
import atexit
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import struct
import sys
import tempfile
import time

SKIP = 77  # meson's exit status for a skipped test
STEP_TIMEOUT = 20  # seconds for one setup command (ip, sysctl, nft)
DPDK_RUN_DIRS = ('/var/run/dpdk', '/run/dpdk')


# ---------------------------------------------------------------- outcome

def is_root():
    return os.geteuid() == 0


def skip(msg):
    """Print msg and exit 77 (skipped). Under CI=true as root tools/test.sh
    counts a skip as a failure: say so next to the reason."""
    print(msg, flush=True)
    if is_root() and os.environ.get('CI') == 'true':
        print('(CI=true as root: tools/test.sh counts this skip as a failure)', flush=True)
    sys.exit(SKIP)


class Checks:
    """Named checks: each prints `ok   what` or `FAIL what`; a harness ends
    with exit_code() (0, or 1 when one failed) or report(name)."""

    def __init__(self, flush=False):
        self.failures = []
        self.flush = flush

    def check(self, cond, what):
        print(('ok   ' if cond else 'FAIL ') + what, flush=self.flush)
        if not cond:
            self.failures.append(what)
        return bool(cond)

    def exit_code(self):
        return 1 if self.failures else 0

    def report(self, name):
        """Print `name: passed` or `name: FAILED: n` and return the exit code."""
        print('%s: %s' % (name, 'FAILED: %d' % len(self.failures) if self.failures
                          else 'passed'))
        return self.exit_code()


def run_root_test(name, checks, main, cleanup=None):
    """A root test's frame: skip unless root, main(tmp) in a scratch folder
    with cleanup() before and after (namespaces, daemons), then exit with
    checks' report under name."""
    tmp = tempfile.mkdtemp(prefix='nftdp-%s.' % name)
    try:
        if not is_root():
            skip('SKIP: needs root')
        if cleanup:
            cleanup()
        main(tmp)
    finally:
        if cleanup:
            cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(checks.report(name))


# ---------------------------------------------------------------- commands

def in_ns(ns):
    """The argv prefix that runs a command inside netns ns (none for None)."""
    return ['ip', 'netns', 'exec', ns] if ns else []


def ns_argv(ns, argv):
    """argv run inside netns ns: `ip -n NS ...` for ip itself (one process
    instead of two: the differential sets up about 45 links, addresses and
    routes a case), else in_ns(ns) + argv."""
    argv = list(argv)
    if ns and argv and argv[0] == 'ip' and argv[1:2] != ['netns']:
        return ['ip', '-n', ns] + argv[1:]
    return in_ns(ns) + argv


def sh(*argv, ns=None, timeout=STEP_TIMEOUT, check=True, input=None, env=None, merge=False):
    """Run argv (inside ns if given) and return its CompletedProcess, text
    stdout and stderr (merge: stderr into stdout). check raises
    CalledProcessError on a non-zero exit; a timeout raises TimeoutExpired."""
    return subprocess.run(ns_argv(ns, argv), check=check, input=input, env=env,
                          timeout=timeout, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merge else subprocess.PIPE)


class Result:
    """What run() returns: exit status, stdout, stderr (text), and whether
    the command ran past its timeout (rc is then 124)."""
    __slots__ = ('rc', 'out', 'err', 'timed_out')

    def __init__(self, rc, out, err, timed_out=False):
        self.rc, self.out, self.err, self.timed_out = rc, out, err, timed_out

    def text(self):
        s = '[exit %d]\n' % self.rc
        if self.out:
            s += '[stdout]\n' + self.out + ('' if self.out.endswith('\n') else '\n[no newline]\n')
        if self.err:
            s += '[stderr]\n' + self.err + ('' if self.err.endswith('\n') else '\n[no newline]\n')
        return s


def kill_group(p):
    """SIGKILL p's process group (p was started with start_new_session) and reap p."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


def run(argv, env=None, cwd=None, timeout=STEP_TIMEOUT, stdin=None):
    """Run argv in its own process group and return a Result. On a timeout
    the whole group is killed and rc is 124; on any exception (a harness's
    alarm, a signal) the group is killed before it propagates, so nothing
    is left behind. stdin: bytes or str to feed, or None for /dev/null.
    A command that cannot be executed gives rc 127."""
    if isinstance(stdin, str):
        stdin = stdin.encode()
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                             env=env, cwd=cwd, start_new_session=True)
    except OSError as e:
        return Result(127, '', 'cannot execute %s: %s\n' % (argv[0], e))
    try:
        out, err = p.communicate(input=stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return Result(124, out.decode(errors='replace'),
                      err.decode(errors='replace') + '[harness: timed out after %ds]\n' % timeout,
                      True)
    except BaseException:
        kill_group(p)
        raise
    return Result(p.returncode, out.decode(errors='replace'), err.decode(errors='replace'))


# ---------------------------------------------------------------- cleanup

class Cleanup:
    """Callbacks run once, last added first, at exit and on SIGTERM, SIGINT
    and SIGHUP (after which the harness exits 128 + the signal). A callback
    that raises does not stop the others."""

    def __init__(self):
        self.fns = []
        self.done = False

    def add(self, fn):
        self.fns.append(fn)
        return fn

    def run(self):
        while self.fns:
            fn = self.fns.pop()
            try:
                fn()
            except Exception as e:  # cleanup goes on
                print('cleanup: %s' % e, file=sys.stderr)

    def install(self, signals=(signal.SIGTERM, signal.SIGINT, signal.SIGHUP)):
        atexit.register(self.run)

        def on_signal(sig, frame):
            self.run()
            sys.exit(128 + sig)
        for s in signals:
            signal.signal(s, on_signal)
        return self


# ---------------------------------------------------------------- namespaces

def netns_name(tag, *parts):
    """A scratch netns name unique to this process: nftdp-TAG-PID[-part...]."""
    return '-'.join(['nftdp-%s-%d' % (tag, os.getpid())] + [str(p) for p in parts])


def netns_del(*names, timeout=30):
    """Delete these namespaces, quietly (they may not exist)."""
    for ns in names:
        subprocess.run(['ip', 'netns', 'del', ns], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout)


def netns_add(name, ipv6=True, timeout=STEP_TIMEOUT):
    """Create netns name; ipv6=False turns IPv6 off in it (all and default),
    so its kernel sends no router solicitations or DAD on the test links."""
    sh('ip', 'netns', 'add', name, timeout=timeout)
    if not ipv6:
        sh('sysctl', '-q', '-w', 'net.ipv6.conf.all.disable_ipv6=1',
           'net.ipv6.conf.default.disable_ipv6=1', ns=name, timeout=timeout)
    return name


def veth(ns, dev, peer, peer_ns=None, index=None, peer_index=None, mac=None, peer_mac=None,
         up=True):
    """A veth pair dev (in ns) and peer (in peer_ns, or ns), optionally with
    fixed ifindexes and MAC addresses, both set up unless up=False."""
    a = ['ip', 'link', 'add', dev]
    if index is not None:
        a += ['index', str(index)]
    if mac:
        a += ['address', mac]
    a += ['type', 'veth', 'peer', 'name', peer]
    if peer_index is not None:
        a += ['index', str(peer_index)]
    if peer_mac:
        a += ['address', peer_mac]
    if peer_ns:
        a += ['netns', peer_ns]
    sh(*a, ns=ns)
    if up:
        sh('ip', 'link', 'set', dev, 'up', ns=ns)
        sh('ip', 'link', 'set', peer, 'up', ns=peer_ns or ns)


_libc = None


def packet_socket(ns, dev):
    """An AF_PACKET socket bound to dev inside netns ns (a socket keeps the
    namespace it was made in; this process's own namespace is restored)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    own = os.open('/proc/self/ns/net', os.O_RDONLY)
    fd = os.open('/var/run/netns/%s' % ns, os.O_RDONLY)
    try:
        if _libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
            raise OSError(ctypes.get_errno(), 'setns')
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))  # ETH_P_ALL
        s.bind((dev, 3))
    finally:
        _libc.setns(own, 0x40000000)
        os.close(fd)
        os.close(own)
    return s


# ---------------------------------------------------------------- the daemon

HUGEPAGES_NR = '/proc/sys/vm/nr_hugepages'
HUGEPAGES_ENV = 'NFTDP_TEST_HUGEPAGES'


def hugepages_reserve(n):
    """Add n 2 MiB hugepages to the kernel's pool for the daemons of this
    run, and set HUGEPAGES_ENV so that eal_args (here and in child
    processes) gives them --in-memory: EAL takes its pages from the pool
    as it needs them, no mount. Returns n, or 0 (nothing reserved, the
    daemons stay --no-huge) when the kernel cannot give them all.
    hugepages_release(n) gives them back. Worth it: a table of 64 MiB
    zeroed page by 4 KiB page costs seconds on a loaded VM. Under a
    parent that reserved already (tools/test.sh) it reserves nothing and
    returns 0."""
    if os.environ.get(HUGEPAGES_ENV) == '1':
        return 0
    try:
        with open(HUGEPAGES_NR) as f:
            before = int(f.read())
        with open(HUGEPAGES_NR, 'w') as f:
            f.write(str(before + n))
        with open(HUGEPAGES_NR) as f:
            got = int(f.read()) - before
    except (OSError, ValueError):
        return 0
    if got < n:
        hugepages_release(max(got, 0))
        return 0
    os.environ[HUGEPAGES_ENV] = '1'
    return n


def hugepages_release(n):
    """Take n pages back out of the pool (those a daemon still holds go
    when it ends), and stop giving --in-memory."""
    os.environ.pop(HUGEPAGES_ENV, None)
    if n <= 0:
        return
    try:
        with open(HUGEPAGES_NR) as f:
            now = int(f.read())
        with open(HUGEPAGES_NR, 'w') as f:
            f.write(str(max(now - n, 0)))
    except (OSError, ValueError) as e:
        print('hugepages: could not give back %d pages: %s' % (n, e), flush=True)


def eal_args(prefix, vdevs=(), lcores=('-l', '0-1'), mem=512, log_level='lib.*:warning'):
    """The EAL arguments of a test daemon: lcores, no hugepages and mem MiB
    (or, after hugepages_reserve, --in-memory from the reserved pages), no
    PCI, the vdevs, its own --file-prefix (its runtime folder), and a log
    level (None: the default)."""
    if os.environ.get(HUGEPAGES_ENV) == '1':
        a = list(lcores) + ['--in-memory', '--no-pci']
    else:
        a = list(lcores) + ['--no-huge', '-m', str(mem), '--no-pci']
    a += ['--vdev=' + v for v in vdevs]
    a += ['--file-prefix', prefix]
    if log_level:
        a.append('--log-level=' + log_level)
    return a


def rm_runtime(prefix):
    """Remove the EAL's runtime folder of --file-prefix prefix."""
    for base in DPDK_RUN_DIRS:
        shutil.rmtree(os.path.join(base, prefix), ignore_errors=True)


def run_offline(build, eal, args, prefix, timeout=60, ns=None, text=True, merge=True):
    """Run BUILD/nftdp EAL -- ARGS to its end (an offline replay ends by
    --exit-on-idle) and return its CompletedProcess (stdout with stderr
    merged unless merge=False); the runtime folder of prefix is removed
    however it ends. A timeout raises TimeoutExpired."""
    argv = in_ns(ns) + [os.path.join(build, 'nftdp')] + list(eal) + ['--'] + list(args)
    try:
        return subprocess.run(argv, timeout=timeout, stdout=subprocess.PIPE, text=text,
                              stderr=subprocess.STDOUT if merge else subprocess.PIPE)
    finally:
        rm_runtime(prefix)


class Daemon:
    """A live nftdp (BUILD/nftdp EAL -- ARGS), logging to log_path.

    In a netns, `ip netns exec` may fork: the daemon then runs under
    `sh -c 'echo $$ >pidfile; exec ...'` and stop() signals the pid sh
    wrote, the daemon's own. limit wraps it in `timeout LIMIT` so that it
    cannot outlive a harness that died; session starts it in its own
    session (a signal to the harness does not reach it)."""

    def __init__(self, build, eal, args, prefix, log_path, ns=None, pid_path=None, limit=None,
                 session=False, exe=None):
        self.prefix, self.log_path, self.pid_path = prefix, log_path, pid_path
        self.session = session
        argv = [exe or os.path.join(build, 'nftdp')] + list(eal) + ['--'] + list(args)
        if limit:
            argv = ['timeout', str(limit)] + argv
        if ns:
            if not self.pid_path:
                self.pid_path = log_path + '.pid'
            argv = in_ns(ns) + ['sh', '-c', 'echo $$ >"$0"; exec "$@"', self.pid_path] + argv
        log = open(log_path, 'w')
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=session)
        log.close()

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except OSError:
            return ''

    def logtail(self, n=30):
        return ''.join(self.log().splitlines(True)[-n:])

    def alive(self):
        return self.proc.poll() is None

    def wait_started(self, marker=' mode\n', sock=None, timeout=20):
        """Wait until the log holds marker (nftdp logs `... mode` once its
        ruleset is loaded and its workers run; None: no marker) and sock
        (if given) exists; raise RuntimeError with the log's end if the
        daemon exits first or timeout seconds pass."""
        end = time.monotonic() + timeout
        while (marker and marker not in self.log()) or (sock and not os.path.exists(sock)):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise RuntimeError('nftdp did not start: ' + self.log()[-800:])
            time.sleep(0.05)

    def pid(self):
        """The daemon's pid: the one sh wrote in a netns, else the child's."""
        if self.pid_path:
            try:
                with open(self.pid_path) as f:
                    return int(f.read())
            except (OSError, ValueError):
                return None
        return self.proc.pid

    def stop(self, wait=20, sig=signal.SIGTERM):
        """Send sig to the daemon, wait up to wait seconds, then SIGKILL it
        (its session too when it has one); remove its runtime folder.
        Returns its exit status."""
        p = self.proc
        if p.poll() is None:
            pid = self.pid()
            try:
                if pid:
                    os.kill(pid, sig)
                else:
                    p.send_signal(sig)
            except ProcessLookupError:
                pass
            try:
                p.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                print('nftdp pid %s ignored signal %d for %ds; SIGKILL' % (pid or p.pid, sig, wait),
                      flush=True)
                if self.session:
                    kill_group(p)
                else:
                    p.kill()
                    p.wait()
        rm_runtime(self.prefix)
        return p.returncode


# ---------------------------------------------------------------- nft

def nft_argv(build=None, ns=None, exe=None):
    """The stock nft against a daemon: BUILD/nftdp-nft (nft with the shim
    preloaded) or exe (plain `nft` for the kernel), inside ns if given."""
    return in_ns(ns) + [exe or os.path.join(build, 'nftdp-nft')]


def nft_env(sock, shim=None, env=None):
    """The environment for nft or conntrack against the daemon's socket:
    NFTDP_SOCKET, and LD_PRELOAD=shim when the tool is not nftdp-nft."""
    e = dict(os.environ if env is None else env, NFTDP_SOCKET=sock)
    if shim:
        e['LD_PRELOAD'] = shim
    return e


def shim_path(build):
    """The shim library: $SHIM (a sanitizer build's), else BUILD's."""
    return os.environ.get('SHIM') or os.path.join(build, 'control/shim/libnftdp_shim.so')


# ---------------------------------------------------------------- captures

def inet_csum(b):
    """The Internet checksum (RFC 1071) of b, odd lengths padded with a zero."""
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def mac_bytes(s):
    """'02:00:..' -> its 6 bytes."""
    return bytes(int(x, 16) for x in s.split(':'))


def strip_times(data):
    """A pcap's records without their timestamps."""
    out, i = [], 0
    while i + 16 <= len(data):
        incl = int.from_bytes(data[i + 8:i + 12], 'little')
        out.append(data[i + 8:i + 16 + incl])
        i += 16 + incl
    return out

PCAP_SNAPLEN = 262144


def write_pcap(path, frames, stamp=None):
    """Write raw Ethernet frames (bytes) to a pcap (microseconds, host
    order, as libpcap writes one). stamp(i) gives frame i's (sec, usec);
    by default 1700000000 s plus i ms. No scapy: importing it costs half
    a second, and the differential writes several captures a case."""
    stamp = stamp or (lambda i: (1700000000 + i // 1000, (i % 1000) * 1000))
    with open(path, 'wb') as f:
        f.write(struct.pack('=IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, PCAP_SNAPLEN, 1))
        for i, fr in enumerate(frames):
            sec, usec = stamp(i)
            fr = bytes(fr)
            f.write(struct.pack('=IIII', sec, usec, len(fr), len(fr)))
            f.write(fr)


def read_pcap(path):
    """The frames of a pcap (either byte order, micro- or nanosecond
    stamps) as bytes; [] when it is missing or empty. A record cut short
    at the end (a writer killed mid-record) is left out."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 24:
        raise ValueError('%s: not a pcap (%d bytes)' % (path, len(data)))
    for order in '<>':
        if struct.unpack(order + 'I', data[:4])[0] in (0xa1b2c3d4, 0xa1b23c4d):
            break
    else:
        raise ValueError('%s: not a pcap (magic %s)' % (path, data[:4].hex()))
    out, i = [], 24
    while i + 16 <= len(data):
        incl = struct.unpack(order + 'I', data[i + 8:i + 12])[0]
        if i + 16 + incl > len(data):
            break
        out.append(data[i + 16:i + 16 + incl])
        i += 16 + incl
    return out
