from scapy.all import IP
from scapy.layers.sctp import SCTP, SCTPChunkAbort, SCTPChunkCookieAck, SCTPChunkCookieEcho, \
    SCTPChunkData, SCTPChunkInit, SCTPChunkInitAck, SCTPChunkShutdown, SCTPChunkShutdownAck, \
    SCTPChunkShutdownComplete

CT, ST = 0x1111aaaa, 0x2222bbbb  # the client's and the server's init tags


def sctp(side, sport, tag, chunk):
    if side == 'dp0':
        return ('dp0', IP(src='10.1.0.1', dst='10.2.0.1') /
                SCTP(sport=sport, dport=36412, tag=tag) / chunk)
    return ('dp1', IP(src='10.2.0.1', dst='10.1.0.1') /
            SCTP(sport=36412, dport=sport, tag=tag) / chunk)


PACKETS = [
    sctp('dp0', 47300, 0, SCTPChunkInit(init_tag=CT, a_rwnd=65535, n_out_streams=1,
                                        n_in_streams=1, init_tsn=1)),
    sctp('dp1', 47300, CT, SCTPChunkInitAck(init_tag=ST, a_rwnd=65535, n_out_streams=1,
                                            n_in_streams=1, init_tsn=1)),
    sctp('dp0', 47300, ST, SCTPChunkCookieEcho(cookie=b'k' * 12)),
    sctp('dp1', 47300, CT, SCTPChunkCookieAck()),
    sctp('dp0', 47300, ST, SCTPChunkData(tsn=1, data=b'hello')),
    sctp('dp0', 47300, ST ^ 1, SCTPChunkData(tsn=2, data=b'wrong tag')),
    sctp('dp0', 47300, ST, SCTPChunkShutdown(cumul_tsn_ack=1)),
    sctp('dp1', 47300, CT, SCTPChunkShutdownAck()),
    sctp('dp0', 47300, ST, SCTPChunkShutdownComplete()),
    sctp('dp0', 47301, 7, SCTPChunkAbort()),
]
EXPECT = {'dp1': 5, 'dp0': 3}
