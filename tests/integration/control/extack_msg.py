#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Send one batch that adds a rule with EXPR (no attributes) to ip t c over
NETLINK_NETFILTER with NETLINK_EXT_ACK on, and print the error's errno, its
NLMSGERR_ATTR_MSG and whether NLMSGERR_ATTR_OFFS came. Run under the nftdp
shim (LD_PRELOAD), like nft: 0007_refusal_reason_0.sh uses it to check
what nft 1.0.6 cannot show (it ignores the message)."""
import socket
import struct
import sys

NETLINK_NETFILTER, SOL_NETLINK, NETLINK_EXT_ACK = 12, 270, 11
NLM_F_REQUEST, NLM_F_CREATE, NLM_F_APPEND, NLMSG_ERROR = 1, 0x400, 0x800, 2
NFNL_SUBSYS_NFTABLES, NFT_MSG_NEWRULE = 10, 6
BATCH_BEGIN, BATCH_END = 0x10, 0x11
NFTA_RULE_TABLE, NFTA_RULE_CHAIN, NFTA_RULE_EXPRESSIONS = 1, 2, 4
NFTA_LIST_ELEM, NFTA_EXPR_NAME, NLA_F_NESTED = 1, 1, 0x8000
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS = 1, 2


def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack('=HH', n, t) + payload + b'\0' * ((4 - n % 4) % 4)


def msg(mtype, seq, family, res_id, body=b'', flags=0):
    hdr = struct.pack('=BBH', family, 0, socket.htons(res_id))
    return (struct.pack('=IHHII', 16 + len(hdr) + len(body), mtype, NLM_F_REQUEST | flags, seq, 0) +
            hdr + body)


def main():
    # never the host's nf_tables: only through a shim that ld.so loaded
    if not any('libnftdp_shim' in l for l in open('/proc/self/maps')):
        print('extack_msg.py: the nftdp shim is not loaded: not sending')
        return 2
    expr = sys.argv[1] if len(sys.argv) > 1 else 'tproxy'
    e = attr(NFTA_LIST_ELEM | NLA_F_NESTED, attr(NFTA_EXPR_NAME, expr.encode() + b'\0'))
    body = (attr(NFTA_RULE_TABLE, b't\0') + attr(NFTA_RULE_CHAIN, b'c\0') +
            attr(NFTA_RULE_EXPRESSIONS | NLA_F_NESTED, e))
    batch = (msg(BATCH_BEGIN, 0, 0, NFNL_SUBSYS_NFTABLES) +
             msg(NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_NEWRULE, 1, socket.AF_INET, 0, body,
                 NLM_F_CREATE | NLM_F_APPEND) +
             msg(BATCH_END, 2, 0, NFNL_SUBSYS_NFTABLES))
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    s.settimeout(1)
    s.sendto(batch, (0, 0))
    try:
        data = s.recv(65536)
    except (socket.timeout, BlockingIOError):
        print('accepted')
        return 0
    ln, t, flags, seq, _ = struct.unpack_from('=IHHII', data)
    if t != NLMSG_ERROR:
        print('no error message (type %d)' % t)
        return 1
    err, = struct.unpack_from('=i', data, 16)
    inner_len, = struct.unpack_from('=I', data, 20)
    off = 20 + (16 if flags & 0x100 else inner_len)  # NLM_F_CAPPED
    text, offs = None, None
    while off + 4 <= ln:
        n, at = struct.unpack_from('=HH', data, off)
        if n < 4:
            break
        if at == NLMSGERR_ATTR_MSG:
            text = data[off + 4:off + n].split(b'\0')[0].decode()
        elif at == NLMSGERR_ATTR_OFFS:
            offs, = struct.unpack_from('=I', data, off + 4)
        off += (n + 3) & ~3
    print('errno %d seq %d msg %r offs %s' % (-err, seq, text, offs))
    return 0


if __name__ == '__main__':
    sys.exit(main())
