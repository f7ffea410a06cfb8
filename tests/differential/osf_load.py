#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The osf fingerprints of a differential case (its OSF list), loaded or
removed over raw netlink as nfnl_osf does: OSF_MSG_ADD (NLM_F_CREATE |
NLM_F_EXCL) or OSF_MSG_REMOVE of one struct nf_osf_user_finger in
OSF_ATTR_FINGER (include/uapi/linux/netfilter/nfnetlink_osf.h, host byte
order), each acknowledged.

    osf_load.py add|remove FILE [--shim]

FILE is a JSON list of fingerprints (see record()); prints the errno of
each answer (0, 17 EEXIST, 2 ENOENT, ...) on one line, in FILE's order.
The kernel's list is global, not per namespace: run.py adds them from
the scratch netns and removes in a finally exactly those it added.
--shim: refuse unless the nftdp shim is loaded (so a missing shim never
reaches the host's database)."""
import json
import socket
import struct
import sys

NETLINK_NETFILTER, NFNL_SUBSYS_OSF = 12, 5
OSF_MSG_ADD, OSF_MSG_REMOVE, OSF_ATTR_FINGER = 0, 1, 1
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400
NLMSG_ERROR = 2
MAXGENRELEN, MAX_IPOPTLEN = 32, 40
WSS = {'plain': 0, 'mss': 1, 'mtu': 2, 'modulo': 3}  # OSF_WSS_*
OPT = {'E': (0, 1), 'N': (1, 1), 'M': (2, 4), 'W': (3, 3), 'S': (4, 2), 'T': (8, 10)}


def record(fp):
    """struct nf_osf_user_finger (592 bytes) of a fingerprint: a dict with
    genre, version, subtype (strings), ttl, df, ss (IP total length of the
    SYN), wss ([kind, value], kind one of WSS) and opts (a string of OPT
    letters: the options in order, each of its usual length)."""
    kind, val = fp['wss']
    opts = [OPT[c] for c in fp['opts']]
    assert len(opts) <= MAX_IPOPTLEN
    # wss {wc, val}, ttl, df, ss, mss, opt_num
    f = struct.pack('=II', WSS[kind], val)
    f += struct.pack('=BBHHH', fp['ttl'], fp['df'], fp['ss'], 0, len(opts))
    for key in ('genre', 'version', 'subtype'):
        s = fp.get(key, '').encode()
        assert len(s) < MAXGENRELEN
        f += s.ljust(MAXGENRELEN, b'\0')
    for k, length in opts + [(0, 0)] * (MAX_IPOPTLEN - len(opts)):
        f += struct.pack('=HHII', k, length, 0, 0)  # kind, length, wc {wc, val}
    assert len(f) == 592
    return f


def request(s, seq, mtype, flags, body):
    attr = struct.pack('=HH', 4 + len(body), OSF_ATTR_FINGER) + body
    nfgen = struct.pack('=BBH', socket.AF_INET, 0, 0)
    m = struct.pack('=IHHII', 16 + 4 + len(attr), NFNL_SUBSYS_OSF << 8 | mtype,
                    NLM_F_REQUEST | NLM_F_ACK | flags, seq, 0) + nfgen + attr
    s.sendto(m, (0, 0))
    while True:
        r = s.recv(65536)
        _, rtype, _, rseq, _ = struct.unpack_from('=IHHII', r)
        if rtype == NLMSG_ERROR and rseq == seq:
            return -struct.unpack_from('=i', r, 16)[0]


def main(argv):
    if len(argv) < 3 or argv[1] not in ('add', 'remove'):
        print(__doc__, file=sys.stderr)
        return 2
    if '--shim' in argv[3:] and \
            not any('libnftdp_shim' in line for line in open('/proc/self/maps')):
        print('osf_load.py: the nftdp shim is not loaded: not sending', file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        fps = json.load(f)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.settimeout(5)
    add = argv[1] == 'add'
    mtype = OSF_MSG_ADD if add else OSF_MSG_REMOVE
    flags = NLM_F_CREATE | NLM_F_EXCL if add else 0
    print(' '.join(str(request(s, i + 1, mtype, flags, record(fp))) for i, fp in enumerate(fps)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
