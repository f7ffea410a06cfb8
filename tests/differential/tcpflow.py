# SPDX-License-Identifier: BSD-3-Clause
"""TCP connections for the cases' captures (cases/*.py), through NAT.

A case imports it by its folder's parent:

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tcpflow import Flow  # noqa: E402
"""

from scapy.all import IP, IPv6, TCP, Raw


class Flow:
    """A TCP connection from client c to server s; each side sends to the
    address it sees of the other (c_seen, s_seen: after NAT) and acks the
    other's bytes as they reached it: off[who] is what a NAT helper added
    to who's stream so far. The client's packets enter at c_side ('dp0' or
    'dp1'), the server's at the other port. Sequence numbers wrap at 2^32;
    IPv6 when c is an IPv6 address."""

    def __init__(self, c_side, c, c_seen, s, s_seen, cport, sport, cseq, sseq):
        self.c_side = c_side
        self.s_side = 'dp1' if c_side == 'dp0' else 'dp0'
        self.ip = IPv6 if ':' in c else IP
        self.c, self.c_seen, self.s, self.s_seen = c, c_seen, s, s_seen
        self.cport, self.sport = cport, sport
        self.seq = {'c': cseq, 's': sseq}
        self.off = {'c': 0, 's': 0}

    def pkt(self, who, flags, data=b'', grow=0, options=None):
        """who ('c' or 's') sends a segment: (its port, the packet); grow:
        how many bytes a NAT helper adds to this segment's data"""
        other = 's' if who == 'c' else 'c'
        if who == 'c':
            side, ip, sp, dp = self.c_side, self.ip(src=self.c, dst=self.s_seen), self.cport, \
                self.sport
        else:
            side, ip, sp, dp = self.s_side, self.ip(src=self.s, dst=self.c_seen), self.sport, \
                self.cport
        ack = (self.seq[other] + self.off[other]) & 0xffffffff if 'A' in flags else 0
        p = ip / TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[who], ack=ack, window=8192,
                     options=options or [])
        if data:
            p = p / Raw(data)
        self.seq[who] = (self.seq[who] + len(data) + (1 if 'S' in flags else 0)) & 0xffffffff
        self.off[who] += grow
        return (side, p)

    def handshake(self):
        return [self.pkt('c', 'S'), self.pkt('s', 'SA'), self.pkt('c', 'A')]

    def say(self, who, text, grow=0):
        """a PSH|ACK with text (str or bytes)"""
        return self.pkt(who, 'PA', text if isinstance(text, bytes) else text.encode(), grow)

    def login(self):
        """an FTP server's banner, USER and its answer"""
        return [self.say('s', '220 ready\r\n'), self.say('c', 'USER ftp\r\n'),
                self.say('s', '331 ok\r\n')]
