# One IPv4 packet (through br_netfilter's ip hooks) and one ARP broadcast.
from scapy.all import IP, UDP, Ether, ARP
BRIDGE = True
PACKETS = [IP(src='10.1.0.1', dst='172.16.0.1') / UDP(sport=1, dport=2),
           Ether(src='02:00:00:00:01:10', dst='ff:ff:ff:ff:ff:ff') / ARP(psrc='10.1.0.1', pdst='10.1.0.2')]
EXPECT = {'dp1': 2}
