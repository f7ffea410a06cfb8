#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send one of two batches of set elements with expressions of their own
in a set that declares none, as nft 1.0.6 cannot (it asks the set to
declare the statements) and the kernel takes (nft_add_set_elem), and print
'ok' or the errno of each refused message. 'create': table x, sets y and z
with their elements (a quota, a counter with a limit, a counter, none;
none in z) and a chain whose rules look them up; 'later': elements with
expressions added to both. Only under the nftdp shim (LD_PRELOAD, like
nft) or in a network namespace other than the one whose inode argv[2]
names (the caller's): never the host's nf_tables. 0011_elem_expr_raw_0.sh runs it on both sides."""
import os
import socket
import struct
import sys

NETLINK_NETFILTER, NLM_F_REQUEST, NLM_F_CREATE, NLM_F_APPEND = 12, 1, 0x400, 0x800
NLMSG_ERROR, NLA_F_NESTED = 2, 0x8000
SUBSYS, BATCH_BEGIN, BATCH_END = 10, 0x10, 0x11
NEWTABLE, NEWCHAIN, NEWRULE, NEWSET, NEWSETELEM = 0, 3, 6, 9, 12


def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack('=HH', n, t) + payload + b'\0' * ((4 - n % 4) % 4)


def nest(t, *parts):
    return attr(t | NLA_F_NESTED, b''.join(parts))


def s(t, v):
    return attr(t, v.encode() + b'\0')


def u32(t, v):
    return attr(t, struct.pack('>I', v))


def u64(t, v):
    return attr(t, struct.pack('>Q', v))


def expr(name, *data):
    return s(1, name) + (nest(2, *data) if data else b'')


def counter(pk, by):
    return expr('counter', u64(1, by), u64(2, pk))


def quota(nbytes, consumed, over):
    return expr('quota', u64(1, nbytes), u32(2, 1 if over else 0), u64(4, consumed))


def limit(rate, unit, burst, over):
    return expr('limit', u64(1, rate), u64(2, unit), u32(3, burst), u32(4, 0),
                u32(5, 1 if over else 0))


def elem(addr, *exprs):
    key = nest(1, attr(1, socket.inet_aton(addr)))
    if len(exprs) == 1:
        return nest(1, key, nest(7, exprs[0]))   # NFTA_SET_ELEM_EXPR
    if exprs:
        return nest(1, key, nest(11, *(nest(1, e) for e in exprs)))  # _EXPRESSIONS
    return nest(1, key)


def elems(setname, *e):
    return s(1, 'x') + s(2, setname) + nest(3, *e)


def lookup_rule(setname, off):
    load = nest(1, expr('payload', u32(1, 1), u32(2, 1), u32(3, off), u32(4, 4)))
    lk = nest(1, expr('lookup', s(1, setname), u32(2, 1)))
    return s(1, 'x') + s(2, 'c') + nest(4, load, lk)


def msg(mtype, seq, body=b'', flags=0, family=socket.AF_INET, res_id=0):
    hdr = struct.pack('=BBH', family, 0, socket.htons(res_id))
    return (struct.pack('=IHHII', 16 + len(hdr) + len(body), mtype, NLM_F_REQUEST | flags, seq, 0) +
            hdr + body)


def batch(which):
    m = []
    if which == 'create':
        m.append((NEWTABLE, s(1, 'x')))
        for i, name in enumerate(('y', 'z')):
            m.append((NEWSET, s(1, 'x') + s(2, name) + u32(3, 0) + u32(4, 7) + u32(5, 4) +
                      u32(10, i + 1)))
        m.append((NEWSETELEM, elems('y', elem('10.1.0.1', quota(1000, 10, True)),
                                    elem('10.1.0.2', counter(3, 300), limit(2, 60, 3, True)),
                                    elem('10.1.0.3', counter(5, 50)), elem('10.1.0.4'))))
        m.append((NEWSETELEM, elems('z', elem('10.2.0.1'))))
        m.append((NEWCHAIN, s(1, 'x') + s(3, 'c')))
        m.append((NEWRULE, lookup_rule('y', 12)))
        m.append((NEWRULE, lookup_rule('z', 16)))
    else:
        m.append((NEWSETELEM, elems('y', elem('10.1.0.5', quota(500, 0, False)))))
        m.append((NEWSETELEM, elems('z', elem('10.2.0.2', counter(7, 70)),
                                    elem('10.2.0.3', quota(100, 0, True), counter(0, 0)))))
    out = msg(BATCH_BEGIN, 0, family=0, res_id=SUBSYS)
    for i, (t, body) in enumerate(m):
        fl = NLM_F_CREATE | (NLM_F_APPEND if t == NEWRULE else 0)
        out += msg(SUBSYS << 8 | t, i + 1, body, fl)
    return out + msg(BATCH_END, len(m) + 1, family=0, res_id=SUBSYS)


def main():
    shim = any('libnftdp_shim' in l for l in open('/proc/self/maps'))
    # argv[2]: the caller's own namespace (its /proc/self/ns/net inode),
    # which this one must not be
    own_ns = len(sys.argv) > 2 and os.stat('/proc/self/ns/net').st_ino != int(sys.argv[2])
    if not (shim or own_ns):
        print('elem_expr_msg.py: neither the shim nor a scratch netns: not sending')
        return 2
    sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sk.settimeout(2)
    sk.sendto(batch(sys.argv[1] if len(sys.argv) > 1 else 'create'), (0, 0))
    errs = []
    try:
        while True:
            data = sk.recv(65536)
            off = 0
            while off + 16 <= len(data):
                ln, t, _, seq, _ = struct.unpack_from('=IHHII', data, off)
                if t == NLMSG_ERROR:
                    err, = struct.unpack_from('=i', data, off + 16)
                    if err:
                        errs.append('msg %d: %s' % (seq, os.strerror(-err)))
                off += max(ln, 16)
    except (socket.timeout, BlockingIOError):
        pass
    print('\n'.join(errs) if errs else 'ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
