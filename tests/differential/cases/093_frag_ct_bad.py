from scapy.all import IP, UDP, Raw, fragment

SRC, DST = '10.1.0.1', '10.2.0.1'
FULL = fragment(IP(src=SRC, dst=DST, id=501) / UDP(sport=1234, dport=5000) / (b'a' * 3000), fragsize=1480)
OVER = bytes(IP(src=SRC, dst=DST, id=502) / UDP(sport=1234, dport=5000) / (b'b' * 2000))[20:]

PACKETS = [
    # MF, offset 0, no payload
    IP(src=SRC, dst=DST, id=500, proto=17, flags='MF', frag=0),
    # the last fragment of 501 never comes
    FULL[0], FULL[1],
    # 502: 0..1480, then 1400..2008 overlapping the first
    IP(src=SRC, dst=DST, id=502, proto=17, flags='MF', frag=0) / Raw(OVER[:1480]),
    IP(src=SRC, dst=DST, id=502, proto=17, frag=175) / Raw(OVER[1400:]),
    # and a datagram that is fine
    IP(src=SRC, dst=DST) / UDP(sport=1234, dport=5001) / b'ok',
]
EXPECT = {'dp1': 1}
