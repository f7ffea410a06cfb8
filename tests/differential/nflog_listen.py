#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A small nfnetlink_log listener over a raw NETLINK_NETFILTER socket, the
same bytes against the kernel (in a scratch netns) and against nftdp
(through the shim, LD_PRELOAD): it binds groups with NFULNL_MSG_CONFIG
and prints one line per answer and per NFULNL_MSG_PACKET it receives,
decoded attribute by attribute in arrival order, until SIGTERM/SIGINT.

    nflog_listen.py OUT GROUP[:QTHRESH[:FLAGS[:RANGE]]] ...

Normalised, so that two runs compare: interface indexes are printed as
names (this namespace's, if_indextoname), the timestamp only as present,
and NFULA_UID/NFULA_GID are left out (and out of the lengths printed):
at netdev ingress the kernel finds the tester's packet socket on a frame
that came over a veth, which a frame from a wire never has. Everything
else (attribute order, lengths, the prefix, hardware addresses and
header, sequence numbers, the payload, messages per datagram) is printed
whole.
The first line says `ready` once every group is bound.
"""
import os
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_ULOG = 4
NFULNL_MSG_PACKET, NFULNL_MSG_CONFIG = 0, 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR, NLMSG_DONE = 2, 3
CFG_CMD, CFG_MODE, CFG_NLBUFSIZ, CFG_TIMEOUT, CFG_QTHRESH, CFG_FLAGS = 1, 2, 3, 4, 5, 6
CMD_BIND, CMD_UNBIND, CMD_PF_BIND, CMD_PF_UNBIND = 1, 2, 3, 4
COPY_PACKET = 2

ATTR = {1: 'hdr', 2: 'mark', 3: 'timestamp', 4: 'indev', 5: 'outdev', 6: 'physindev',
        7: 'physoutdev', 8: 'hwaddr', 9: 'payload', 10: 'prefix', 11: 'uid', 12: 'seq',
        13: 'seq_global', 14: 'gid', 15: 'hwtype', 16: 'hwheader', 17: 'hwlen', 18: 'ct',
        19: 'ct_info', 20: 'vlan', 21: 'l2hdr'}

seq = 0


def attr(t, data):
    return struct.pack('=HH', 4 + len(data), t) + data + b'\0' * (-len(data) % 4)


def config(sock, group, attrs, family=socket.AF_INET):
    """One NFULNL_MSG_CONFIG with an ACK asked; the errno it gets."""
    global seq
    seq += 1
    body = struct.pack('=BBH', family, 0, socket.htons(group)) + b''.join(attrs)
    msg = struct.pack('=IHHII', 16 + len(body), (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG,
                      NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body
    sock.send(msg)
    while True:
        data = sock.recv(65536)
        length, typ, _, rseq, _ = struct.unpack_from('=IHHII', data)
        if typ == NLMSG_ERROR and rseq == seq:
            return -struct.unpack_from('=i', data, 16)[0]


def cmd(c):
    return attr(CFG_CMD, struct.pack('=B', c))


def u32(t, v):
    return attr(t, struct.pack('!I', v))


def ifname(idx):
    try:
        return socket.if_indextoname(idx)
    except OSError:
        return '#%d' % idx


def decode(data, out):
    off = 0
    while off + 16 <= len(data):
        length, typ, flags, mseq, pid = struct.unpack_from('=IHHII', data, off)
        if length < 16 or off + length > len(data):
            out.write('truncated message\n')
            return
        if typ == NLMSG_DONE:
            fam, ver, res = struct.unpack_from('!BBH', data, off + 16)
            out.write('done flags %d group %d\n' % (flags, res))
        elif typ == (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET:
            fam, ver, res = struct.unpack_from('!BBH', data, off + 16)
            words = []
            skipped = 0
            a = off + 20
            while a + 4 <= off + length:
                alen, atype = struct.unpack_from('=HH', data, a)
                if alen < 4:
                    break
                v = data[a + 4:a + alen]
                name = ATTR.get(atype & 0x3fff, 'attr%d' % atype)
                if name in ('uid', 'gid'):
                    skipped += (alen + 3) & ~3
                elif name == 'hdr':
                    hw, hook = struct.unpack_from('!HB', v)
                    words.append('hdr proto 0x%04x hook %d' % (hw, hook))
                elif name in ('indev', 'outdev', 'physindev', 'physoutdev'):
                    words.append('%s %s' % (name, ifname(struct.unpack('!I', v)[0])))
                elif name == 'timestamp':
                    words.append('timestamp(%d)' % len(v))
                elif name in ('mark', 'seq', 'seq_global', 'ct_info'):
                    words.append('%s %d' % (name, struct.unpack('!I', v)[0]))
                elif name in ('hwtype', 'hwlen'):
                    words.append('%s %d' % (name, struct.unpack('!H', v)[0]))
                elif name == 'prefix':
                    words.append('prefix %r' % v)
                else:
                    words.append('%s(%d) %s' % (name, len(v), v.hex()))
                a += (alen + 3) & ~3
            head = 'packet len %d family %d version %d group %d flags %d seq %d pid %d' % (
                length - skipped, fam, ver, res, flags, mseq, pid)
            out.write(' '.join([head] + words) + '\n')
        else:
            out.write('message type %d flags %d\n' % (typ, flags))
        off += (length + 3) & ~3
    out.flush()


def main():
    out = open(sys.argv[1], 'w')
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    sock.bind((0, 0))
    # what libnetfilter_log's nflog_bind_pf does, then the groups
    out.write('pf_unbind %d\n' % config(sock, 0, [cmd(CMD_PF_UNBIND)]))
    out.write('pf_bind %d\n' % config(sock, 0, [cmd(CMD_PF_BIND)]))
    out.write('pf_bind 13 %d\n' % config(sock, 0, [cmd(CMD_PF_BIND)], family=13))
    for spec in sys.argv[2:]:
        parts = [int(x, 0) for x in spec.split(':')]
        group = parts[0]
        out.write('config unbound %d: %d\n' % (group, config(sock, group, [u32(CFG_QTHRESH, 1)])))
        out.write('bind %d: %d\n' % (group, config(sock, group, [cmd(CMD_BIND)])))
        out.write('bind again %d: %d\n' % (group, config(sock, group, [cmd(CMD_BIND)])))
        out.write('unknown command %d: %d\n' % (group, config(sock, group, [cmd(9)])))
        out.write('short mode %d: %d\n' % (group, config(sock, group, [attr(CFG_MODE, b'\0\0')])))
        out.write('reserved flag %d: %d\n' % (
            group, config(sock, group, [attr(CFG_FLAGS, struct.pack('!H', 8))])))
        rng = parts[3] if len(parts) > 3 else 0xffff
        mode = attr(CFG_MODE, struct.pack('!IBB', rng, COPY_PACKET, 0))
        attrs = [mode]
        if len(parts) > 1:
            attrs.append(u32(CFG_QTHRESH, parts[1]))
        if len(parts) > 2:
            attrs.append(attr(CFG_FLAGS, struct.pack('!H', parts[2])))
        out.write('config %d: %d\n' % (group, config(sock, group, attrs)))
    # another socket (port id): a bound group is not its own; a group it
    # bound goes away with it, so a third socket may bind it
    if len(sys.argv) > 2:
        group = int(sys.argv[2].split(':')[0], 0)
        other = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        other.bind((0, 0))
        out.write('other port bind %d: %d\n' % (group, config(other, group, [cmd(CMD_BIND)])))
        out.write('other port config %d: %d\n' % (group, config(other, group,
                                                                [u32(CFG_QTHRESH, 1)])))
        out.write('other port bind 999: %d\n' % config(other, 999, [cmd(CMD_BIND)]))
        other.close()
        time.sleep(0.1)  # nftdp's daemon sees the close on its own loop
        third = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        third.bind((0, 0))
        out.write('after close bind 999: %d\n' % config(third, 999, [cmd(CMD_BIND)]))
        out.write('unbind 999: %d\n' % config(third, 999, [cmd(CMD_UNBIND)]))
        out.write('unbind 999 again: %d\n' % config(third, 999, [cmd(CMD_UNBIND)]))
        third.close()
    out.write('ready\n')
    out.flush()

    def stop(signum, frame):
        out.flush()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        data = sock.recv(1 << 17)
        n, off = 0, 0
        while off + 16 <= len(data):
            n += 1
            off += (struct.unpack_from('=I', data, off)[0] + 3) & ~3
        out.write('datagram of %d messages\n' % n)
        decode(data, out)


if __name__ == '__main__':
    main()
