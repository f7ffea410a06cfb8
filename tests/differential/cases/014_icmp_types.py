from scapy.all import (IP, IPv6, ICMP, UDP, ICMPv6EchoRequest, ICMPv6EchoReply,
                       ICMPv6PacketTooBig, ICMPv6ParamProblem, ICMPv6DestUnreach)

S, D = '10.1.0.1', '10.2.0.1'
S6, D6 = '2001:db8:1::1', '2001:db8:2::1'
inner = IP(src=D, dst=S) / UDP(sport=53, dport=1000)
PACKETS = [
    IP(src=S, dst=D) / ICMP(type=8, id=1, seq=1),
    IP(src=S, dst=D) / ICMP(type=3, code=3) / inner,
    IP(src=S, dst=D) / ICMP(type=3, code=1) / inner,
    IP(src=S, dst=D) / ICMP(type=11, code=0) / inner,
    IP(src=S, dst=D) / ICMP(type=0, id=77),
    IP(src=S, dst=D) / ICMP(type=0, id=78),
    IP(src=S, dst=D) / ICMP(type=13),
    IPv6(src=S6, dst=D6) / ICMPv6EchoRequest(id=3, seq=4),
    IPv6(src=S6, dst=D6) / ICMPv6EchoReply(id=3, seq=5),
    IPv6(src=S6, dst=D6) / ICMPv6EchoReply(id=3, seq=6),
    IPv6(src=S6, dst=D6) / ICMPv6PacketTooBig(mtu=1280) / IPv6(src=D6, dst=S6) / UDP(),
    IPv6(src=S6, dst=D6) / ICMPv6ParamProblem(code=0, ptr=6) / IPv6(src=D6, dst=S6) / UDP(),
    IPv6(src=S6, dst=D6) / ICMPv6DestUnreach(code=4) / IPv6(src=D6, dst=S6) / UDP(),
]
EXPECT = {'dp1': 10}
