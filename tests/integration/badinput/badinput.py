#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Malformed netlink against nf_tables: the same raw messages go to the
kernel (run inside a scratch netns) and to nftdp (run under the shim), and
each prints a transcript of what came back (message types, errnos and
extended-ack offsets, never port ids). The driver (0001_badinput_0.sh)
compares the two transcripts and checks the daemon survived.

Usage: badinput.py [--fuzz N]  (prints the transcript on stdout)"""
import os
import random
import socket
import struct
import sys

NETLINK_NETFILTER = 12
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLMSG_ERROR, NLMSG_DONE = 2, 3
F_REQUEST, F_MULTI, F_ACK, F_ECHO = 1, 2, 4, 8
F_DUMP = 0x300
F_EXCL, F_CREATE, F_APPEND = 0x200, 0x400, 0x800
BEGIN, END = 0x10, 0x11
NFT = 10
NEWTABLE, GETTABLE, DELTABLE, NEWCHAIN, NEWRULE, GETGEN = 0, 1, 2, 3, 6, 16
NLA_F_NESTED = 0x8000


def attr(t, payload):
    a = struct.pack("=HH", 4 + len(payload), t) + payload
    return a + b"\0" * (-len(a) % 4)


def strz(s):
    return s.encode() + b"\0"


def msg(mtype, flags, seq, family=2, payload=b"", res_id=0, length=None):
    body = struct.pack("=BBH", family, 0, socket.htons(res_id)) + payload
    ln = 16 + len(body) if length is None else length
    m = struct.pack("=IHHII", ln, mtype, flags, seq, 0) + body
    return m + b"\0" * (-len(m) % 4)


def nft(t):
    return (NFT << 8) | t


def batch(*msgs, end=True):
    out = msg(BEGIN, F_REQUEST, 0, family=0, res_id=NFT)
    for m in msgs:
        out += m
    if end:
        out += msg(END, F_REQUEST, 999, family=0, res_id=NFT)
    return out


class Conn:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
        self.s.setblocking(False)
        self.s.sendto(msg(nft(GETGEN), F_REQUEST, 0, family=0), (0, 0))
        self.recv_all()

    def recv_all(self):
        out = []
        while True:
            try:
                data = self.s.recv(1 << 20)
            except BlockingIOError:
                return out
            off = 0
            while off + 16 <= len(data):
                ln, typ, flags, seq, _ = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    break
                if typ == NLMSG_ERROR:
                    err, = struct.unpack_from("=i", data, off + 16)
                    offs = None
                    inner_len, = struct.unpack_from("=I", data, off + 20)
                    tlv = off + 20 + (16 if flags & 0x100 else inner_len)
                    tlv = (tlv + 3) & ~3
                    while tlv + 4 <= off + ln:
                        alen, atype = struct.unpack_from("=HH", data, tlv)
                        if alen < 4:
                            break
                        if atype == 2:
                            offs, = struct.unpack_from("=I", data, tlv + 4)
                        tlv += (alen + 3) & ~3
                    out.append("error seq=%d errno=%d%s" % (seq, -err,
                               "" if offs is None else " offset=%d" % offs))
                elif typ == NLMSG_DONE:
                    out.append("done seq=%d" % seq)
                else:
                    out.append("msg type=%#x seq=%d" % (typ, seq))
                off += (ln + 3) & ~3
        return out

    def send(self, data):
        try:
            self.s.sendto(data, (0, 0))
        except OSError as e:
            return ["send errno=%d" % e.errno]
        return self.recv_all()

    def tables(self):
        r = self.send(msg(nft(GETTABLE), F_REQUEST | F_DUMP, 7, family=0))
        return sum(1 for x in r if x.startswith("msg"))


def table(name, seq, flags=F_REQUEST | F_CREATE, extra=b""):
    return msg(nft(NEWTABLE), flags, seq, payload=attr(1, strz(name)) + extra)


def nested(n, t, inner=b""):
    """n levels of NLA_F_NESTED attributes of type t around inner."""
    for _ in range(n):
        inner = attr(NLA_F_NESTED | t, inner)
    return inner


def deep_rule(n, t):
    """A rule whose NFTA_RULE_EXPRESSIONS holds n levels of nests of type t
    (1: where the expression's name belongs, ERANGE once it is too long)."""
    return batch(table("deep", 1),
                 msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2, payload=attr(1, strz("deep")) + attr(3, strz("c"))),
                 msg(nft(NEWRULE), F_REQUEST | F_CREATE | 0x800, 3,
                     payload=attr(1, strz("deep")) + attr(2, strz("c")) + attr(NLA_F_NESTED | 4, nested(n, t))))


def jump_rule(verdict_extra):
    """A rule `immediate jump` whose verdict names no chain (only what
    verdict_extra adds: a chain id, or nothing). libnftnl 1.2.4 crashed
    on it (nftnl_parse_verdict reads an uninitialised table)."""
    verdict = attr(1, struct.pack("!i", -3)) + verdict_extra  # NFT_JUMP
    data = attr(1, struct.pack("!I", 0)) + attr(NLA_F_NESTED | 2, attr(NLA_F_NESTED | 2, verdict))
    expr = attr(1, strz("immediate")) + attr(NLA_F_NESTED | 2, data)
    return batch(table("j", 1),
                 msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2, payload=attr(1, strz("j")) + attr(3, strz("c"))),
                 msg(nft(NEWRULE), F_REQUEST | F_CREATE | 0x800, 3,
                     payload=attr(1, strz("j")) + attr(2, strz("c"))
                     + attr(NLA_F_NESTED | 4, attr(NLA_F_NESTED | 1, expr))))


def synproxy_rule(seq, tbl, data):
    """a rule in chain c of table tbl with one synproxy expression"""
    expr = attr(NLA_F_NESTED | 1, attr(1, strz("synproxy")) + attr(NLA_F_NESTED | 2, data))
    return msg(nft(NEWRULE), F_REQUEST | F_CREATE | F_APPEND, seq,
               payload=attr(1, strz(tbl)) + attr(2, strz("c")) + attr(NLA_F_NESTED | 4, expr))


def synproxy_cases():
    """nft_synproxy_do_init's flags check (nft sends no flags outside
    NF_SYNPROXY_OPT_MASK, so only raw messages reach it), for the
    statement and the object (NFT_OBJECT_SYNPROXY 10, NFT_MSG_NEWOBJ 18)"""
    def opts(flags):
        return (attr(1, struct.pack("!H", 1460)) + attr(2, b"\x07") +
                attr(3, struct.pack("!I", flags)))

    def obj(seq, tbl, data):
        return msg(nft(18), F_REQUEST | F_CREATE, seq,
                   payload=attr(1, strz(tbl)) + attr(2, strz("s")) +
                   attr(3, struct.pack("!I", 10)) + attr(NLA_F_NESTED | 4, data))

    chain = msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2,
                payload=attr(1, strz("sp")) + attr(3, strz("c")))
    return [
        ("synproxy flags 0xf", batch(table("sp", 1), chain, synproxy_rule(3, "sp", opts(0xf)))),
        ("synproxy flags with ECN", batch(table("sp", 1), chain,
                                          synproxy_rule(3, "sp", opts(0x10)))),
        ("synproxy without attributes", batch(table("sp", 1), chain,
                                              synproxy_rule(3, "sp", b""))),
        ("synproxy object flags 0xf", batch(table("sp", 1), obj(2, "sp", opts(0xf)))),
        ("synproxy object flags with ECN", batch(table("sp", 1), obj(2, "sp", opts(0x10)))),
        ("flush after synproxy", batch(msg(nft(DELTABLE), F_REQUEST, 1, family=0))),
    ]


def imm_jump(code, chain_id):
    """An immediate expression: jump (-3) or goto (-4) to a chain by id."""
    verdict = attr(1, struct.pack("!i", code)) + attr(3, struct.pack("!I", chain_id))
    data = attr(1, struct.pack("!I", 0)) + attr(NLA_F_NESTED | 2, attr(NLA_F_NESTED | 2, verdict))
    return attr(NLA_F_NESTED | 1, attr(1, strz("immediate")) + attr(NLA_F_NESTED | 2, data))


def accept_expr():
    data = attr(1, struct.pack("!I", 0)) + attr(NLA_F_NESTED | 2, attr(NLA_F_NESTED | 2,
                                                                      attr(1, struct.pack("!i", 1))))
    return attr(NLA_F_NESTED | 1, attr(1, strz("immediate")) + attr(NLA_F_NESTED | 2, data))


def binding_batch(t, binds=1, late_rule=False, hook=b""):
    """Table t, chain c, a binding chain (NFT_CHAIN_BINDING, no name, chain
    id 7) holding one rule, then `binds` rules of c jumping to it by id;
    late_rule adds a rule to the binding chain after it is bound."""
    rule_in = msg(nft(NEWRULE), F_REQUEST | F_CREATE | 0x800, 4,
                  payload=attr(1, strz(t)) + attr(11, struct.pack("!I", 7))
                  + attr(NLA_F_NESTED | 4, accept_expr()))
    msgs = [table(t, 1),
            msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2, payload=attr(1, strz(t)) + attr(3, strz("c"))),
            msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 3,
                payload=attr(1, strz(t)) + attr(10, struct.pack("!I", 4)) + attr(11, struct.pack("!I", 7))
                + hook),
            rule_in]
    for i in range(binds):
        msgs.append(msg(nft(NEWRULE), F_REQUEST | F_CREATE | 0x800, 5 + i,
                        payload=attr(1, strz(t)) + attr(2, strz("c"))
                        + attr(NLA_F_NESTED | 4, imm_jump(-3 - i % 2, 7))))
    if late_rule:
        msgs.append(rule_in)
    return batch(*msgs)


def del_chain_handle(t, handle):
    return batch(msg(nft(5), F_REQUEST, 1, payload=attr(1, strz(t)) + attr(2, struct.pack("!Q", handle))))


def rename_chain_handle(t, handle, name):
    return batch(msg(nft(NEWCHAIN), F_REQUEST, 1, payload=attr(1, strz(t)) + attr(2, struct.pack("!Q", handle))
                     + attr(3, strz(name))))


def cases():
    big = batch(*[table("t%d" % i, i + 1) for i in range(3000)])
    big_fail = batch(*[table("u%d" % i, i + 1) for i in range(3000)],
                     table("t0", 3001, F_REQUEST | F_CREATE | F_EXCL))
    hook = attr(NLA_F_NESTED | 4, attr(1, struct.pack("!I", 1)) + attr(2, struct.pack("!i", 0)))
    return [
        ("short header", b"\x08\x00\x00\x00\x00\x00"),
        ("length past end", msg(nft(GETGEN), F_REQUEST | F_ACK, 1, length=400)),
        ("length below header", msg(nft(GETGEN), F_REQUEST | F_ACK, 1, length=8)),
        ("unknown nftables type", msg(nft(200), F_REQUEST | F_ACK, 2)),
        ("unknown subsystem", msg((40 << 8) | 1, F_REQUEST | F_ACK, 4)),
        ("not a request", msg(nft(GETGEN), F_ACK, 5)),
        ("new outside batch", table("x", 6, F_REQUEST | F_CREATE | F_ACK)),
        ("unknown attribute", batch(table("x", 1, extra=attr(30, b"abcd")))),
        ("attribute length past end", batch(msg(nft(NEWTABLE), F_REQUEST | F_CREATE, 1,
                                                payload=struct.pack("=HH", 200, 1) + b"xyz\0"))),
        ("u32 of wrong size", batch(table("x", 1, extra=attr(2, b"\0\0")))),
        ("name too long", batch(table("n" * 300, 1))),
        ("nested without flag", batch(table("h", 1), msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2,
              payload=attr(1, strz("h")) + attr(3, strz("c")) + attr(4, b"\x08\x00\x01\x00\0\0\0\1")))),
        ("garbage nesting", batch(table("g", 1), msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2,
              payload=attr(1, strz("g")) + attr(3, strz("c")) + attr(NLA_F_NESTED | 4, b"\xff\x00\x01\x00\0\0\0\1")))),
        ("good chain", batch(table("g", 1), msg(nft(NEWCHAIN), F_REQUEST | F_CREATE, 2,
              payload=attr(1, strz("g")) + attr(3, strz("c")) + hook + attr(7, strz("filter"))))),
        ("batch without end", batch(table("noend", 1), end=False)),
        ("batch begin twice", batch(table("twice", 1), msg(BEGIN, F_REQUEST, 2, family=0, res_id=NFT))),
        ("batch of another subsystem", msg(BEGIN, F_REQUEST, 0, family=0, res_id=1) + table("o", 1)),
        ("batch genid mismatch", msg(BEGIN, F_REQUEST, 0, family=0, res_id=NFT,
                                     payload=attr(1, struct.pack("!I", 0x7fffffff))) + table("gen", 1)
         + msg(END, F_REQUEST, 2, family=0, res_id=NFT)),
        ("two errors in one batch", batch(table("e", 1), table("e", 2, F_REQUEST | F_CREATE | F_EXCL),
                                          table("e", 3, F_REQUEST | F_CREATE | F_EXCL))),
        ("acked batch", batch(table("ack", 1, F_REQUEST | F_CREATE | F_ACK))),
        ("3000 tables", big),
        ("3000 tables, last fails", big_fail),
        ("flush", batch(msg(nft(DELTABLE), F_REQUEST, 1, family=0))),
        ("jump without chain", jump_rule(b"")),
        ("jump to an unknown chain id", jump_rule(attr(3, struct.pack("!I", 12345)))),
        ("binding chain bound by a jump", binding_batch("b1")),
        ("binding chain deleted alone", del_chain_handle("b1", 2)),
        ("binding chain renamed", rename_chain_handle("b1", 2, "x")),
        ("regular chain renamed", rename_chain_handle("b1", 1, "c2")),
        ("binding chain never bound", binding_batch("b2", binds=0)),
        ("binding chain bound twice", binding_batch("b3", binds=2)),
        ("rule added to a bound binding chain", binding_batch("b4", late_rule=True)),
        ("binding chain with a hook", binding_batch("b5", hook=hook)),
    ] + synproxy_cases() + [("%d nested levels of type %d in a rule" % (n, t), deep_rule(n, t))
         for n in (2, 3, 10, 100, 1000, 10000) for t in (1, 2)] + [
        ("table of family %d" % f, batch(msg(nft(NEWTABLE), F_REQUEST | F_CREATE, 1, family=f,
                                             payload=attr(1, strz("fam")))))
        for f in (0, 4, 12, 81, 150, 255)] + ipset_cases()


def ipset(cmd, seq, payload, flags=F_REQUEST | F_ACK):
    """An NFNL_SUBSYS_IPSET request (control/ipset.c)."""
    return msg((6 << 8) | cmd, flags, seq, payload=payload)


def ipset_cases():
    proto = attr(1, b"\x07")
    create = proto + attr(2, strz("bad")) + attr(3, strz("hash:ip")) + attr(4, b"\x06") + \
        attr(5, b"\x02")
    ip_no_order = attr(NLA_F_NESTED | 1, attr(1, b"\x01\x02\x03\x04"))
    ip10 = attr(NLA_F_NESTED | 1, attr(0x4000 | 1, b"\x0a\x00\x00\x01"))
    create_im = proto + attr(2, strz("bim")) + attr(3, strz("bitmap:ip,mac")) + \
        attr(4, b"\x03") + attr(5, b"\x02") + attr(NLA_F_NESTED | 7, ip10 + attr(3, b"\x18"))

    def adt_im(mac):  # IPSET_ATTR_ETHER (17) of a given length
        return proto + attr(2, strz("bim")) + attr(NLA_F_NESTED | 7, ip10 + attr(17, mac))
    return [
        ("ipset command 0", ipset(0, 1, proto)),
        ("ipset command 99", ipset(99, 1, proto)),
        ("ipset list without protocol", ipset(7, 1, b"", F_REQUEST | F_ACK | 0x300)),
        ("ipset protocol 5", ipset(7, 1, attr(1, b"\x05"), F_REQUEST | F_ACK | 0x300)),
        ("ipset protocol of length 0", ipset(1, 1, attr(1, b""))),
        ("ipset name without NUL", ipset(3, 1, proto + attr(2, b"abcd"))),
        ("ipset name too long", ipset(3, 1, proto + attr(2, b"n" * 40 + b"\0"))),
        ("ipset name with an early NUL, too long", ipset(3, 1, proto + attr(2, b"n\0" + b"x" * 40 + b"\0"))),
        ("ipset create without type", ipset(2, 1, proto + attr(2, strz("bad")))),
        ("ipset create of an unknown type", ipset(2, 1, proto + attr(2, strz("bad")) +
                                                  attr(3, strz("hash:nope")) + attr(4, b"\x00") +
                                                  attr(5, b"\x02"))),
        ("ipset create data not nested", ipset(2, 1, create + attr(7, b"\0\0\0\0"))),
        ("ipset add to a missing set", ipset(9, 1, proto + attr(2, strz("nope")) +
                                             attr(NLA_F_NESTED | 7, b""))),
        ("ipset create then add without byte order",
         ipset(2, 1, create + attr(NLA_F_NESTED | 7, b"")) +
         ipset(9, 2, proto + attr(2, strz("bad")) + attr(NLA_F_NESTED | 7, ip_no_order))),
        ("ipset add with data and adt", ipset(9, 1, proto + attr(2, strz("bad")) +
                                              attr(NLA_F_NESTED | 7, b"") +
                                              attr(NLA_F_NESTED | 8, b""))),
        ("ipset bitmap:ip,mac add with a 5-byte and a 7-byte MAC",
         ipset(2, 1, create_im) + ipset(9, 2, adt_im(b"\x00\x11\x22\x33\x44")) +
         ipset(9, 3, adt_im(b"\x00\x11\x22\x33\x44\x55\x66")) +
         ipset(9, 4, adt_im(b"\x00\x11\x22\x33\x44\x55"))),
        ("ipset destroy all", ipset(3, 1, proto)),
    ]


def write_seeds(d):
    """Seed corpus for tests/fuzz/fuzz_nfnl (no socket needed)."""
    os.makedirs(d, exist_ok=True)
    for i, (name, data) in enumerate(cases()):
        if len(data) < 65536:
            with open(os.path.join(d, "%02d" % i), "wb") as f:
                f.write(data)


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--write-seeds":
        write_seeds(sys.argv[2])
        return
    # The nftdp side must run under the shim: refuse to send anything to a
    # kernel outside the scratch namespace the driver made.
    want = os.environ.get("BADINPUT_EXPECT")
    if want == "nftdp":
        with open("/proc/self/maps") as f:
            if "libnftdp_shim" not in f.read():
                print("shim not loaded: refusing to talk to the kernel", file=sys.stderr)
                sys.exit(2)
    elif want == "kernel":
        if str(os.stat("/proc/self/ns/net").st_ino) == os.environ.get("BADINPUT_ROOTNS", ""):
            print("not in a scratch netns: refusing", file=sys.stderr)
            sys.exit(2)
    else:
        print("set BADINPUT_EXPECT=kernel|nftdp", file=sys.stderr)
        sys.exit(2)
    c = Conn()
    for name, data in cases():
        before = c.tables()
        r = c.send(data)
        after = c.tables()
        # thousands of answers: summarise
        if len(r) > 6:
            r = r[:3] + ["... %d answers" % len(r)]
        print("%s: %s | tables %d -> %d" % (name, "; ".join(r) or "-", before, after))
    if len(sys.argv) > 2 and sys.argv[1] == "--fuzz":
        rnd = random.Random(1)
        seeds = [d for _, d in cases()[:21]]
        for i in range(int(sys.argv[2])):
            d = bytearray(rnd.choice(seeds))
            for _ in range(rnd.randint(1, 8)):
                d[rnd.randrange(len(d))] = rnd.randrange(256)
            c.send(bytes(d))
        print("fuzz: %d mutated messages sent, tables %d" % (int(sys.argv[2]), c.tables()))


if __name__ == "__main__":
    main()
