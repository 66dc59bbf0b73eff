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
	r->chunk_size = FB_WS_RING_CHUNK;
	r->headroom = FB_WS_RING_HEADROOM;
	return 0;
}

void fb_ws_ring_free(struct fb_ws_ring *r)
{
	for (uint32_t i = 0; i < r->n_chunks; i++)
		fb_buf_free(&r->chunk[i]);
	free(r->chunk);
	free(r->free_ids);
	free(r->slot);
	memset(r, 0, sizeof(*r));
}

static void chunk_release(struct fb_ws_ring *r, uint32_t id)
{
	r->chunk[id].len = 0;
	r->free_ids[r->n_free++] = id;
}

void fb_ws_ring_clear(struct fb_ws_ring *r)
{
	r->tail = r->head;
	r->tail_slot = r->head % r->cap;
	r->msg_bytes = 0;
	/* every chunk but the current one was full or freed already */
	r->n_free = 0;
	for (uint32_t i = 0; i < r->n_chunks; i++)
		if (i != r->cur)
			chunk_release(r, i);
	if (r->n_chunks)
		r->chunk[r->cur].len = 0;
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

/* "id: " + 20 digits + "\ndata: " */
#define SSE_ID_LINE_MAX (4 + 20 + 7)

/* Append "id: <EventId>\ndata: " to out. */
static int put_sse_id_line(struct fb_buf *out, uint64_t event_id)
{
	int rc = fb_buf_reserve(out, SSE_ID_LINE_MAX);
	if (rc)
		return rc;
	char *p = (char *)out->data + out->len;
	memcpy(p, "id: ", 4);
	size_t n = fb_fmt_uint(p + 4, event_id);
	memcpy(p + 4 + n, "\ndata: ", 7);
	out->len += 4 + n + 7;
	return 0;
}

int fb_ws_msg_put_sse(const struct fb_ws_msg *m, struct fb_buf *out)
{
	size_t json_len = m->frame_len - m->hdr_len;
	/* one reserve for the three parts: the id line's own stays in it */
	int rc = fb_buf_reserve(out, SSE_ID_LINE_MAX + json_len + FB_SSE_SUFFIX_LEN);
	if (!rc)
		rc = put_sse_id_line(out, m->event_id);
	if (rc)
		return rc;
	uint8_t *p = out->data + out->len;
	memcpy(p, fb_ws_msg_frame(m) + m->hdr_len, json_len);
	memcpy(p + json_len, FB_SSE_SUFFIX, FB_SSE_SUFFIX_LEN);
	out->len += json_len + FB_SSE_SUFFIX_LEN;
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

const struct fb_rf_attrs *fb_ws_msg_rf(struct fb_ws_msg *m)
{
	if (!m->rf_ready) {
		fb_rf_attrs_init(&m->rf, m->message_id, m->rf.event_type, fb_ws_msg_origin(m));
		m->rf_ready = 1;
	}
	return &m->rf;
}

/* A new chunk for the arena: from the heap, so that the rare document that
 * outgrows it can still grow it (fb_buf_reserve reallocs). No
 * MADV_HUGEPAGE: measured in bench_broker.sh, zeroing the huge pages at
 * first touch cost the WebSocket thread more (clear_page ~15% of its
 * samples) than the 4 KiB page faults it saves. */
static int chunk_new(struct fb_ws_ring *r, uint32_t *id)
{
	if (r->n_chunks == UINT32_MAX)
		return -ENOMEM;
	size_t n = r->n_chunks + 1u;
	struct fb_buf *c = realloc(r->chunk, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	r->chunk = c;
	uint32_t *f = realloc(r->free_ids, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	r->free_ids = f;
	uint8_t *p = malloc(r->chunk_size);
	if (!p)
		return -ENOMEM;
	c[r->n_chunks] = (struct fb_buf){ p, 0, r->chunk_size };
	r->arena_bytes += r->chunk_size;
	*id = r->n_chunks++;
	return 0;
}

/* Make the current chunk one with r->headroom free (an empty chunk
 * always qualifies, whatever its size). */
static int chunk_room(struct fb_ws_ring *r)
{
	if (r->n_chunks) {
		struct fb_buf *c = &r->chunk[r->cur];
		if (r->head == r->tail)
			c->len = 0; /* nothing held: start it over */
		if (c->len == 0 || c->cap - c->len >= r->headroom)
			return 0;
	}
	if (r->n_free) {
		r->cur = r->free_ids[--r->n_free];
		return 0;
	}
	return chunk_new(r, &r->cur);
}

/* The oldest message goes; its chunk is free once no message is left in it
 * (messages are in chunk order, so that is when the next one is elsewhere). */
static void evict_oldest(struct fb_ws_ring *r)
{
	const struct fb_ws_msg *old = fb_ws_ring_at(r, r->tail);
	r->msg_bytes -= old->frame_len;
	r->tail++;
	r->tail_slot = r->tail_slot + 1 == r->cap ? 0 : r->tail_slot + 1;
	uint32_t id = old->chunk;
	if (id != r->cur && (r->tail == r->head || fb_ws_ring_at(r, r->tail)->chunk != id))
		chunk_release(r, id);
}

/* A render outgrew the current chunk and fb_buf_reserve moved it: point its
 * messages (the newest ones) at the new place. */
static void chunk_moved(struct fb_ws_ring *r)
{
	const uint8_t *base = r->chunk[r->cur].data;
	for (uint64_t seq = r->head; seq > r->tail; seq--) {
		struct fb_ws_msg *m = fb_ws_ring_at(r, seq - 1);
		if (m->chunk != r->cur)
			break;
		m->frame = base + m->off;
		m->rf_ready = 0; /* rf.origin pointed into the old place */
	}
}

/* The origin and its NUL after the frame. Most origins are under 64 bytes
 * and come from a buffer of FB_REDFISH_ORIGIN_MAX: they are copied as a
 * fixed 64-byte block (two vector moves) where the chunk has the room,
 * not with a length-dependent copy (a `rep movs` costing more than the
 * bytes: 0.9% of the broker in bench_broker.sh). */
#define ORIGIN_BLOCK 64
_Static_assert(FB_REDFISH_ORIGIN_MAX >= ORIGIN_BLOCK, "the block is read from the facts' origin buffer");

static int put_origin(struct fb_buf *c, const char origin[FB_REDFISH_ORIGIN_MAX], size_t olen)
{
	if (olen < ORIGIN_BLOCK && c->cap - c->len >= ORIGIN_BLOCK) {
		memcpy(c->data + c->len, origin, ORIGIN_BLOCK);
		c->len += olen + 1;
		return 0;
	}
	return fb_buf_put(c, origin, olen + 1);
}

int fb_ws_ring_push(struct fb_ws_ring *r, uint64_t event_id, const struct fb_event *ev)
{
	if (fb_ws_ring_count(r) == r->cap)
		evict_oldest(r);
	int rc = chunk_room(r);
	if (rc)
		return rc;
	struct fb_buf *c = &r->chunk[r->cur];
	size_t start = c->len, cap_before = c->cap, off = 0;
	const uint8_t *data_before = c->data;
	/* the class and origin the render worked out, kept beside the frame */
	struct fb_redfish_facts f;
	rc = render_padded(c, ev, event_id, r->default_fabric, &off, &f);
	size_t olen = 0;
	if (!rc) {
		olen = (size_t)f.origin_len;
		if (f.origin_len < 0 || olen >= sizeof(f.origin)) {
			olen = 0; /* no origin: only origin filters miss it */
			f.origin[0] = '\0';
		}
		rc = put_origin(c, f.origin, olen);
	}
	r->arena_bytes += c->cap - cap_before; /* it stays grown */
	if (c->data != data_before)
		chunk_moved(r);
	if (rc) {
		c->len = start;
		return rc;
	}
	struct fb_ws_msg *m = fb_ws_ring_at(r, r->head);
	size_t frame_len = c->len - (olen + 1) - off;
	m->frame = c->data + off;
	m->event_id = event_id;
	m->message_id = f.cls.message_id;
	m->frame_len = (uint32_t)frame_len;
	m->chunk = r->cur;
	m->off = (uint32_t)off;
	m->severity = f.cls.severity;
	m->quiet = (uint8_t)fb_event_quiet(ev);
	m->rf_ready = 0; /* the rest on the first SSE read (fb_ws_msg_rf) */
	m->hdr_len = (uint8_t)(FB_WS_FRAME_HDR_MAX - (off - start));
	m->rf.event_type = f.cls.event_type;
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
