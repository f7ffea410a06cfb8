#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Drives libnftdp_shim.so (LD_PRELOAD) against ack_server the way nft and
# libmnl use a netlink socket, and checks that each call answers as the
# kernel's would. Exit status 0 on success; prints the first failure.
import errno
import os
import socket
import struct
import sys

NETLINK_NETFILTER = 12
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_EXT_ACK = 11
NETLINK_LIST_MEMBERSHIPS = 9
SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
# NFT_MSG_GETGEN in subsystem NFNL_SUBSYS_NFTABLES (10)
GETGEN = (10 << 8) | 16


def check(cond, what):
    if not cond:
        print("FAIL:", what, file=sys.stderr)
        sys.exit(1)


def nlmsg(seq, payload=b"\0" * 4):
    return struct.pack("=IHHII", 16 + len(payload), GETGEN, NLM_F_REQUEST | NLM_F_ACK,
                       seq, 0) + payload


def parse_ack(data):
    check(len(data) >= 36, "ack length %d" % len(data))
    ln, typ, flags, seq, pid = struct.unpack_from("=IHHII", data)
    err, = struct.unpack_from("=i", data, 16)
    check(typ == NLMSG_ERROR and err == 0, "ack type %d error %d" % (typ, err))
    return seq, pid


def no_more(s):
    try:
        s.recv(65536, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return True
    return False


def main():
    pid = os.getpid()
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    check(s.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_RAW, "SO_TYPE")
    check(s.getsockopt(socket.SOL_SOCKET, socket.SO_PROTOCOL) == NETLINK_NETFILTER,
          "SO_PROTOCOL")
    s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
    check(s.getsockopt(SOL_NETLINK, NETLINK_EXT_ACK) == 1, "NETLINK_EXT_ACK readback")
    s.setblocking(False)  # nft: fcntl(O_NONBLOCK)
    check(s.getsockname() == (pid, 0), "getsockname %r" % (s.getsockname(),))

    # A second socket of the same process gets a kernel-style negative port id.
    s2 = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_NONBLOCK,
                       NETLINK_NETFILTER)
    # (the daemon's rover only moves down, as the kernel's: -4097, -4098, ...)
    portid2 = s2.getsockname()[0]
    check(2**31 <= portid2 <= 2**32 - 4097, "second portid %r" % (portid2,))

    # sendto then recvfrom at once on the non-blocking socket: the answer is
    # already queued when sendto returns, and then there is nothing more.
    check(s.sendto(nlmsg(7), (0, 0)) == 20, "sendto length")
    data, addr = s.recvfrom(65536)
    check(addr == (0, 0), "recvfrom address %r" % (addr,))
    check(parse_ack(data) == (7, pid), "ack seq/pid")
    check(no_more(s), "extra answer queued")

    # A batch as one sendmsg of several iovecs: length is the sum, every
    # answer is queued before it returns.
    parts = [nlmsg(1), nlmsg(2) + nlmsg(3), nlmsg(4)]
    check(s.sendmsg(parts) == sum(len(p) for p in parts), "sendmsg length")
    seqs = []
    for _ in range(4):
        data, anc, flags, addr = s.recvmsg(65536)
        check(addr == (0, 0), "recvmsg address %r" % (addr,))
        seqs.append(parse_ack(data)[0])
    check(seqs == [1, 2, 3, 4], "batch answers %r" % seqs)
    check(no_more(s), "extra batch answer")

    # MSG_TRUNC/MSG_PEEK keep datagram semantics.
    s.send(nlmsg(9))
    data = s.recv(8, socket.MSG_PEEK)
    check(len(data) == 8, "peek")
    data, anc, flags, addr = s.recvmsg(8)
    check(flags & socket.MSG_TRUNC, "MSG_TRUNC flag")
    check(no_more(s), "truncated datagram consumed")

    # Buffer sizes as nft sets them: FORCE, read back doubled.
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
    check(s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) == 16 << 20, "rcvbuf")
    s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, 46 << 20)
    check(s.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) == 92 << 20, "sndbuf")

    # bind: port 0 or ours is fine, another port is EINVAL (already bound).
    s.bind((0, 0))
    s.bind((pid, 0))
    try:
        s.bind((pid + 1, 0))
        check(False, "bind to a foreign port id")
    except OSError as e:
        check(e.errno == errno.EINVAL, "bind errno %d" % e.errno)
    try:
        s.sendto(nlmsg(1), (1234, 0))
        check(False, "sendto a foreign port id")
    except OSError as e:
        check(e.errno == errno.ECONNREFUSED, "sendto errno %d" % e.errno)

    # Multicast (nft monitor): s2 joins group 7, sees what s sends.
    if os.geteuid() == 0:
        s2.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, 7)
        check(s2.getsockname()[1] == 1 << 6, "groups in getsockname")
        s.send(nlmsg(11))
        s.recv(65536)
        data = s2.recv(65536)
        check(struct.unpack_from("=I", data, 8)[0] == 11, "multicast copy")
        check(no_more(s2), "one notification")
        s3 = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        s3.bind((0, 1 << 6))
        portid3, groups3 = s3.getsockname()
        check(2**31 <= portid3 < portid2 and groups3 == 1 << 6, "bind groups")
        s3.close()

    # Other netlink families still reach the kernel.
    r = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    r.bind((0, 0))
    check(r.getsockname()[0] != 0, "NETLINK_ROUTE autobind by the kernel")
    r.close()

    s2.close()
    s.close()
    print("ok")


if __name__ == "__main__":
    main()
