#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write fuzz_nfnl's ipset seeds (tests/fuzz/corpus/nfnl/ipset-*): the
requests the ipset tool sends (type, create, add with one element and in
restore's ADT form with line numbers, test, list, swap, destroy), as
ipset 7.17 builds them, deterministic.

    tests/fuzz/make_ipset_corpus.py [OUTDIR]
"""

import os
import socket
import struct
import sys

NESTED, NETORDER = 0x8000, 0x4000
F_REQUEST, F_ACK, F_EXCL, F_CREATE, F_DUMP = 0x1, 0x4, 0x200, 0x400, 0x300
IPSET = 6 << 8
(PROTOCOL, CREATE, DESTROY, FLUSH, RENAME, SWAP, LIST, SAVE, ADD, DEL, TEST, HEADER,
 TYPE) = range(1, 14)
A_PROTOCOL, A_SETNAME, A_TYPENAME, A_REVISION, A_FAMILY, A_FLAGS, A_DATA, A_ADT, A_LINENO = \
    range(1, 10)
D_IP, D_IP_TO, D_CIDR, D_PORT, D_PORT_TO, D_TIMEOUT, D_PROTO, D_CADT_FLAGS = range(1, 9)
D_ETHER, D_NAME, D_IP2, D_COMMENT = 17, 18, 20, 26


def attr(t, payload):
    a = struct.pack('=HH', 4 + len(payload), t) + payload
    return a + b'\0' * (-len(a) % 4)


def nest(t, *attrs):
    return attr(t | NESTED, b''.join(attrs))


def u8(t, v):
    return attr(t, bytes([v]))


def be32(t, v):
    return attr(t | NETORDER, struct.pack('!I', v))


def be16(t, v):
    return attr(t | NETORDER, struct.pack('!H', v))


def strz(t, s):
    return attr(t, s.encode() + b'\0')


def ip4(t, a):
    return nest(t, attr(1 | NETORDER, socket.inet_aton(a)))


def msg(cmd, flags, *attrs, seq=1):
    body = struct.pack('=BBH', socket.AF_INET, 0, 0) + u8(A_PROTOCOL, 7) + b''.join(attrs)
    return struct.pack('=IHHII', 16 + len(body), IPSET | cmd, F_REQUEST | flags, seq, 0) + body


SEEDS = {
    'ipset-type': msg(TYPE, 0, strz(A_TYPENAME, 'hash:net'), u8(A_FAMILY, 2)),
    'ipset-create': msg(CREATE, F_ACK | F_EXCL | F_CREATE, strz(A_SETNAME, 'a'),
                        strz(A_TYPENAME, 'hash:net,port'), u8(A_REVISION, 8), u8(A_FAMILY, 2),
                        nest(A_DATA, be32(D_TIMEOUT, 60), be32(D_CADT_FLAGS, 0x18))),
    'ipset-add': msg(CREATE, F_ACK | F_CREATE, strz(A_SETNAME, 'a'),
                     strz(A_TYPENAME, 'hash:net,port'), u8(A_REVISION, 8), u8(A_FAMILY, 2),
                     nest(A_DATA)) +
    msg(ADD, F_ACK | F_EXCL, strz(A_SETNAME, 'a'),
        nest(A_DATA, ip4(D_IP, '10.0.0.0'), u8(D_CIDR, 8), be16(D_PORT, 80),
             be16(D_PORT_TO, 90), u8(D_PROTO, 6), be32(D_CADT_FLAGS, 4),
             strz(D_COMMENT, 'x')), seq=2),
    'ipset-restore': msg(CREATE, F_ACK | F_CREATE, strz(A_SETNAME, 'r'),
                         strz(A_TYPENAME, 'hash:ip'), u8(A_REVISION, 6), u8(A_FAMILY, 2),
                         nest(A_DATA)) +
    msg(ADD, F_ACK | F_EXCL, strz(A_SETNAME, 'r'), attr(A_LINENO, struct.pack('=I', 0)),
        nest(A_ADT, *[nest(A_DATA, ip4(D_IP, '192.0.2.%d' % i), ip4(D_IP_TO, '192.0.2.%d' % (i + 3)),
                           attr(A_LINENO, struct.pack('=I', i))) for i in (1, 2, 3)]), seq=2),
    'ipset-test': msg(TEST, F_ACK, strz(A_SETNAME, 'a'),
                      nest(A_DATA, ip4(D_IP, '10.1.2.3'), be16(D_PORT, 85), u8(D_PROTO, 6))),
    'ipset-list': msg(LIST, F_ACK | F_DUMP, be32(A_FLAGS, 0)),
    # bitmap:ip,mac: an element without a MAC, then its MAC, a test
    'ipset-bitmap-ipmac': msg(CREATE, F_ACK | F_EXCL | F_CREATE, strz(A_SETNAME, 'm'),
                              strz(A_TYPENAME, 'bitmap:ip,mac'), u8(A_REVISION, 3),
                              u8(A_FAMILY, 2),
                              nest(A_DATA, ip4(D_IP, '10.0.0.0'), u8(D_CIDR, 24),
                                   be32(D_TIMEOUT, 60), be32(D_CADT_FLAGS, 0x8))) +
    msg(ADD, F_ACK | F_EXCL, strz(A_SETNAME, 'm'), nest(A_DATA, ip4(D_IP, '10.0.0.1')), seq=2) +
    msg(ADD, F_ACK | F_EXCL, strz(A_SETNAME, 'm'),
        nest(A_DATA, ip4(D_IP, '10.0.0.1'), attr(D_ETHER, bytes([0, 1, 2, 3, 4, 5]))), seq=3) +
    msg(TEST, F_ACK, strz(A_SETNAME, 'm'),
        nest(A_DATA, ip4(D_IP, '10.0.0.1'), attr(D_ETHER, bytes([0, 1, 2, 3, 4, 6]))), seq=4),
    'ipset-swap-destroy': msg(SWAP, F_ACK, strz(A_SETNAME, 'a'), strz(A_TYPENAME, 'r')) +
    msg(DESTROY, F_ACK, seq=2),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus', 'nfnl')
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)


main()
