# -m time against the wall clock: every rule's outcome holds for the
# whole run (each side reads the clock when its packets pass, seconds
# apart), so the counters agree whatever the day and hour; the rules
# cover dates, weekdays, hours (past midnight, --contiguous), monthdays,
# --kerneltz and inversion. A run that crosses 00:00, 04:00, 06:00,
# 12:00, 18:00 or 20:00 UTC between the two sides could differ.
from scapy.all import IP, UDP, Raw

PACKETS = [IP(src='10.1.0.1', dst='10.2.0.1') / UDP(sport=5000 + i, dport=9) / Raw(b'x' * 8)
           for i in range(4)]
EXPECT = {'dp1': 4}
