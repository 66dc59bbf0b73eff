"""The latency probe of bench_mtls.sh: one agent that sends one event at a
time and times each until its ACK (the agent port's whole path: read, decode,
journal, commit, ack), over plain TCP or mTLS, while the benchmark's
publishers load the broker. Prints "probe_ms_p50: X" and "probe_ms_p99: Y".

  bench_mtls_probe.py ADDR SECONDS [CA CERT KEY]
"""
import socket
import ssl
import struct
import sys
import time

from agentproto import ACK, Conn, event_body, events


def main():
    addr, seconds = sys.argv[1], float(sys.argv[2])
    host, port = addr.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if len(sys.argv) > 3:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(sys.argv[3])
        ctx.load_cert_chain(sys.argv[4], sys.argv[5])
        sock = ctx.wrap_socket(sock, server_hostname=host)
    c = Conn(addr, sock=sock, timeout=30)
    kind, seq = c.hello("probe@bench")[:2]
    assert kind == "ack", (kind, seq)
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        seq += 1
        t0 = time.perf_counter()
        c.send(events([event_body(seq, switch="probe")]))
        while struct.unpack(">Q", c.expect(ACK, timeout=30))[0] < seq:
            pass
        lat.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.002)
    lat.sort()
    print(f"probe_samples: {len(lat)}")
    print(f"probe_ms_p50: {lat[len(lat) // 2]:.3f}")
    print(f"probe_ms_p99: {lat[min(len(lat) - 1, int(len(lat) * 0.99))]:.3f}")


main()
