#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""OSF_MSG_ADD / OSF_MSG_REMOVE of one fingerprint (pf.os's
"S10:64:1:60:M*,S,T,N,W7:.:Linux:3.11 and newer", as nfnl_osf sends it:
a struct nf_osf_user_finger in OSF_ATTR_FINGER), each with NLM_F_ACK;
prints the errno of each answer on one line. Run under the nftdp shim
only (it refuses otherwise: the host's database is global)."""
import socket
import struct
import sys

NETLINK_NETFILTER, NFNL_SUBSYS_OSF = 12, 5
OSF_MSG_ADD, OSF_MSG_REMOVE, OSF_ATTR_FINGER = 0, 1, 1
NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 1, 4, 0x200, 0x400


def finger():
    # wss {wc, val}, ttl, df, ss, mss, opt_num, genre, version, subtype, opt[40]
    f = struct.pack('=II', 1, 10) + struct.pack('=BBHHH', 64, 1, 60, 0, 5)  # OSF_WSS_MSS
    for s in (b'Linux', b'3.11 and newer', b''):
        f += s.ljust(32, b'\0')
    opts = [(2, 4), (4, 2), (8, 10), (1, 1), (3, 3)]  # M, S, T, N, W
    for kind, length in opts + [(0, 0)] * (40 - len(opts)):
        f += struct.pack('=HHII', kind, length, 0, 0)
    assert len(f) == 592
    return f


def request(s, mtype, flags, body):
    attr = struct.pack('=HH', 4 + len(body), OSF_ATTR_FINGER) + body
    hdr = struct.pack('=BBH', socket.AF_INET, 0, 0)
    m = struct.pack('=IHHII', 20 + len(attr), NFNL_SUBSYS_OSF << 8 | mtype,
                    NLM_F_REQUEST | NLM_F_ACK | flags, 1, 0) + hdr + attr
    s.sendto(m, (0, 0))
    return -struct.unpack_from('=i', s.recv(65536), 16)[0]


def main():
    if not any('libnftdp_shim' in line for line in open('/proc/self/maps')):
        print('osf_db.py: the nftdp shim is not loaded: not sending')
        return 2
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.settimeout(5)
    f = finger()
    steps = [(OSF_MSG_ADD, NLM_F_CREATE), (OSF_MSG_ADD, NLM_F_CREATE | NLM_F_EXCL),
             (OSF_MSG_ADD, 0), (OSF_MSG_REMOVE, 0), (OSF_MSG_REMOVE, 0),
             (OSF_MSG_ADD, NLM_F_CREATE)]
    print(' '.join(str(request(s, t, fl, f)) for t, fl in steps))
    print(request(s, OSF_MSG_ADD, NLM_F_CREATE, f[:100]))  # short: ERANGE
    return 0


if __name__ == '__main__':
    sys.exit(main())
