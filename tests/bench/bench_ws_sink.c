/* bench_ws_sink.c - the benchmark's WebSocket subscriber: a plain blocking
 * client that does the RFC 6455 handshake, then counts text messages as fast
 * as the socket delivers them. It measures the broker, not a client library.
 *
 *   bench_ws_sink HOST PORT PATH COUNT [FIRST]
 *
 * With FIRST it also checks, as the fan-out test needs, that the messages
 * are exactly the events FIRST, FIRST+1, ... in order (EventId of each
 * Redfish Event), with no "missed" notice; it exits 1 naming the first
 * message that is not.
 */
#include "bench_sink.h"

/* The EventId of a Redfish Event ("EventId":"N"), or 0 if it has none. */
static uint64_t event_id(const uint8_t *p, size_t n)
{
	static const char key[] = "\"EventId\":\"";
	const uint8_t *k = memmem(p, n, key, sizeof(key) - 1);
	if (!k)
		return 0;
	uint64_t id = 0;
	for (k += sizeof(key) - 1; k < p + n && *k >= '0' && *k <= '9'; k++)
		id = id * 10 + (uint64_t)(*k - '0');
	return id;
}

/* Answer a ping as RFC 6455 asks (a masked pong with its payload): the
 * broker hangs up on a peer that has not answered one for twice its ping
 * interval (WsPingInterval, 30 s), and a long fan-out run outlasts that. */
static int pong(int fd, const uint8_t *payload, size_t n)
{
	uint8_t f[2 + 4 + 125];
	if (n > 125)
		return -1;
	f[0] = 0x8A;
	f[1] = (uint8_t)(0x80 | n);
	memset(f + 2, 0, 4); /* mask key 0: the payload goes as is */
	memcpy(f + 6, payload, n);
	return write(fd, f, 6 + n) == (ssize_t)(6 + n) ? 0 : -1;
}

int main(int argc, char **argv)
{
	uint64_t want, expect, got = 0;
	sink_args("bench_ws_sink", argc, argv, &want, &expect);
	char req[1024];
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
		 "Sec-WebSocket-Key: ZmFicmljYnVzLWJlbmNoIQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
		 argv[3], argv[1], argv[2]);
	static uint8_t buf[1 << 20];
	size_t len, off;
	int fd = sink_open("bench_ws_sink", argv[1], argv[2], req, "HTTP/1.1 101", NULL, buf, sizeof(buf),
			   &len, &off);
	double t0 = 0;
	while (got < want) {
		/* Parse whole frames, then compact and read more. */
		for (;;) {
			if (len - off < 2)
				break;
			uint8_t op = buf[off] & 0x0F;
			uint64_t pl = buf[off + 1] & 0x7F;
			size_t hdr = 2;
			if (pl == 126) {
				if (len - off < 4)
					break;
				pl = (uint64_t)buf[off + 2] << 8 | buf[off + 3];
				hdr = 4;
			} else if (pl == 127) {
				if (len - off < 10)
					break;
				pl = 0;
				for (int i = 0; i < 8; i++)
					pl = pl << 8 | buf[off + 2 + i];
				hdr = 10;
			}
			if (len - off < hdr + pl)
				break;
			if (op == 1) {
				if (got++ == 0)
					t0 = now_s();
				if (expect) {
					uint64_t id = event_id(buf + off + hdr, (size_t)pl);
					if (id != expect) {
						fprintf(stderr, "bench_ws_sink: message %llu is %s EventId %llu, "
							"expected %llu: %.*s\n",
							(unsigned long long)got, id ? "" : "not an event,",
							(unsigned long long)id, (unsigned long long)expect, (int)(pl < 200 ? pl : 200),
							(const char *)buf + off + hdr);
						return 1;
					}
					expect++;
				}
			} else if (op == 9 && pong(fd, buf + off + hdr, (size_t)pl) != 0) {
				fprintf(stderr, "bench_ws_sink: cannot answer a ping: %m\n");
				return 1;
			} else if (op == 8) {
				fprintf(stderr, "bench_ws_sink: server closed after %llu messages\n",
					(unsigned long long)got);
				return 1;
			}
			off += hdr + pl;
		}
		if (got >= want)
			break; /* the last frames were already in the buffer */
		if (sink_refill(fd, buf, sizeof(buf), &len, &off) != 0) {
			fprintf(stderr, "bench_ws_sink: connection lost after %llu messages\n",
				(unsigned long long)got);
			return 1;
		}
	}
	sink_report(got, t0);
	return 0;
}
