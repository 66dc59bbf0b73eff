/* test_sse_frame.c - the SSE framing of the ring (ws_ring.c): the same JSON
 * serves the WebSocket frame and the SSE event (one serialization), the SSE
 * event from the ring is byte-for-byte what journal replay renders, the
 * data line holds no line break whatever the event's text, and the $filter
 * attributes kept per message are the event's; a WebSocket subscriber's
 * fill that points at ring frames (iovecs) carries exactly the bytes, in the
 * order, that the copying fill writes, filter and write budget included. */
#include "fb_test.h"
#include "fb_test_event.h"

#include "fb_buf.h"
#include "fb_redfish.h"
#include "rf_filter.h"
#include "filter.h"
#include "ws_ring.h"
#include "ws_sub.h"

#include <string.h>

/* Events of every kind x link class, with the fixture's awkward text. */
static void event_of(struct fb_event *ev, unsigned i)
{
	fbt_event_full(ev);
	ev->kind = (uint8_t)(1 + i % 15);
	ev->link_class = (uint8_t)(i / 15 % 5);
	strcpy(ev->text, "line\nbreak\r\"q\" \x01");
}

static void sse_from_ring_is_the_replayed_frame(void)
{
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, 16, "IB"), 0);
	struct fb_buf ring_out = FB_BUF_INIT, replay = FB_BUF_INIT;
	for (unsigned i = 0; i < 75; i++) {
		struct fb_event ev;
		event_of(&ev, i);
		uint64_t id = 1000 + i * 97ull;
		CHECK_EQ(fb_ws_ring_push(&r, id, &ev), 0);
		struct fb_ws_msg *m = fb_ws_ring_at(&r, r.head - 1);
		ring_out.len = replay.len = 0;
		CHECK_EQ(fb_ws_msg_put_sse(m, &ring_out), 0);
		CHECK_EQ(fb_sse_render_frame(&replay, &ev, id, "IB"), 0);
		CHECK_EQ(ring_out.len, replay.len);
		CHECK(memcmp(ring_out.data, replay.data, replay.len) == 0);

		/* "id: N\ndata: " JSON "\n\n", the JSON the WebSocket frame carries */
		char head[64];
		int hn = snprintf(head, sizeof(head), "id: %llu\ndata: ", (unsigned long long)id);
		CHECK(memcmp(ring_out.data, head, (size_t)hn) == 0);
		size_t json_len = ring_out.len - (size_t)hn - 2;
		CHECK_EQ(json_len, m->frame_len - m->hdr_len);
		CHECK(memcmp(ring_out.data + hn, fb_ws_msg_frame(m) + m->hdr_len, json_len) == 0);
		CHECK(memcmp(ring_out.data + ring_out.len - 2, "\n\n", 2) == 0);
		CHECK(!memchr(ring_out.data + hn, '\n', json_len));
		CHECK(!memchr(ring_out.data + hn, '\r', json_len));

		/* the attributes a $filter reads (worked out on first use) */
		const struct fb_rf_attrs *a = fb_ws_msg_rf(m);
		struct fb_redfish_class cls;
		fb_redfish_classify(&ev, &cls);
		char origin[FB_REDFISH_ORIGIN_MAX];
		CHECK(fb_redfish_origin(&ev, "IB", origin, sizeof(origin)) > 0);
		CHECK_STR(a->message_id, cls.message_id);
		CHECK_STR(a->event_type, cls.event_type);
		CHECK_STR(a->origin, origin);
		CHECK_STR(a->resource_type, fb_rf_origin_type(origin));
		CHECK(a->resource_type[0] != '\0');
		CHECK_EQ(a->prefix_len, strcspn(cls.message_id, "."));
	}
	fb_buf_free(&ring_out);
	fb_buf_free(&replay);
	fb_ws_ring_free(&r);
}

static void missed_notice_resumes_at_its_id(void)
{
	struct fb_buf b = FB_BUF_INIT;
	CHECK_EQ(fb_sse_render_missed_frame(&b, 12, 345), 0);
	CHECK(b.len > 20);
	CHECK(memcmp(b.data, "id: 345\ndata: {", 15) == 0);
	CHECK(memcmp(b.data + b.len - 2, "\n\n", 2) == 0);
	CHECK(memmem(b.data, b.len, "SubscriberEventsMissed", 22) != NULL);
	CHECK(!memchr(b.data + 14, '\n', b.len - 16));
	fb_buf_free(&b);
}

/* Everything s gets from the ring with fills of budget bytes, appended to
 * all: copied (iov NULL) or gathered from the iovecs. */
static int drain_sub(struct fb_ws_sub *s, const struct fb_ws_src *src, size_t budget, int zero_copy,
		     struct fb_buf *all, unsigned *fills)
{
	struct iovec v[16];
	struct fb_ws_iov iov = { v, 0, 16, 0, budget, NULL };
	struct fb_buf out = FB_BUF_INIT;
	int more = 1, rc = 0;
	for (*fills = 0; more && !rc; (*fills)++) {
		out.len = 0;
		iov.n = 0;
		iov.bytes = 0;
		rc = fb_ws_sub_fill(s, src, &out, budget, &more, zero_copy ? &iov : NULL);
		size_t sum = 0;
		for (int i = 0; i < iov.n && !rc; i++) {
			rc = fb_buf_put(all, v[i].iov_base, v[i].iov_len);
			sum += v[i].iov_len;
		}
		if (!rc && (sum != iov.bytes || (iov.n && out.len)))
			rc = -1; /* frames in one of the two only */
		if (!rc)
			rc = fb_buf_put(all, out.data, out.len);
	}
	fb_buf_free(&out);
	return rc;
}

static void ws_fill_points_at_the_frames_it_would_copy(void)
{
	struct fb_ws_ring r;
	CHECK_EQ(fb_ws_ring_init(&r, 64, "IB"), 0);
	for (unsigned i = 0; i < 50; i++) {
		struct fb_event ev;
		event_of(&ev, i);
		CHECK_EQ(fb_ws_ring_push(&r, 100 + i, &ev), 0);
	}
	struct fb_ws_src src = { .ring = &r, .journal_dir = NULL, .default_fabric = "IB",
				 .head_id = 149, .queue_events = 1000 };
	static const char *const queries[] = { "", "severity=Critical", "prefix=Fabric" };
	for (size_t q = 0; q < 3; q++) {
		for (size_t budget = 1; budget <= 1u << 20; budget *= 16) {
			struct fb_filter f;
			const char *why = NULL;
			fb_filter_init(&f);
			CHECK(!queries[q][0] || fb_filter_arg(&f, queries[q], &why) == 0);
			CHECK(fb_filter_arg(&f, "since=99", &why) == 0);
			struct fb_ws_sub a, b;
			fb_ws_sub_init(&a, &f, src.head_id);
			fb_ws_sub_init(&b, &f, src.head_id);
			struct fb_buf copied = FB_BUF_INIT, pointed = FB_BUF_INIT;
			unsigned fa, fb;
			CHECK_EQ(drain_sub(&a, &src, budget, 0, &copied, &fa), 0);
			CHECK_EQ(drain_sub(&b, &src, budget, 1, &pointed, &fb), 0);
			CHECK(copied.len > 0);
			CHECK_EQ(pointed.len, copied.len);
			CHECK(memcmp(pointed.data, copied.data, copied.len) == 0);
			CHECK_EQ(b.sent, a.sent);
			CHECK_EQ(b.next_id, a.next_id);
			/* 16 iovecs per fill at most: more fills, never fewer */
			CHECK(fb >= fa);
			fb_buf_free(&copied);
			fb_buf_free(&pointed);
			fb_ws_sub_release(&a);
			fb_ws_sub_release(&b);
		}
	}
	fb_ws_ring_free(&r);
}

int main(void)
{
	RUN(sse_from_ring_is_the_replayed_frame);
	RUN(missed_notice_resumes_at_its_id);
	RUN(ws_fill_points_at_the_frames_it_would_copy);
	return TEST_DONE();
}
