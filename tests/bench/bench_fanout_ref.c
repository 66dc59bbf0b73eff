/* bench_fanout_ref.c - the copy limit for the fan-out benchmark: one thread
 * that writes the same pre-rendered WebSocket frames to N sockets, as fast
 * as the sockets take them, and nothing else.
 *
 *   bench_fanout_ref JOURNAL_DIR PORT SUBSCRIBERS
 *
 * It renders every event of JOURNAL_DIR once, exactly as the broker does
 * (fb_ws_render_frame), before anyone connects; then accepts SUBSCRIBERS
 * WebSocket clients on 127.0.0.1:PORT (bench_ws_sink: it answers the
 * upgrade with a 101 and does not check the key), and writes the whole
 * stream to each, round-robin in 64 KiB pieces with poll(). It prints
 * "ref_cpu_s: <user+sys seconds of the write phase>" and exits when every
 * socket has been written.
 */
#include "fb_redfish.h"
#include "journal.h"
#include "ws_ring.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define PIECE (64 * 1024)

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_stime.tv_usec / 1e6;
}

static int render_journal(const char *dir, struct fb_buf *out)
{
	struct fb_journal_reader *r;
	int rc = fb_journal_reader_open(dir, 0, &r);
	if (rc < 0)
		return rc;
	uint64_t id;
	struct fb_event ev;
	while ((rc = fb_journal_reader_next(r, UINT64_MAX, &id, &ev)) == 1)
		if ((rc = fb_ws_render_frame(out, &ev, id, FB_REDFISH_DEFAULT_FABRIC)) != 0)
			break;
	fb_journal_reader_close(r);
	return rc < 0 ? rc : 0;
}

/* Read the upgrade request up to its blank line and answer 101. */
static int handshake(int fd)
{
	char req[4096];
	size_t n = 0;
	while (n < sizeof(req) - 1) {
		ssize_t k = read(fd, req + n, sizeof(req) - 1 - n);
		if (k <= 0)
			return -1;
		n += (size_t)k;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
				   "Connection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n";
	return write(fd, resp, sizeof(resp) - 1) == (ssize_t)(sizeof(resp) - 1) ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_fanout_ref JOURNAL_DIR PORT SUBSCRIBERS\n");
		return 2;
	}
	int nsub = atoi(argv[3]);
	struct fb_buf frames = FB_BUF_INIT;
	if (render_journal(argv[1], &frames) != 0 || nsub <= 0) {
		fprintf(stderr, "bench_fanout_ref: cannot render %s\n", argv[1]);
		return 1;
	}
	int ls = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) != 0 || listen(ls, 4096) != 0) {
		perror("bench_fanout_ref: listen");
		return 1;
	}
	struct pollfd *p = calloc((size_t)nsub, sizeof(*p));
	size_t *off = calloc((size_t)nsub, sizeof(*off));
	for (int i = 0; i < nsub;) {
		int fd = accept(ls, NULL, NULL);
		if (fd < 0) {
			perror("bench_fanout_ref: accept");
			return 1;
		}
		if (handshake(fd) != 0) { /* a port probe, not a subscriber */
			close(fd);
			continue;
		}
		p[i].fd = fd;
		p[i++].events = POLLOUT;
	}
	double c0 = cpu_s();
	int left = nsub;
	while (left) {
		if (poll(p, (nfds_t)nsub, 10000) <= 0)
			break;
		for (int i = 0; i < nsub; i++) {
			if (!(p[i].revents & (POLLOUT | POLLERR | POLLHUP)))
				continue;
			size_t n = frames.len - off[i] < PIECE ? frames.len - off[i] : PIECE;
			ssize_t k = send(p[i].fd, frames.data + off[i], n, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k > 0)
				off[i] += (size_t)k;
			if ((k < 0 && errno != EAGAIN) || off[i] == frames.len) {
				p[i].fd = -p[i].fd - 1; /* done: poll ignores negative fds */
				left--;
			}
		}
	}
	printf("ref_cpu_s: %.3f\n", cpu_s() - c0);
	return left ? 1 : 0;
}
