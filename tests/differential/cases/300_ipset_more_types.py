from scapy.all import IP, TCP, UDP, Raw

# ipset's newer types made by `ipset restore` on both sides (.ipset), then
# iptables-nft-restore rules matching them (.v4): hash:ip,port,net on
# dst,dst,src with a nomatch hole (--return-nomatch drops it), ports and
# protocols that must fit, a net with a timeout; hash:net,iface on the
# source's net with the out device dp1 (a nomatch hole) or the in device dp0
A, HOLE, FAR, OUT, D, E = '10.1.0.1', '10.1.0.70', '10.1.0.20', '10.9.0.1', '10.2.0.1', '10.2.0.2'
PACKETS = [
    IP(src=A, dst=D) / TCP(sport=40000, dport=80, flags='S'),         # web: accept
    IP(src=HOLE, dst=D) / TCP(sport=40001, dport=80, flags='S'),      # nomatch hole: drop
    IP(src=A, dst=D) / TCP(sport=40002, dport=81, flags='S'),         # port: drop
    IP(src=A, dst=E) / UDP(sport=1000, dport=53) / Raw(b'q' * 8),     # dns /28: accept
    IP(src=A, dst=E) / UDP(sport=1001, dport=54) / Raw(b'q' * 8),     # dns /28: accept
    IP(src=FAR, dst=E) / UDP(sport=1002, dport=53) / Raw(b'q' * 8),   # outside /28: drop
    IP(src=A, dst=E) / TCP(sport=40003, dport=53, flags='S'),         # tcp, not udp: drop
    IP(src=OUT, dst=D) / TCP(sport=40004, dport=80, flags='S'),       # not in the net: drop
    IP(src=FAR, dst=D) / TCP(sport=40005, dport=22, flags='S'),       # seen /16: accept
    IP(src=OUT, dst=D) / TCP(sport=40006, dport=22, flags='S'),       # outside /16: drop
    IP(src=A, dst=E) / TCP(sport=40007, dport=8080, flags='S'),       # lan out dp1: accept
    IP(src=FAR, dst=E) / TCP(sport=40008, dport=8080, flags='S'),     # nomatch /28: drop
    IP(src=OUT, dst=E) / UDP(sport=1003, dport=9999) / Raw(b'q' * 8), # in dp0: accept
]
EXPECT = {'dp1': 6}
