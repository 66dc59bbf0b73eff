/* bench_http_sink.c - the receiver of bench_push.sh: an HTTP/1.1 server
 * (libevent's evhttp, keep-alive) that answers every POST with 204 and, after
 * N of them, prints N and the seconds from the first to the Nth and exits.
 * Usage: bench_http_sink PORT N
 */
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct sink {
	struct event_base *base;
	long want, got;
	double t0;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct sink *s = arg;
	int last = 0;
	if (evhttp_request_get_command(req) == EVHTTP_REQ_POST) {
		if (s->got++ == 0)
			s->t0 = now();
		if (s->got == s->want) {
			printf("%ld %.6f\n", s->got, now() - s->t0);
			fflush(stdout);
			last = 1;
		}
	}
	evhttp_send_reply(req, 204, "No Content", NULL);
	if (last) {
		/* Let the last answer leave before the client sees a close. */
		struct timeval tv = { 0, 200000 };
		event_base_loopexit(s->base, &tv);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: bench_http_sink PORT N\n");
		return 2;
	}
	struct sink s = { event_base_new(), atol(argv[2]), 0, 0 };
	struct evhttp *http = evhttp_new(s.base);
	if (!http || evhttp_bind_socket(http, "127.0.0.1", (unsigned short)atoi(argv[1])) != 0) {
		fprintf(stderr, "bench_http_sink: cannot listen on 127.0.0.1:%s\n", argv[1]);
		return 1;
	}
	evhttp_set_gencb(http, on_request, &s);
	evhttp_set_max_body_size(http, 1 << 20);
	event_base_dispatch(s.base);
	evhttp_free(http);
	event_base_free(s.base);
	return 0;
}
