/* bench_render.c - the per-event work of the broker's two hot loops, alone:
 * decoding an event off the wire (the loop thread, ingest.c) and rendering
 * it into the fan-out ring (the WebSocket thread: Redfish JSON, WebSocket
 * header, SSE id line, ws_ring.c). bench_render.sh runs it under callgrind
 * and prints instructions per event, which are repeatable on a loaded
 * machine where times are not; and times the Redfish renderer alone on three
 * mixes against memcpy of the same bytes (the copy limit: what rendering
 * would cost if the document were already there).
 *
 *   bench_render push|decode generated|link_down COUNT
 *   bench_render time generated|fabric|corpus COUNT
 *
 * generated: the event of `fabricbus publish --generate` (bench_broker.sh);
 * link_down: a switch port event with every common field, jobs and counters;
 * fabric: the hand-picked events of tests/lib/fb_test_redfish_corpus.h (port
 * events of every kind, class, technology and severity, root causes, rate
 * limits, counters, jobs, text); corpus: all of it, with the random and
 * hostile events (escapes, control bytes, UTF-8, maximum lengths).
 */
#include "fb_buf.h"
#include "fb_redfish.h"
#include "fb_test_redfish_corpus.h"
#include "fb_wire.h"
#include "ws_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The events of a mix, their default fabrics and EventIds. */
struct mix {
	unsigned n;
	struct fb_event *ev;
	const char **fabric;
	uint64_t *id;
};

static int mix_of(struct mix *m, const char *name)
{
	unsigned n = !strcmp(name, "generated") ? 1 : !strcmp(name, "fabric") ? FBT_CORPUS_CRAFTED : FBT_CORPUS_SIZE;
	m->n = n;
	m->ev = calloc(n, sizeof(*m->ev));
	m->fabric = calloc(n, sizeof(*m->fabric));
	m->id = calloc(n, sizeof(*m->id));
	if (!m->ev || !m->fabric || !m->id)
		return -1;
	for (unsigned i = 0; i < n; i++)
		m->id[i] = fbt_corpus_event(&m->ev[i], i, &m->fabric[i]);
	return 0;
}

/* Render COUNT events of the mix into one reused buffer (as the ring's
 * scratch is); the generated event advances its sequence, EventId and clock
 * as a publisher's do. Returns ns per event; *bytes gets the bytes rendered. */
static double time_render(struct mix *m, long count, uint64_t *bytes)
{
	struct fb_buf out = FB_BUF_INIT;
	struct fb_redfish_facts f;
	uint64_t sum = 0;
	double t0 = now_ns();
	for (long i = 0; i < count; i++) {
		unsigned k = (unsigned)(i % m->n);
		struct fb_event *ev = &m->ev[k];
		uint64_t id = m->id[k];
		if (m->n == 1) {
			ev->seq++;
			ev->ts_ns += 1000;
			id += (uint64_t)i;
		}
		out.len = 0;
		if (fb_redfish_render_facts(&out, ev, id, m->fabric[k], &f))
			exit(1);
		sum += out.len;
	}
	double dt = now_ns() - t0;
	fb_buf_free(&out);
	*bytes = sum;
	return dt / (double)count;
}

/* The same documents, rendered once beforehand, copied COUNT times into one
 * reused buffer. Returns ns per event. */
static double time_copy(struct mix *m, long count)
{
	struct fb_buf all = FB_BUF_INIT, out = FB_BUF_INIT;
	size_t *off = calloc(m->n + 1, sizeof(*off));
	for (unsigned k = 0; off && k < m->n; k++) {
		if (fb_redfish_render(&all, &m->ev[k], m->id[k], m->fabric[k]))
			exit(1);
		off[k + 1] = all.len;
	}
	if (!off || fb_buf_reserve(&out, 1 << 16))
		exit(1);
	uint64_t sum = 0;
	double t0 = now_ns();
	for (long i = 0; i < count; i++) {
		unsigned k = (unsigned)(i % m->n);
		out.len = 0;
		if (fb_buf_put(&out, all.data + off[k], off[k + 1] - off[k]))
			exit(1);
		sum += out.data[out.len / 2];
	}
	double dt = now_ns() - t0;
	if (!sum)
		fprintf(stderr, "\n");
	free(off);
	fb_buf_free(&all);
	fb_buf_free(&out);
	return dt / (double)count;
}

/* The best of five runs of each (a shared machine only ever adds time). */
static int time_mix(const char *name, long count)
{
	struct mix m;
	if (mix_of(&m, name))
		return 1;
	double render = 1e18, copy = 1e18;
	uint64_t bytes = 0;
	for (int r = 0; r < 5; r++) {
		double a = time_render(&m, count, &bytes), b = time_copy(&m, count);
		render = a < render ? a : render;
		copy = b < copy ? b : copy;
	}
	printf("render_%s: %.1f ns/event, memcpy of the same bytes %.1f ns/event, ratio %.1f, %.0f bytes/event\n",
	       name, render, copy, render / copy, (double)bytes / (double)count);
	free(m.ev);
	free(m.fabric);
	free(m.id);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "time") &&
	    (!strcmp(argv[2], "generated") || !strcmp(argv[2], "fabric") || !strcmp(argv[2], "corpus")))
		return time_mix(argv[2], atol(argv[3]));
	if (argc != 4 || (strcmp(argv[1], "push") && strcmp(argv[1], "decode")) ||
	    (strcmp(argv[2], "generated") && strcmp(argv[2], "link_down"))) {
		fprintf(stderr, "usage: bench_render push|decode generated|link_down COUNT\n"
				"       bench_render time generated|fabric|corpus COUNT\n");
		return 2;
	}
	long n = atol(argv[3]);
	struct fb_event ev;
	fbt_crafted_event(&ev, !strcmp(argv[2], "link_down")); /* 0: generated, 1: link_down */
	struct fb_buf wire = FB_BUF_INIT;
	struct fb_ws_ring r;
	/* a warm ring: slots are reused as in a long-running broker */
	if (fb_event_encode(&wire, &ev) || fb_ws_ring_init(&r, 4096, NULL))
		return 1;
	uint64_t sum = 0;
	for (long i = 1; i <= n; i++) {
		if (argv[1][0] == 'd') {
			struct fb_event d;
			if (fb_event_decode(wire.data, wire.len, &d))
				return 1;
			sum += d.seq;
			continue;
		}
		ev.seq = (uint64_t)i;
		ev.ts_ns += 1000;
		if (fb_ws_ring_push(&r, (uint64_t)i, &ev))
			return 1;
		sum += fb_ws_ring_at(&r, r.head - 1)->frame_len;
	}
	printf("%s %s: %ld events, %llu\n", argv[1], argv[2], n, (unsigned long long)sum);
	fb_ws_ring_free(&r);
	fb_buf_free(&wire);
	return 0;
}
