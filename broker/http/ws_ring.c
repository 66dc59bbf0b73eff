#include "ws_ring.h"

#include "fb_err.h"
#include "fb_redfish.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fb_ws_ring_init(struct fb_ws_ring *r, size_t cap, const char *default_fabric)
{
	memset(r, 0, sizeof(*r));
	if (cap == 0)
		cap = 1;
	r->slot = calloc(cap, sizeof(*r->slot));
	if (!r->slot)
		return -ENOMEM;
	r->cap = cap;
	r->default_fabric = default_fabric ? default_fabric : FB_REDFISH_DEFAULT_FABRIC;
	return 0;
}

void fb_ws_ring_free(struct fb_ws_ring *r)
{
	for (size_t i = 0; r->slot && i < r->cap; i++)
		fb_buf_free(&r->slot[i].buf);
	free(r->slot);
	fb_buf_free(&r->scratch);
	memset(r, 0, sizeof(*r));
}

void fb_ws_ring_clear(struct fb_ws_ring *r)
{
	r->tail = r->head;
	r->msg_bytes = 0;
}

size_t fb_ws_frame_header(uint8_t *end, uint64_t n)
{
	if (n < 126) {
		end[-2] = 0x81; /* FIN | text */
		end[-1] = (uint8_t)n;
		return 2;
	}
	if (n < 65536) {
		end[-4] = 0x81;
		end[-3] = 126;
		end[-2] = (uint8_t)(n >> 8);
		end[-1] = (uint8_t)n;
		return 4;
	}
	end[-10] = 0x81;
	end[-9] = 127;
	fb_store_be64(end - 8, n);
	return 10;
}

/* Payloads are rendered after FB_WS_FRAME_HDR_MAX spare bytes; the header is
 * then written right-aligned in front, so the frame starts at *frame_off. */
static int render_padded(struct fb_buf *b, const struct fb_event *ev, uint64_t id,
			 const char *fabric, size_t *frame_off, struct fb_redfish_facts *f)
{
	static const uint8_t pad[FB_WS_FRAME_HDR_MAX];
	int rc = fb_buf_put(b, pad, sizeof(pad));
	if (rc)
		return rc;
	size_t body = b->len;
	rc = fb_redfish_render_facts(b, ev, id, fabric, f);
	if (rc < 0)
		return rc;
	size_t h = fb_ws_frame_header(b->data + body, b->len - body);
	*frame_off = body - h;
	return 0;
}

int fb_ws_render_frame(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		       const char *default_fabric)
{
	size_t start = out->len, off;
	struct fb_redfish_facts f;
	int rc = render_padded(out, ev, event_id, default_fabric, &off, &f);
	if (rc) {
		out->len = start;
		return rc;
	}
	/* close the pad: a stream of frames cannot have holes */
	memmove(out->data + start, out->data + off, out->len - off);
	out->len -= off - start;
	return 0;
}

int fb_ws_render_missed_frame(struct fb_buf *out, uint64_t missed, uint64_t resume_since)
{
	static const uint8_t pad[FB_WS_FRAME_HDR_MAX];
	size_t start = out->len;
	int rc = fb_buf_put(out, pad, sizeof(pad));
	if (!rc)
		rc = fb_redfish_render_missed(out, missed, resume_since);
	if (rc < 0) {
		out->len = start;
		return rc;
	}
	size_t body = start + FB_WS_FRAME_HDR_MAX;
	size_t h = fb_ws_frame_header(out->data + body, out->len - body);
	memmove(out->data + start, out->data + body - h, out->len - (body - h));
	out->len -= FB_WS_FRAME_HDR_MAX - h;
	return 0;
}

/* Append "id: <EventId>\ndata: " to out. */
static int put_sse_id_line(struct fb_buf *out, uint64_t event_id)
{
	char digits[20];
	size_t i = sizeof(digits);
	do {
		digits[--i] = (char)('0' + event_id % 10);
		event_id /= 10;
	} while (event_id);
	size_t n = sizeof(digits) - i;
	int rc = fb_buf_reserve(out, 4 + n + 7); /* once per event: one reserve */
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	memcpy(p, "id: ", 4);
	memcpy(p + 4, digits + i, n);
	memcpy(p + 4 + n, "\ndata: ", 7);
	out->len += 4 + n + 7;
	return 0;
}

int fb_ws_msg_put_sse(const struct fb_ws_msg *m, struct fb_buf *out)
{
	size_t json_len = m->frame_len - m->hdr_len;
	int rc = fb_buf_reserve(out, m->sse_len + json_len + FB_SSE_SUFFIX_LEN);
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	memcpy(p, m->buf.data + m->sse_off, m->sse_len);
	memcpy(p + m->sse_len, fb_ws_msg_frame(m) + m->hdr_len, json_len);
	memcpy(p + m->sse_len + json_len, FB_SSE_SUFFIX, FB_SSE_SUFFIX_LEN);
	out->len += m->sse_len + json_len + FB_SSE_SUFFIX_LEN;
	return 0;
}

int fb_sse_render_frame(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
			const char *default_fabric)
{
	size_t start = out->len;
	int rc = put_sse_id_line(out, event_id);
	if (!rc)
		rc = fb_redfish_render(out, ev, event_id, default_fabric);
	if (!rc)
		rc = fb_buf_put(out, FB_SSE_SUFFIX, FB_SSE_SUFFIX_LEN);
	if (rc < 0)
		out->len = start;
	return rc < 0 ? rc : 0;
}

int fb_sse_render_missed_frame(struct fb_buf *out, uint64_t missed, uint64_t resume_since)
{
	size_t start = out->len;
	int rc = put_sse_id_line(out, resume_since);
	if (!rc)
		rc = fb_redfish_render_missed(out, missed, resume_since);
	if (!rc)
		rc = fb_buf_put(out, FB_SSE_SUFFIX, FB_SSE_SUFFIX_LEN);
	if (rc < 0)
		out->len = start;
	return rc < 0 ? rc : 0;
}

void fb_ws_event_rf_attrs(const struct fb_event *ev, const char *default_fabric, char *origin,
			  struct fb_rf_attrs *a)
{
	struct fb_redfish_class cls;
	fb_redfish_classify(ev, &cls);
	int n = fb_redfish_origin(ev, default_fabric, origin, FB_REDFISH_ORIGIN_MAX);
	if (n < 0)
		origin[0] = '\0';
	fb_rf_attrs_init(a, cls.message_id, cls.event_type, origin);
}

/* Slots are sized to their message (render into scratch, copy exactly), so
 * the ring costs ~ring_events x message size, not a power-of-two above it. */
static int slot_fit(struct fb_buf *b, size_t need)
{
	if (b->cap >= need && b->cap <= 2 * need) {
		b->len = 0;
		return 0;
	}
	uint8_t *p = realloc(b->data, need);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = need;
	b->len = 0;
	return 0;
}

const struct fb_rf_attrs *fb_ws_msg_rf(struct fb_ws_msg *m)
{
	if (!m->rf_ready) {
		fb_rf_attrs_init(&m->rf, m->message_id, m->rf.event_type, fb_ws_msg_origin(m));
		m->rf_ready = 1;
	}
	return &m->rf;
}

int fb_ws_ring_push(struct fb_ws_ring *r, uint64_t event_id, const struct fb_event *ev)
{
	struct fb_buf *sc = &r->scratch;
	sc->len = 0;
	size_t off;
	/* the class and origin the render worked out, kept beside the frame */
	struct fb_redfish_facts f;
	int rc = render_padded(sc, ev, event_id, r->default_fabric, &off, &f);
	if (rc)
		return rc;
	const char *origin = f.origin;
	int olen = f.origin_len;
	if (olen < 0 || (size_t)olen >= sizeof(f.origin)) {
		olen = 0; /* no origin: only origin filters miss it */
		origin = "";
	}
	size_t frame_len = sc->len - off;
	/* the SSE line, built in the same pass, after the frame in scratch */
	size_t sse_at = sc->len;
	rc = put_sse_id_line(sc, event_id);
	if (rc)
		return rc;
	size_t sse_len = sc->len - sse_at;

	if (fb_ws_ring_count(r) == r->cap) {
		r->msg_bytes -= fb_ws_ring_at(r, r->tail)->frame_len;
		r->tail++;
	}
	struct fb_ws_msg *m = fb_ws_ring_at(r, r->head);
	rc = slot_fit(&m->buf, frame_len + (size_t)olen + 1 + sse_len);
	if (rc)
		return rc;
	memcpy(m->buf.data, sc->data + off, frame_len);
	memcpy(m->buf.data + frame_len, origin, (size_t)olen + 1);
	memcpy(m->buf.data + frame_len + (size_t)olen + 1, sc->data + sse_at, sse_len);
	m->buf.len = frame_len + (size_t)olen + 1 + sse_len;
	m->event_id = event_id;
	m->message_id = f.cls.message_id;
	m->severity = f.cls.severity;
	m->quiet = (uint8_t)fb_event_quiet(ev);
	m->frame_off = 0;
	m->frame_len = (uint32_t)frame_len;
	m->hdr_len = (uint8_t)(FB_WS_FRAME_HDR_MAX - off);
	m->origin_off = (uint32_t)frame_len;
	m->sse_off = (uint32_t)(frame_len + (size_t)olen + 1);
	m->sse_len = (uint8_t)sse_len;
	m->rf.event_type = f.cls.event_type;
	m->rf_ready = 0; /* the rest on the first SSE read (fb_ws_msg_rf) */
	r->msg_bytes += frame_len;
	r->head++;
	return 0;
}

uint64_t fb_ws_ring_oldest_id(const struct fb_ws_ring *r)
{
	return r->head == r->tail ? 0 : fb_ws_ring_at(r, r->tail)->event_id;
}

uint64_t fb_ws_ring_newest_id(const struct fb_ws_ring *r)
{
	return r->head == r->tail ? 0 : fb_ws_ring_at(r, r->head - 1)->event_id;
}

uint64_t fb_ws_ring_find(const struct fb_ws_ring *r, uint64_t id)
{
	if (r->head == r->tail)
		return r->head;
	uint64_t newest = fb_ws_ring_newest_id(r);
	if (id > newest)
		return r->head;
	/* contiguous ids: one probe */
	uint64_t back = newest - id;
	if (back < fb_ws_ring_count(r)) {
		uint64_t seq = r->head - 1 - back;
		if (fb_ws_ring_at(r, seq)->event_id == id)
			return seq;
	}
	uint64_t lo = r->tail, hi = r->head;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (fb_ws_ring_at(r, mid)->event_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
