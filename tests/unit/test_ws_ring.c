/* test_ws_ring.c - the fan-out ring's byte arena (ws_ring.c): a reader that
 * falls behind while the ring evicts and reuses chunks only ever gets the
 * bytes of the events it asked for (or the missed notice), whether it copies
 * or points at the frames; a document that outgrows its chunk moves the
 * chunk and every message in it still reads right; memory stays at about
 * ring_events x message bytes plus two chunks, and a warm ring allocates
 * nothing; clear keeps the chunks for reuse; after a zero-copy write the
 * socket took only part of, the frames it did not start come again. Small
 * chunk sizes make each of these happen within a few hundred events. */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_buf.h"
#include "fb_redfish.h"
#include "filter.h"
#include "ws_ring.h"
#include "ws_sub.h"

#include <string.h>

/* Event i: every kind x link class, text of a length that varies with i (so
 * messages differ in size and chunk boundaries fall anywhere). */
static void event_of(struct fb_event *ev, unsigned i)
{
	fbt_event_full(ev);
	ev->kind = (uint8_t)(1 + i % 15);
	ev->link_class = (uint8_t)(i / 15 % 5);
	size_t n = (i * 37) % (sizeof(ev->text) - 1);
	memset(ev->text, 'a' + (int)(i % 26), n);
	ev->text[n] = '\0';
}

/* Every string at its longest, every byte one that JSON escapes (\u0001):
 * the largest document an agent can make the broker render. */
static void event_worst(struct fb_event *ev, unsigned i)
{
	event_of(ev, i);
#define FILL(a) (memset((a), '\x01', sizeof(a) - 1), (a)[sizeof(a) - 1] = '\0')
	FILL(ev->agent_id);
	FILL(ev->subj.fabric);
	FILL(ev->subj.switch_name);
	FILL(ev->subj.node);
	FILL(ev->subj.device);
	FILL(ev->subj.addr);
	FILL(ev->subj.peer_name);
	FILL(ev->text);
#undef FILL
	for (unsigned c = ev->n_counters; c < FB_COUNTERS_MAX; c++)
		fb_event_add_counter(ev, (uint16_t)(1000 + c), UINT64_MAX - c);
}

/* The bytes a reader must get for ids [from, to): each event's frame as
 * fb_ws_render_frame (or fb_sse_render_frame) renders it on its own. */
static int expected(struct fb_buf *b, uint64_t from, uint64_t to, uint64_t id0, int sse,
		    void (*mk)(struct fb_event *, unsigned))
{
	for (uint64_t id = from; id < to; id++) {
		struct fb_event ev;
		mk(&ev, (unsigned)(id - id0));
		int rc = sse ? fb_sse_render_frame(b, &ev, id, "IB") : fb_ws_render_frame(b, &ev, id, "IB");
		if (rc)
			return rc;
	}
	return 0;
}

/* One fill of s, everything it produced (iovecs gathered) appended to got. */
static int fill_once(struct fb_ws_sub *s, const struct fb_ws_src *src, size_t budget, int zero_copy,
		     struct fb_buf *got, int *more)
{
	struct iovec v[8];
	struct fb_ws_iov iov = { v, 0, 8, 0, budget, NULL };
	struct fb_buf out = FB_BUF_INIT;
	int rc = fb_ws_sub_fill(s, src, &out, budget, more, zero_copy ? &iov : NULL);
	for (int i = 0; i < iov.n && !rc; i++)
		rc = fb_buf_put(got, v[i].iov_base, v[i].iov_len);
	if (!rc)
		rc = fb_buf_put(got, out.data, out.len);
	fb_buf_free(&out);
	return rc;
}

/* A reader from since=<since> (a WebSocket one, or SSE). */
static void reader_at(struct fb_ws_sub *s, uint64_t since, int sse)
{
	struct fb_filter f;
	const char *why = NULL;
	char arg[40];
	snprintf(arg, sizeof(arg), "since=%llu", (unsigned long long)since);
	fb_filter_init(&f);
	(void)fb_filter_arg(&f, arg, &why);
	fb_ws_sub_init(s, &f, 0);
	s->kind = sse ? FB_WS_SUB_SSE : FB_WS_SUB_WS;
}

/* Readers (WebSocket copying, WebSocket pointing, SSE) read a few frames
 * between pushes, slower than events come: the ring evicts what they have
 * not read and reuses its chunks under them. Each fill must be exactly the
 * frames of the ids it moved over, or one missed notice for a gap; a live
 * reader that fell out is cut off and comes back with its ResumeSince, as a
 * client does. */
static void run_behind(size_t chunk_size, size_t headroom, size_t cap, unsigned events,
		       void (*mk)(struct fb_event *, unsigned))
{
	const uint64_t id0 = 500;
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, cap, "IB"), 0);
	r.chunk_size = chunk_size;
	r.headroom = headroom;
	struct fb_ws_src src = { .ring = &r, .journal_dir = NULL, .default_fabric = "IB",
				 .head_id = id0 - 1, .queue_events = 4 * cap };
	struct fb_ws_sub sub[3];
	for (int k = 0; k < 3; k++)
		reader_at(&sub[k], id0 - 1, k == 2);
	struct fb_buf got = FB_BUF_INIT, want = FB_BUF_INIT;
	uint64_t gaps[3] = { 0 }, frames[3] = { 0 };
	for (unsigned i = 0; i < events; i++) {
		struct fb_event ev;
		mk(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, id0 + i, &ev), 0);
		src.head_id = id0 + i;
		for (int k = 0; k < 3; k++) {
			if ((i + (unsigned)k) % 3)
				continue; /* every third event: one fill each */
			struct fb_ws_sub *s = &sub[k];
			uint64_t before = s->next_id;
			int more = 0;
			got.len = want.len = 0;
			CHECK_EQ(fill_once(s, &src, 1500, k == 1, &got, &more), 0);
			if (s->state == FB_WS_SUB_OVERFLOWED) {
				/* live and fell out: cut off; it resumes where it was */
				CHECK_EQ(got.len, 0);
				CHECK_EQ(s->resume_since, before - 1);
				fb_ws_sub_release(s);
				reader_at(s, before - 1, k == 2);
				gaps[k]++;
				continue;
			}
			if (before < fb_ws_ring_oldest_id(&r)) {
				/* catching up from a gap: the notice for exactly that */
				CHECK_EQ(s->next_id, fb_ws_ring_oldest_id(&r));
				CHECK(memmem(got.data, got.len, "SubscriberEventsMissed", 22) != NULL);
				continue;
			}
			CHECK_EQ(expected(&want, before, s->next_id, id0, k == 2, mk), 0);
			CHECK_EQ(got.len, want.len);
			CHECK(memcmp(got.data, want.data, want.len) == 0);
			frames[k] += s->next_id - before;
		}
	}
	for (int k = 0; k < 3; k++) {
		CHECK(gaps[k] > 0);   /* it did fall behind */
		CHECK(frames[k] > 0); /* and read from the ring meanwhile */
		fb_ws_sub_release(&sub[k]);
	}
	/* with less headroom than the renderer reserves, chunks did grow */
	CHECK(headroom >= 1024 + FB_BUF_JSON_STR_ROOM || r.arena_bytes > r.n_chunks * chunk_size);
	/* what is held still reads right after all that reuse */
	got.len = want.len = 0;
	for (uint64_t seq = r.tail; seq < r.head; seq++) {
		const struct fb_ws_msg *m = fb_ws_ring_at(&r, seq);
		CHECK_EQ(fb_buf_put(&got, fb_ws_msg_frame(m), m->frame_len), 0);
	}
	CHECK_EQ(expected(&want, fb_ws_ring_oldest_id(&r), src.head_id + 1, id0, 0, mk), 0);
	CHECK_EQ(got.len, want.len);
	CHECK(memcmp(got.data, want.data, want.len) == 0);
	fb_buf_free(&got);
	fb_buf_free(&want);
	fb_ws_ring_free(&r);
}

/* Chunks of ~a dozen messages, recycled many times over. */
static void reader_behind_eviction_gets_only_its_events(void)
{
	run_behind(16 << 10, FB_WS_RING_HEADROOM, 40, 1500, event_of);
}

/* Small chunks and almost no headroom: renders outgrow the chunk and move
 * it with earlier messages in it (under ASan a stale pointer into the old
 * place is a use after free). */
static void reader_behind_moving_chunks(void)
{
	run_behind(2 << 10, 64, 24, 600, event_of);
}

/* The largest documents, a few to a chunk. */
static void reader_behind_largest_documents(void)
{
	run_behind(64 << 10, FB_WS_RING_HEADROOM, 24, 400, event_worst);
}

/* The largest document fits the headroom: filled with them, the arena's
 * chunks never grow or move (printed: the largest message). */
static void largest_document_never_moves_a_chunk(void)
{
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, 100, "IB"), 0);
	r.chunk_size = 64 << 10;
	size_t max = 0;
	for (unsigned i = 0; i < 1500; i++) {
		struct fb_event ev;
		event_worst(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, UINT64_MAX - 1500 + i, &ev), 0);
		const struct fb_ws_msg *m = fb_ws_ring_at(&r, r.head - 1);
		size_t n = FB_WS_FRAME_HDR_MAX + m->frame_len + strlen(fb_ws_msg_origin(m)) + 1;
		max = n > max ? n : max;
	}
	fprintf(stderr, "  largest message %zu bytes, headroom %zu\n", max, FB_WS_RING_HEADROOM);
	CHECK(max < FB_WS_RING_HEADROOM);
	CHECK_EQ(r.arena_bytes, (size_t)r.n_chunks * r.chunk_size);
	fb_ws_ring_free(&r);
}

/* Memory: R messages of B bytes each take at most R x B plus two chunks'
 * worth (the one being filled, the one being emptied) and the headroom left
 * at the end of each chunk; once warm, pushes allocate no chunk. */
static void arena_is_bounded_and_reused(void)
{
	const size_t cap = 3000, chunk = 64 << 10;
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, cap, "IB"), 0);
	r.chunk_size = chunk;
	size_t max_msg = 0;
	uint32_t warm = 0;
	for (unsigned i = 0; i < 10 * cap; i++) {
		struct fb_event ev;
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, 1 + i, &ev), 0);
		const struct fb_ws_msg *m = fb_ws_ring_at(&r, r.head - 1);
		size_t n = FB_WS_FRAME_HDR_MAX + m->frame_len + strlen(fb_ws_msg_origin(m)) + 1;
		max_msg = n > max_msg ? n : max_msg;
		if (i == 2 * cap)
			warm = r.n_chunks;
	}
	CHECK_EQ(fb_ws_ring_count(&r), cap);
	CHECK_EQ(r.n_chunks, warm); /* no chunk allocated after the second fill */
	size_t per_chunk = chunk - FB_WS_RING_HEADROOM;
	size_t held = cap * max_msg;
	size_t bound = (held + per_chunk - 1) / per_chunk * chunk + 2 * chunk;
	fprintf(stderr, "  %u chunks of %zu KiB for %zu messages of <= %zu bytes (bound %zu KiB)\n",
		r.n_chunks, chunk >> 10, cap, max_msg, bound >> 10);
	CHECK_EQ(r.arena_bytes, (size_t)r.n_chunks * chunk);
	CHECK(r.arena_bytes <= bound);
	/* every chunk is the current one, on the free list, or holds messages */
	CHECK(r.n_free <= 2);
	fb_ws_ring_free(&r);
}

/* A ring of one: each push evicts the only message; the one chunk is started
 * over instead of leaking a chunk per chunkful. */
static void ring_of_one_keeps_one_chunk(void)
{
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, 1, "IB"), 0);
	r.chunk_size = 16 << 10;
	for (unsigned i = 0; i < 500; i++) {
		struct fb_event ev;
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, 1 + i, &ev), 0);
		CHECK_EQ(fb_ws_ring_count(&r), 1);
		CHECK_EQ(fb_ws_ring_oldest_id(&r), 1 + i);
	}
	CHECK_EQ(r.n_chunks, 1);
	fb_ws_ring_free(&r);
}

/* Clear drops the messages, keeps the chunks, and the next fill reuses them. */
static void clear_keeps_chunks_for_reuse(void)
{
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, 200, "IB"), 0);
	r.chunk_size = 16 << 10;
	struct fb_event ev;
	for (unsigned i = 0; i < 200; i++) {
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, 1 + i, &ev), 0);
	}
	uint32_t n = r.n_chunks;
	CHECK(n > 3);
	fb_ws_ring_clear(&r);
	CHECK_EQ(fb_ws_ring_count(&r), 0);
	CHECK_EQ(r.msg_bytes, 0);
	CHECK_EQ(fb_ws_ring_oldest_id(&r), 0);
	CHECK_EQ(r.n_free, n - 1);
	for (unsigned i = 0; i < 200; i++) {
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, 1000 + i, &ev), 0);
	}
	CHECK_EQ(r.n_chunks, n);
	CHECK_EQ(fb_ws_ring_oldest_id(&r), 1000);
	struct fb_buf want = FB_BUF_INIT;
	event_of(&ev, 0);
	CHECK_EQ(fb_ws_render_frame(&want, &ev, 1000, "IB"), 0);
	const struct fb_ws_msg *m = fb_ws_ring_at(&r, r.tail);
	CHECK_EQ(m->frame_len, want.len);
	CHECK(memcmp(fb_ws_msg_frame(m), want.data, want.len) == 0);
	fb_buf_free(&want);
	fb_ws_ring_free(&r);
}

/* Every message held is in slot seq % cap and carries its event's frame and
 * origin, found from the tail's slot without a division: after the ring
 * wrapped (a capacity that divides nothing), after a clear at a head that
 * is not a multiple of it, and with origins shorter and longer than the
 * 64-byte block they are copied in, in chunks with little room left. */
static void check_slots(const struct fb_ws_ring *r, uint64_t id0, void (*mk)(struct fb_event *, unsigned))
{
	CHECK(fb_ws_ring_count(r) > 0);
	for (uint64_t seq = r->tail; seq <= r->head; seq++)
		CHECK(fb_ws_ring_at(r, seq) == &r->slot[seq % r->cap]);
	for (uint64_t seq = r->tail > 3 ? r->tail - 3 : 0; seq < r->tail; seq++)
		CHECK(fb_ws_ring_at(r, seq) == &r->slot[seq % r->cap]); /* not held: the slow way */
	struct fb_buf want = FB_BUF_INIT;
	for (uint64_t seq = r->tail; seq < r->head; seq++) {
		const struct fb_ws_msg *m = fb_ws_ring_at(r, seq);
		struct fb_event ev;
		mk(&ev, (unsigned)(m->event_id - id0));
		char origin[FB_REDFISH_ORIGIN_MAX];
		CHECK(fb_redfish_origin(&ev, "IB", origin, sizeof(origin)) > 0);
		CHECK_STR(fb_ws_msg_origin(m), origin);
		fb_buf_reset(&want);
		CHECK_EQ(fb_ws_render_frame(&want, &ev, m->event_id, "IB"), 0);
		CHECK_EQ(m->frame_len, want.len);
		CHECK(memcmp(fb_ws_msg_frame(m), want.data, want.len) == 0);
	}
	fb_buf_free(&want);
}

static void slots_and_origins_after_wrap_and_clear(void)
{
	void (*mks[])(struct fb_event *, unsigned) = { event_of, event_worst };
	for (int w = 0; w < 2; w++) {
		struct fb_ws_ring r;
		CHECK_EQ(fb_ws_ring_init(&r, 7, "IB"), 0);
		r.chunk_size = 4 << 10;
		r.headroom = 200; /* many pushes find less than the block's room */
		struct fb_event ev;
		for (unsigned i = 0; i < 23; i++) {
			mks[w](&ev, i);
			CHECK_EQ(fb_ws_ring_push(&r, 100 + i, &ev), 0);
		}
		CHECK_EQ(r.tail, 16);
		check_slots(&r, 100, mks[w]);
		/* a full ring's head is in its tail's slot: clear one that is not */
		fb_ws_ring_clear(&r);
		for (unsigned i = 0; i < 3; i++) {
			mks[w](&ev, 300 + i);
			CHECK_EQ(fb_ws_ring_push(&r, 800 + i, &ev), 0);
		}
		fb_ws_ring_clear(&r);
		CHECK_EQ(r.tail % r.cap, 5);
		for (unsigned i = 0; i < 12; i++) {
			mks[w](&ev, 500 + i);
			CHECK_EQ(fb_ws_ring_push(&r, 1000 + i, &ev), 0);
		}
		CHECK_EQ(fb_ws_ring_oldest_id(&r), 1005);
		check_slots(&r, 500, mks[w]);
		fb_ws_ring_free(&r);
	}
}

/* A socket that takes only part of a zero-copy write (write_iov): the frame
 * it stopped in is finished from its iovec, the frames it did not start go
 * back to the ring (fb_ws_sub_unsend) and come in the next fill. Takes of 0
 * bytes, a frame boundary and mid-frame: the reader gets every frame once,
 * in order, and counts only those; a reader the fill made live on frames it
 * did not get is catching up again. */
static void partial_write_resends_what_was_not_started(void)
{
	const uint64_t id0 = 100;
	const unsigned events = 300;
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, events, "IB"), 0);
	for (unsigned i = 0; i < events; i++) {
		struct fb_event ev;
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, id0 + i, &ev), 0);
	}
	struct fb_ws_src src = { .ring = &r, .default_fabric = "IB", .head_id = id0 + events - 1,
				 .queue_events = 20 };
	struct fb_ws_sub s;
	reader_at(&s, id0 - 1, 0);
	struct iovec v[16];
	uint64_t id[16];
	struct fb_buf got = FB_BUF_INIT, want = FB_BUF_INIT, out = FB_BUF_INIT;
	int more = 1, was_live = 0, back = 0;
	for (unsigned w = 0; more; w++) {
		struct fb_ws_iov iov = { v, 0, 16, 0, 6000, id };
		out.len = 0;
		uint64_t lag = fb_ws_sub_lag(&s, src.head_id);
		CHECK_EQ(fb_ws_sub_fill(&s, &src, &out, 6000, &more, &iov), 0);
		CHECK_EQ(out.len, 0);
		CHECK(iov.n > 0);
		/* the socket takes: everything, nothing, up to a boundary, or
		 * into the middle of a frame */
		size_t take = iov.bytes;
		if (w % 4 == 1)
			take = 0;
		else if (w % 4 == 2)
			take = iov.v[0].iov_len + iov.v[1].iov_len;
		else if (w % 4 == 3)
			take = iov.v[0].iov_len + iov.v[1].iov_len / 2;
		int i = 0;
		size_t skip = take;
		for (; i < iov.n && skip >= iov.v[i].iov_len; skip -= iov.v[i++].iov_len)
			CHECK_EQ(fb_buf_put(&got, iov.v[i].iov_base, iov.v[i].iov_len), 0);
		if (skip) /* finished as lws_write would */
			CHECK_EQ(fb_buf_put(&got, iov.v[i].iov_base, iov.v[i].iov_len), 0);
		i += skip != 0;
		if (take == iov.bytes)
			continue;
		was_live |= s.state == FB_WS_SUB_LIVE;
		uint64_t next = s.next_id;
		fb_ws_sub_unsend(&s, &src, &iov, i);
		CHECK_EQ(s.next_id, i < iov.n ? id[i] : next); /* none left: stays */
		CHECK(fb_ws_sub_lag(&s, src.head_id) <= lag);
		if (fb_ws_sub_lag(&s, src.head_id) > src.queue_events) {
			CHECK_EQ(s.state, FB_WS_SUB_CATCHUP);
			back++;
		}
		more = s.next_id <= src.head_id;
	}
	CHECK_EQ(expected(&want, id0, id0 + events, id0, 0, event_of), 0);
	CHECK_EQ(got.len, want.len);
	CHECK(memcmp(got.data, want.data, want.len) == 0);
	CHECK_EQ(s.sent, events);
	CHECK_EQ(s.state, FB_WS_SUB_LIVE);
	CHECK(was_live && back > 0);
	fb_ws_sub_release(&s);
	fb_buf_free(&got);
	fb_buf_free(&want);
	fb_buf_free(&out);
	fb_ws_ring_free(&r);
}

int main(void)
{
	RUN(reader_behind_eviction_gets_only_its_events);
	RUN(reader_behind_moving_chunks);
	RUN(reader_behind_largest_documents);
	RUN(largest_document_never_moves_a_chunk);
	RUN(arena_is_bounded_and_reused);
	RUN(ring_of_one_keeps_one_chunk);
	RUN(clear_keeps_chunks_for_reuse);
	RUN(slots_and_origins_after_wrap_and_clear);
	RUN(partial_write_resends_what_was_not_started);
	return TEST_DONE();
}
