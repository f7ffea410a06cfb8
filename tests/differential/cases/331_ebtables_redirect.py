# ebtables' redirect through a bridge (BRIDGE = True): the frame becomes
# one for the bridge (pkttype host, which the next rule sees), then the
# target's verdict (continue, drop, return from a user chain). Only the
# fate of the frames and the counters are compared: the bridge's address
# that redirect writes is br0's on the kernel, the smaller port MAC on
# nftdp, which cannot be the same here (unit test vm-compat checks the
# address); a redirected frame that goes on is forwarded by nftdp and
# delivered to br0 by the kernel (docs/differences.md), so each one here
# is dropped in PREROUTING.
from scapy.all import Ether, IP, UDP

BRIDGE = True
S, D = '10.1.0.10', '172.16.0.10'
PACKETS = [
    IP(src=S, dst=D) / UDP(sport=1, dport=53),    # redirect, continue: host, dropped
    IP(src=S, dst=D) / UDP(sport=1, dport=54),    # redirect, drop
    Ether(src='02:00:00:00:01:10', dst='ff:ff:ff:ff:ff:ff') /
    IP(src=S, dst=D) / UDP(sport=1, dport=53),    # broadcast becomes host too
    IP(src=S, dst=D) / UDP(sport=1, dport=55),    # redirect in a user chain, return
    IP(src=S, dst=D) / UDP(sport=1, dport=80),    # not redirected: forwarded
]
EXPECT = {'dp1': 1}
