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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int connect_to(const char *host, const char *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	inet_pton(AF_INET, host, &sin.sin_addr);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		perror("bench_sse_sink: connect");
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: bench_sse_sink HOST PORT PATH COUNT [FIRST]\n");
		return 2;
	}
	uint64_t want = strtoull(argv[4], NULL, 10), got = 0;
	uint64_t expect = argc == 6 ? strtoull(argv[5], NULL, 10) : 0;
	int fd = connect_to(argv[1], argv[2]);
	const char *auth = getenv("FB_BENCH_AUTH");
	char req[4096];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%s\r\nAccept: text/event-stream\r\n%s%s%s\r\n",
			 argv[3], argv[1], argv[2], auth ? "Authorization: " : "", auth ? auth : "",
			 auth ? "\r\n" : "");
	if (n <= 0 || (size_t)n >= sizeof(req) || write(fd, req, (size_t)n) != n)
		return 1;
	static uint8_t buf[1 << 20];
	size_t len = 0, off = 0;
	for (;;) { /* the head ends at the first blank line */
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);
		if (r <= 0)
			return 1;
		len += (size_t)r;
		uint8_t *end = memmem(buf, len, "\r\n\r\n", 4);
		if (end) {
			if (memcmp(buf, "HTTP/1.1 200", 12) != 0 || !memmem(buf, (size_t)(end - buf), "text/event-stream", 17)) {
				fprintf(stderr, "bench_sse_sink: refused: %.*s\n", (int)(end - buf), buf);
				return 1;
			}
			off = (size_t)(end - buf) + 4;
			break;
		}
	}
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
		memmove(buf, buf + off, len - off);
		len -= off;
		off = 0;
		if (got >= want)
			break;
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);
		if (r <= 0) {
			fprintf(stderr, "bench_sse_sink: connection lost after %llu events\n", (unsigned long long)got);
			return 1;
		}
		len += (size_t)r;
	}
	double dt = now_s() - t0;
	printf("received %llu events in %.3f s (%.0f events/s)\n", (unsigned long long)got, dt, (double)got / dt);
	return 0;
}
