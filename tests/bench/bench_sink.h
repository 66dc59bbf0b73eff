/* bench_sink.h - what the benchmark's subscribers share (bench_ws_sink.c,
 * bench_sse_sink.c): their command line, a monotonic clock, opening a
 * blocking connection that sends one request and reads the response head,
 * reading more after what was parsed, and the closing figure. Header-only:
 * each sink is one small program. */
#ifndef FB_BENCH_SINK_H
#define FB_BENCH_SINK_H

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

/* The command line PROG HOST PORT PATH COUNT [FIRST]: *want is COUNT,
 * *expect FIRST (0 without: ids not checked). Exits 2 with the usage. */
static void sink_args(const char *prog, int argc, char **argv, uint64_t *want, uint64_t *expect)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s HOST PORT PATH COUNT [FIRST]\n", prog);
		exit(2);
	}
	*want = strtoull(argv[4], NULL, 10);
	*expect = argc == 6 ? strtoull(argv[5], NULL, 10) : 0;
}

/* Connect to host:port, send req and read up to the blank line after the
 * response head into buf (cap bytes). The head must start with status
 * (e.g. "HTTP/1.1 101") and contain must (or NULL). Returns the socket with
 * *len bytes in buf, of which the body starts at *off; exits on failure,
 * naming who. */
static int sink_open(const char *who, const char *host, const char *port, const char *req,
		     const char *status, const char *must, uint8_t *buf, size_t cap, size_t *len,
		     size_t *off)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	inet_pton(AF_INET, host, &sin.sin_addr);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		fprintf(stderr, "%s: connect: %m\n", who);
		exit(1);
	}
	size_t n = strlen(req);
	if (write(fd, req, n) != (ssize_t)n)
		exit(1);
	*len = 0;
	for (;;) {
		ssize_t r = read(fd, buf + *len, cap - *len);
		if (r <= 0)
			exit(1);
		*len += (size_t)r;
		uint8_t *end = memmem(buf, *len, "\r\n\r\n", 4);
		if (!end)
			continue;
		size_t head = (size_t)(end - buf);
		if (memcmp(buf, status, strlen(status)) != 0 || (must && !memmem(buf, head, must, strlen(must)))) {
			fprintf(stderr, "%s: refused: %.*s\n", who, (int)head, buf);
			exit(1);
		}
		*off = head + 4;
		return fd;
	}
}

/* Drop the parsed buf[0, *off), keep the rest at the start and read more
 * after it. 0, or -1 when the connection is gone. */
static int sink_refill(int fd, uint8_t *buf, size_t cap, size_t *len, size_t *off)
{
	memmove(buf, buf + *off, *len - *off);
	*len -= *off;
	*off = 0;
	ssize_t r = read(fd, buf + *len, cap - *len);
	if (r <= 0)
		return -1;
	*len += (size_t)r;
	return 0;
}

/* The line the benchmark scripts read: got events since t0. */
static void sink_report(uint64_t got, double t0)
{
	double dt = now_s() - t0;
	printf("received %llu events in %.3f s (%.0f events/s)\n", (unsigned long long)got, dt,
	       (double)got / dt);
}

#endif
