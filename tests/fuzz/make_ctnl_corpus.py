#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write fuzz_nfnl's ctnetlink seeds (tests/fuzz/corpus/nfnl/ct-*): the
requests conntrack -I/-U/-G/-D/-L -z and conntrack -I expect send, as
libnetfilter_conntrack builds them, deterministic.

    tests/fuzz/make_ctnl_corpus.py [OUTDIR]
"""

import os
import socket
import struct
import sys

NESTED = 0x8000
F_REQUEST, F_ACK, F_EXCL, F_CREATE, F_DUMP = 0x1, 0x4, 0x200, 0x400, 0x300
CT, EXP = 1 << 8, 2 << 8  # NFNL_SUBSYS_CTNETLINK, NFNL_SUBSYS_CTNETLINK_EXP
CT_NEW, CT_GET, CT_DELETE, CT_GET_CTRZERO = 0, 1, 2, 3
EXP_NEW, EXP_GET, EXP_DELETE = 0, 1, 2


def attr(t, payload):
    a = struct.pack('=HH', 4 + len(payload), t) + payload
    return a + b'\0' * (-len(a) % 4)


def nest(t, *attrs):
    return attr(t | NESTED, b''.join(attrs))


def tuple_(t, src, dst, proto, sport, dport):
    v6 = ':' in src
    fam = socket.AF_INET6 if v6 else socket.AF_INET
    ip = nest(1, attr(3 if v6 else 1, socket.inet_pton(fam, src)),
              attr(4 if v6 else 2, socket.inet_pton(fam, dst)))
    pr = nest(2, attr(1, bytes([proto])), attr(2, struct.pack('>H', sport)),
              attr(3, struct.pack('>H', dport)))
    return nest(t, ip, pr)


def msg(mtype, flags, family, *attrs, seq=1):
    body = struct.pack('=BBH', family, 0, 0) + b''.join(attrs)
    return struct.pack('=IHHII', 16 + len(body), mtype, flags, seq, 0) + body


def be32(v):
    return struct.pack('>I', v)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus', 'nfnl')
    os.makedirs(out, exist_ok=True)
    orig = tuple_(1, '10.0.0.1', '10.0.0.2', 6, 1025, 80)
    reply = tuple_(2, '10.0.0.2', '10.0.0.1', 6, 80, 1025)
    tcp = nest(4, nest(1, attr(1, bytes([3]))))  # ESTABLISHED
    nat = nest(13, nest(1, attr(1, socket.inet_aton('192.0.2.1')),
                        attr(2, socket.inet_aton('192.0.2.1'))))  # CTA_NAT_DST
    seeds = {
        'ct-new': msg(CT | CT_NEW, F_REQUEST | F_ACK | F_CREATE | F_EXCL, 2, orig, reply,
                      attr(7, be32(120)), attr(3, be32(0x8)), tcp, attr(8, be32(5))),
        'ct-new-nat': msg(CT | CT_NEW, F_REQUEST | F_ACK | F_CREATE, 2,
                          tuple_(1, '10.0.0.3', '203.0.113.9', 17, 5000, 53),
                          attr(7, be32(30)), nat),
        'ct-update': msg(CT | CT_NEW, F_REQUEST | F_ACK, 2, orig, attr(8, be32(7)),
                         attr(26, be32(0xff)), attr(7, be32(60))),
        'ct-get': msg(CT | CT_GET, F_REQUEST | F_ACK, 2, orig),
        'ct-zero-dump': msg(CT | CT_GET_CTRZERO, F_REQUEST | F_DUMP, 0),
        'ct-delete': msg(CT | CT_DELETE, F_REQUEST | F_ACK, 2, reply, attr(12, be32(1))),
        'ct-new6': msg(CT | CT_NEW, F_REQUEST | F_ACK | F_CREATE, 10,
                       tuple_(1, '2001:db8::1', '2001:db8::2', 17, 9, 9), attr(7, be32(30))),
        'exp-new': msg(EXP | EXP_NEW, F_REQUEST | F_ACK | F_CREATE, 2,
                       tuple_(1, '10.0.0.1', '10.0.0.2', 6, 1025, 21),
                       tuple_(2, '10.0.0.2', '10.0.0.1', 6, 0, 2000),
                       tuple_(3, '255.255.255.255', '255.255.255.255', 6, 0, 0xffff),
                       attr(4, be32(300))),
        'exp-get': msg(EXP | EXP_GET, F_REQUEST | F_ACK, 2,
                       tuple_(2, '10.0.0.2', '10.0.0.1', 6, 0, 2000)),
        'exp-delete-all': msg(EXP | EXP_DELETE, F_REQUEST | F_ACK, 0),
    }
    seeds['ct-session'] = b''.join(seeds[k] for k in ('ct-new', 'ct-update', 'ct-get',
                                                       'ct-zero-dump', 'ct-delete'))
    for name, data in seeds.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


if __name__ == '__main__':
    main()
