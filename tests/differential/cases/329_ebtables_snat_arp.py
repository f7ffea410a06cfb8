# ebtables' snat with and without --snat-arp through a bridge (BRIDGE =
# True): with it, the ARP sender's hardware address of an ARP frame with
# 6-byte hardware addresses is rewritten too (whatever the protocol type;
# after an 802.1Q tag, as the kernel sees the untagged frame), not for
# other lengths nor for non-ARP frames. Frames out of dp1 are compared
# byte for byte, and every rule's counter.
from scapy.all import ARP, Dot1Q, Ether, IP, Raw, UDP

BRIDGE = True
T0, T1, BC = '02:00:00:00:01:10', '02:00:00:00:01:11', 'ff:ff:ff:ff:ff:ff'
M20, M30 = '02:00:00:00:01:20', '02:00:00:00:01:30'
PACKETS = [
    Ether(src=T0, dst=BC) / ARP(psrc='10.1.0.10', pdst='10.1.0.1', hwsrc=T0),
    Ether(src=T0, dst=BC) / ARP(psrc='10.1.0.11', pdst='10.1.0.1', hwsrc=T0),
    Ether(src=M20, dst=T1) / ARP(op=2, psrc='10.1.0.20', pdst='10.1.0.1', hwsrc=M20,
                                 hwdst=T1),
    Ether(src=T0, dst=BC) / Dot1Q(vlan=10) / ARP(psrc='10.1.0.12', pdst='10.1.0.1', hwsrc=T0),
    # another protocol type, 6-byte hardware addresses: rewritten
    Ether(src=M30, dst=BC) / ARP(ptype=0x86dd, plen=16, psrc='::1', pdst='::2', hwsrc=M30),
    # 8-byte hardware addresses: only the Ethernet source
    Ether(src=M30, dst=BC, type=0x0806) /
    Raw(bytes([0, 1, 8, 0, 8, 4, 0, 1]) + bytes(range(1, 9)) + bytes([10, 1, 0, 30]) +
        bytes(8) + bytes([10, 1, 0, 1])),
    Ether(src=M30, dst=T1) / IP(src='10.1.0.30', dst='172.16.0.10') / UDP(sport=1, dport=2),
]
EXPECT = {'dp1': 7}
