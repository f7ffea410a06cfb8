from scapy.all import IP, IPv6, UDP, Raw
from scapy.layers.sctp import (SCTP, SCTPChunkInit, SCTPChunkData, SCTPChunkAbort,
                               SCTPChunkHeartbeatReq)

S4 = dict(src='10.1.0.2', dst='10.2.0.1')
S6 = dict(src='2001:db8:1::1', dst='2001:db8:2::1')
PACKETS = [
    IP(**S4) / SCTP(sport=5000, dport=5001) / SCTPChunkInit(init_tag=0x1234, n_out_streams=10),
    IP(**S4) / SCTP(sport=5000, dport=5001, tag=0x1234) / SCTPChunkData(tsn=7, beginning=1, ending=1, data=b'abcdef'),
    # data behind a padded data chunk: the walk finds the first data chunk
    IP(**S4) / SCTP(sport=5000, dport=5001, tag=1) / SCTPChunkData(tsn=8, data=b'x') /
    SCTPChunkData(tsn=9, data=b'y' * 30),
    IP(**S4) / SCTP(sport=5000, dport=5001, tag=1) / SCTPChunkAbort(),
    IP(**S4) / SCTP(sport=5000, dport=5001, tag=1) / SCTPChunkHeartbeatReq(),
    # an init behind an abort, and a chunk of length 0 ending the walk
    IP(**S4) / SCTP(sport=5000, dport=5001) / SCTPChunkAbort() / SCTPChunkInit(n_out_streams=10),
    IP(**S4) / SCTP(sport=5000, dport=5001) / Raw(b'\x00\x03\x00\x00' + b'\x01\x00\x00\x14' + bytes(16)),
    # a chunk that claims more than the packet has
    IP(**S4) / SCTP(sport=5000, dport=5001) / Raw(b'\x00\x03\x00\x40abcd'),
    IPv6(**S6) / SCTP(sport=5000, dport=5001) / SCTPChunkInit(n_out_streams=10),
    IPv6(**S6) / SCTP(sport=5000, dport=5001, tag=3) / SCTPChunkData(tsn=7, data=b'z' * 40),
    IP(**S4) / UDP(sport=9, dport=9) / Raw(b'\x01\x00\x00\x14' + bytes(16)),
]
EXPECT = {'dp1': 10}
