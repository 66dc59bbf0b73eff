/* bench_relay.c - the reference for the broker benchmark: a bare libevent
 * relay on the same framing. It reads agent frames, answers HELLO and acks
 * EVENTS (so that the same publishers can drive it), and writes every EVENTS
 * frame unchanged to one socket. No journal, no dedup, no JSON.
 *
 *   bench_relay sink PORT COUNT          accept one connection, count events
 *   bench_relay relay PORT SINKPORT      relay publishers on PORT to the sink
 */
#include "fb_err.h"
#include "fb_wire.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct relay {
	struct event_base *base;
	struct bufferevent *sink;
	uint64_t want, got;
	double t0;
	int is_sink;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The seq of the last event in an EVENTS body, walking the u16 lengths. */
static uint64_t last_seq(const uint8_t *body, size_t len)
{
	struct fb_rd r;
	fb_rd_init(&r, body, len);
	uint32_t n = fb_rd_u32(&r);
	uint64_t seq = 0;
	for (uint32_t i = 0; i < n && !r.err; i++) {
		uint16_t el = fb_rd_u16(&r);
		const uint8_t *p = fb_rd_take(&r, el);
		if (p && el >= 8)
			seq = fb_load_be64(p);
	}
	return seq;
}

static void on_frame(struct relay *rl, struct bufferevent *bev, const struct fb_frame_hdr *h,
		     const uint8_t *frame)
{
	const uint8_t *body = frame + FB_FRAME_HDR_LEN;
	struct fb_buf out = FB_BUF_INIT;
	if (rl->is_sink) {
		if (h->type == FB_FRAME_EVENTS && h->body_len >= 4) {
			if (rl->got == 0)
				rl->t0 = now_s();
			rl->got += fb_load_be32(body);
		}
		return;
	}
	if (h->type == FB_FRAME_HELLO) {
		struct fb_hello_ack a = { 0, FB_FRAME_MAX_DEFAULT, 5000, 1 };
		fb_wire_put_hello_ack(&out, &a);
	} else if (h->type == FB_FRAME_EVENTS) {
		bufferevent_write(rl->sink, frame, FB_FRAME_HDR_LEN + h->body_len);
		fb_wire_put_ack(&out, last_seq(body, h->body_len));
	}
	if (out.len)
		bufferevent_write(bev, out.data, out.len);
	fb_buf_free(&out);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct relay *rl = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	for (;;) {
		size_t avail = evbuffer_get_length(in);
		if (avail < FB_FRAME_HDR_LEN)
			break;
		struct fb_frame_hdr h;
		const uint8_t *p = evbuffer_pullup(in, FB_FRAME_HDR_LEN);
		int rc = fb_frame_peek(p, avail, FB_FRAME_MAX_LIMIT, &h);
		if (rc == FB_EAGAIN)
			break;
		if (rc) {
			fprintf(stderr, "bench_relay: bad frame (%d)\n", rc);
			exit(1);
		}
		size_t flen = FB_FRAME_HDR_LEN + h.body_len;
		on_frame(rl, bev, &h, evbuffer_pullup(in, (ssize_t)flen));
		evbuffer_drain(in, flen);
	}
	if (rl->is_sink && rl->got >= rl->want) {
		double dt = now_s() - rl->t0;
		printf("received %llu events in %.3f s (%.0f events/s)\n", (unsigned long long)rl->got, dt,
		       (double)rl->got / dt);
		exit(0);
	}
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)arg;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		bufferevent_free(bev);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int n, void *arg)
{
	(void)l;
	(void)sa;
	(void)n;
	struct relay *rl = arg;
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	struct bufferevent *bev = bufferevent_socket_new(rl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, read_cb, NULL, event_cb, rl);
	bufferevent_enable(bev, EV_READ | EV_WRITE);
}

static struct evconnlistener *listen_on(struct relay *rl, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	return evconnlistener_new_bind(rl->base, accept_cb, rl, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
				       64, (struct sockaddr *)&sin, sizeof(sin));
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "sink") && strcmp(argv[1], "relay"))) {
		fprintf(stderr, "usage: bench_relay sink PORT COUNT | bench_relay relay PORT SINKPORT\n");
		return 2;
	}
	struct relay rl = { .base = event_base_new(), .is_sink = !strcmp(argv[1], "sink") };
	if (rl.is_sink) {
		rl.want = strtoull(argv[3], NULL, 10);
	} else {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])),
					   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		rl.sink = bufferevent_socket_new(rl.base, -1, BEV_OPT_CLOSE_ON_FREE);
		if (bufferevent_socket_connect(rl.sink, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
			fprintf(stderr, "bench_relay: cannot connect to the sink\n");
			return 1;
		}
		bufferevent_enable(rl.sink, EV_WRITE);
	}
	if (!listen_on(&rl, atoi(argv[2]))) {
		perror("bench_relay: listen");
		return 1;
	}
	event_base_dispatch(rl.base);
	return 0;
}
