# ebtables' arpreply through a bridge (BRIDGE = True): an ARP request for
# an IPv4 address is answered out of the port it came in on (dp0) from
# --arpreply-mac, then the request meets the target's verdict (drop by
# default, continue); a reply, and a request of another protocol type,
# go on unanswered. Replies out of dp0 and frames out of dp1 are
# compared, and every rule's counter.
from scapy.all import ARP, Ether

BRIDGE = True
T0, T1, BC = '02:00:00:00:01:10', '02:00:00:00:01:11', 'ff:ff:ff:ff:ff:ff'
M20 = '02:00:00:00:01:20'
PACKETS = [
    Ether(src=T0, dst=BC) / ARP(psrc='10.1.0.10', pdst='10.1.0.2', hwsrc=T0),
    Ether(src=T0, dst=BC) / ARP(psrc='10.1.0.10', pdst='10.1.0.3', hwsrc=T0),
    Ether(src=T0, dst=T1) / ARP(op=2, psrc='10.1.0.10', pdst='10.1.0.4', hwsrc=T0, hwdst=T1),
    Ether(src=M20, dst=BC) / ARP(ptype=0x86dd, plen=16, psrc='::1', pdst='::2', hwsrc=M20),
    Ether(src=T0, dst=BC) / ARP(psrc='10.1.0.10', pdst='10.1.0.5', hwsrc='02:00:00:00:01:99'),
]
EXPECT = {'dp1': 4, 'dp0': 3}
