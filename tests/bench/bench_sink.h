/* bench_sink.h - what the benchmark's subscribers share (bench_ws_sink.c,
 * bench_sse_sink.c): a monotonic clock, and opening a blocking connection
 * that sends one request and reads the response head. Header-only: each
 * sink is one small program. */
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

#endif
