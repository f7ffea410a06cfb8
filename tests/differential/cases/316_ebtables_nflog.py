# ebtables-nft's nflog watcher (ebt_nflog.c) through a bridge (BRIDGE =
# True): nf_log_packet with NFPROTO_BRIDGE toward nfnetlink_log; the
# listener (nflog_listen.py) binds groups 2 and 3 on each side (the
# kernel's DUT namespace; nftdp's control socket through the shim, nftdp
# live so that the groups are bound before the frames come). Prefixes,
# --nflog-threshold (the rule's), --nflog-range (not used by the kernel:
# ebt_nflog_tg gives no NF_LOG_F_COPY_LEN), group 4 with nobody, IPv4,
# IPv6 and ARP frames, and the mark set after the watcher.
from scapy.all import ARP, Ether, ICMP, IP, IPv6, Raw, TCP, UDP

BRIDGE = True
NFLOG = ['2:1:0', '3:1:0:100']
S, D = '10.1.0.10', '172.16.0.10'

PACKETS = [
    IP(src=S, dst=D) / UDP(sport=1000, dport=53) / Raw(b'query'),
    IP(src=S, dst=D) / UDP(sport=1000, dport=54) / Raw(b'other'),
    IPv6(src='2001:db8:1::10', dst='2001:db8:2::10') / TCP(sport=1000, dport=22, flags='S') /
    Raw(b'z' * 60),
    IP(src=S, dst=D) / ICMP(type=8, id=1, seq=1) / Raw(b'ping'),
    Ether(src='02:00:00:00:01:10', dst='ff:ff:ff:ff:ff:ff') /
    ARP(psrc=S, pdst='10.1.0.1', hwsrc='02:00:00:00:01:10'),
]
EXPECT = {'dp1': 4}
# the kernel names the port physindev/physoutdev and br0 indev/outdev;
# nftdp's bridge has no device of its own (docs/differences.md)
NFLOG_BRIDGE_DEV = 'the port as indev/outdev, no physindev/physoutdev (no bridge device)'
