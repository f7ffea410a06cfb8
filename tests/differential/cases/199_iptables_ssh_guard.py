from scapy.all import IP, TCP, UDP, Raw

# iptables-nft-restore programs both sides: f2b-sshd (multiport, REJECT)
# and hashlimit per source (srcip; srcip/24 + dstport)
A, B, BANNED, D = '10.1.0.1', '10.1.0.2', '10.1.0.66', '10.2.0.1'
PACKETS = (
    [IP(src=A, dst=D) / TCP(sport=40000 + i, dport=22, flags='S', seq=1) for i in range(5)] +
    [IP(src=B, dst=D) / TCP(sport=41000 + i, dport=22, flags='S', seq=1) for i in range(2)] +
    [IP(src=BANNED, dst=D) / TCP(sport=42000, dport=22, flags='S', seq=1)] +
    # srcip/24: A and B share one bucket of 2
    [IP(src=s, dst=D) / TCP(sport=43000 + i, dport=2222, flags='S', seq=1)
     for i, s in enumerate((A, B, A))] +
    [IP(src=A, dst=D) / UDP(sport=1000, dport=53 + i) / Raw(b'q' * 8) for i in range(3)]
)
# forwarded: 3 + 2 SSH, 2 on 2222, 2 UDP; back to dp0: the REJECT
EXPECT = {'dp1': 9, 'dp0': 1}
