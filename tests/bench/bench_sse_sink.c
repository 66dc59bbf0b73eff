/* bench_sse_sink.c - the benchmark's Redfish SSE client: a plain blocking
 * client that sends the GET, checks the 200 text/event-stream head, then
 * counts events (lines "id: N") as fast as the socket delivers them. It
 * measures the broker, not a client library. The SSE twin of bench_ws_sink.
 *
 *   bench_sse_sink HOST PORT PATH COUNT [FIRST]
 *
 * PATH is e.g. /redfish/v1/EventService/SSE?$filter=... (already encoded).
 * With FIRST it also checks that the events are exactly FIRST, FIRST+1, ...
 * in order, and exits 1 naming the first one that is not. FB_BENCH_AUTH,
 * when set, is sent as the Authorization header ("Basic ...").
 */
#include "bench_sink.h"

int main(int argc, char **argv)
{
	uint64_t want, expect, got = 0;
	sink_args("bench_sse_sink", argc, argv, &want, &expect);
	const char *auth = getenv("FB_BENCH_AUTH");
	char req[4096];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: text/event-stream\r\n%s%s%s\r\n",
			 argv[3], argv[1], argv[2], auth ? "Authorization: " : "", auth ? auth : "",
			 auth ? "\r\n" : "");
	if (n <= 0 || (size_t)n >= sizeof(req))
		return 2;
	static uint8_t buf[1 << 20];
	size_t len, off;
	int fd = sink_open("bench_sse_sink", argv[1], argv[2], req, "HTTP/1.1 200", "text/event-stream", buf,
			   sizeof(buf), &len, &off);
	double t0 = 0;
	while (got < want) {
		/* whole lines; an "id: N" line is one event */
		for (;;) {
			uint8_t *nl = memchr(buf + off, '\n', len - off);
			if (!nl)
				break;
			size_t ll = (size_t)(nl - (buf + off));
			if (ll > 4 && memcmp(buf + off, "id: ", 4) == 0) {
				if (got++ == 0)
					t0 = now_s();
				if (expect) {
					uint64_t id = strtoull((const char *)buf + off + 4, NULL, 10);
					if (id != expect) {
						fprintf(stderr, "bench_sse_sink: event %llu has id %llu, expected %llu\n",
							(unsigned long long)got, (unsigned long long)id,
							(unsigned long long)expect);
						return 1;
					}
					expect++;
				}
			}
			off += ll + 1;
		}
		if (got >= want)
			break;
		if (sink_refill(fd, buf, sizeof(buf), &len, &off) != 0) {
			fprintf(stderr, "bench_sse_sink: connection lost after %llu events\n", (unsigned long long)got);
			return 1;
		}
	}
	sink_report(got, t0);
	return 0;
}
