from scapy.all import IP, TCP, UDP, Raw

# iptables-nft-restore programs both sides: recent lists (SSH guard, port
# knock by /24) and TCPMSS --set-mss on forwarded SYNs
A, B, C, D = '10.1.0.1', '10.1.0.2', '10.1.1.3', '10.2.0.1'


def syn(src, sport, dport, mss):
    return IP(src=src, dst=D) / TCP(sport=sport, dport=dport, flags='S', seq=1,
                                    options=[('NOP', None), ('NOP', None), ('MSS', mss)])


PACKETS = (
    [syn(A, 40000 + i, 22, 1460) for i in range(4)] +
    [syn(B, 41000, 2222, 1460),
     IP(src=C, dst=D) / UDP(sport=1000, dport=7000) / Raw(b'k' * 8),
     syn(B, 41001, 2222, 1460),
     IP(src=B, dst=D) / UDP(sport=1000, dport=7000) / Raw(b'k' * 8),
     syn(A, 41002, 2222, 1460),
     syn(A, 42000, 80, 1200),
     syn(A, 42001, 80, 1460)]
)
# forwarded: 3 SSH, the SYN to 2222 after B's knock (A is in B's /24), 2 to 80
EXPECT = {'dp1': 6}
