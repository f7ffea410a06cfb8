from scapy.all import IP, UDP, Raw


def udp(src, sport, dst='10.2.0.1'):
    return ('dp0', IP(src=src, dst=dst) / UDP(sport=sport, dport=53) / Raw(b'm' * 8))


PACKETS = [
    udp('10.1.0.1', 1001), udp('10.1.0.1', 1002),
    udp('10.1.0.1', 1003),                      # over 2: dropped
    udp('10.1.0.2', 2001), udp('10.1.0.2', 2002),  # its own list: both pass
    udp('10.1.0.1', 1004),                      # still over
    udp('10.1.0.2', 2003),                      # over for 10.1.0.2 too
    udp('10.1.0.1', 1003),                      # the dropped one, again: over
]
# 10.1.0.1: 1001, 1002; 10.1.0.2: 2001, 2002. 10.2.0.1's list (ct count
# 3, not over) counts the four new ones that passed the first rule: the
# fourth, 2002, breaks the update's rule, not the packet. (Not here: a
# packet of a counted UDP connection, still new, right after a drop: the
# kernel counts the dropped one within its jiffy; see 082.)
EXPECT = {'dp1': 4}
