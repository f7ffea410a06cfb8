from scapy.all import IP, UDP

PACKETS = []
for rnd in range(3):
    for h in (1, 2, 3):
        PACKETS.append(IP(src='10.1.0.%d' % h, dst='10.2.0.1') / UDP(sport=10 + h % 2, dport=1))
        PACKETS.append(IP(src='10.1.0.%d' % h, dst='10.2.0.1') / UDP(sport=10 + h % 2, dport=2))
EXPECT = {'dp1': 12}

# nftdp keeps no counter for an element the packet path adds (the set's
# counter template is not instantiated there yet): the elements are compared,
# their counters not. docs/differences.md.
KNOWN_DIFFERENCES = {
    'set ip flt pairs': 'elements added by update @pairs carry no counter in nftdp',
}
