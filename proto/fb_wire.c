#include "fb_wire.h"

#include "fb_err.h"

#include <string.h>

/* Smallest possible event body: the fixed fields, seven empty strings and a
 * zero counter count. Used to bound the count field of an EVENTS frame. */
#define EVENT_FIXED_LEN (8 + 8 + 6 + 2 + 2 + 2 + 4 + 8 + 8 + 8)
#define EVENT_MIN_LEN (EVENT_FIXED_LEN + 7 + 1)

int fb_frame_peek(const uint8_t *buf, size_t len, uint32_t max_body, struct fb_frame_hdr *hdr)
{
	if (len < 2)
		return (len == 1 && buf[0] != 'F') ? FB_EMALFORMED : FB_EAGAIN;
	if (buf[0] != 'F' || buf[1] != 'B')
		return FB_EMALFORMED;
	if (len < FB_FRAME_HDR_LEN)
		return FB_EAGAIN;
	hdr->version = buf[2];
	hdr->type = buf[3];
	hdr->body_len = fb_load_be32(buf + 4);
	if (hdr->version != FB_PROTO_VERSION)
		return FB_EVERSION;
	if (hdr->body_len > max_body)
		return FB_ETOOBIG;
	if (len - FB_FRAME_HDR_LEN < hdr->body_len)
		return FB_EAGAIN;
	return 0;
}

size_t fb_frame_begin(struct fb_buf *out, uint8_t type)
{
	size_t start = out->len;
	uint8_t h[FB_FRAME_HDR_LEN] = { 'F', 'B', FB_PROTO_VERSION, type, 0, 0, 0, 0 };
	/* A failed reserve surfaces in fb_frame_end via the length check. */
	if (fb_buf_put(out, h, sizeof(h)) != 0)
		return (size_t)-1;
	return start;
}

int fb_frame_end(struct fb_buf *out, size_t start)
{
	if (start == (size_t)-1 || start + FB_FRAME_HDR_LEN > out->len)
		return -12; /* -ENOMEM: the header could not be written */
	size_t body = out->len - start - FB_FRAME_HDR_LEN;
	if (body > FB_FRAME_MAX_LIMIT)
		return FB_ETOOBIG;
	fb_buf_patch_u32(out, start + 4, (uint32_t)body);
	return 0;
}

int fb_agent_id_valid(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= FB_AGENT_ID_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '.' || c == '_' || c == ':' || c == '@' || c == '-';
		if (!ok)
			return 0;
	}
	return 1;
}

/* Each put_* writes one whole frame; the first failing step's error wins. */
int fb_wire_put_hello(struct fb_buf *out, const struct fb_hello *h)
{
	size_t st = fb_frame_begin(out, FB_FRAME_HELLO);
	int rc = fb_buf_put_u8(out, h->version);
	rc = rc ? rc : fb_buf_put_str8(out, h->agent_id);
	rc = rc ? rc : fb_buf_put_u64(out, h->last_acked);
	return rc ? rc : fb_frame_end(out, st);
}

int fb_wire_put_hello_ack(struct fb_buf *out, const struct fb_hello_ack *a)
{
	size_t st = fb_frame_begin(out, FB_FRAME_HELLO_ACK);
	int rc = fb_buf_put_u64(out, a->last_seq);
	rc = rc ? rc : fb_buf_put_u32(out, a->max_frame);
	rc = rc ? rc : fb_buf_put_u32(out, a->heartbeat_ms);
	rc = rc ? rc : fb_buf_put_u64(out, a->broker_epoch);
	return rc ? rc : fb_frame_end(out, st);
}

static int put_u64_frame(struct fb_buf *out, uint8_t type, uint64_t v)
{
	size_t st = fb_frame_begin(out, type);
	int rc = fb_buf_put_u64(out, v);
	return rc ? rc : fb_frame_end(out, st);
}

int fb_wire_put_ack(struct fb_buf *out, uint64_t seq) { return put_u64_frame(out, FB_FRAME_ACK, seq); }

int fb_wire_put_heartbeat(struct fb_buf *out, uint64_t ts_ns)
{
	return put_u64_frame(out, FB_FRAME_HEARTBEAT, ts_ns);
}

int fb_wire_put_error(struct fb_buf *out, uint16_t code, const char *text)
{
	char t[256];
	/* Cut at 255 bytes without splitting a UTF-8 sequence. */
	size_t n = strlen(text);
	if (n > 255) {
		n = 255;
		while (n > 0 && ((uint8_t)text[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(t, text, n);
	t[n] = '\0';
	size_t st = fb_frame_begin(out, FB_FRAME_ERROR);
	int rc = fb_buf_put_u16(out, code);
	rc = rc ? rc : fb_buf_put_str8(out, t);
	return rc ? rc : fb_frame_end(out, st);
}

int fb_wire_parse_hello(const uint8_t *body, size_t len, struct fb_hello *h)
{
	struct fb_rd r;
	fb_rd_init(&r, body, len);
	memset(h, 0, sizeof(*h));
	h->version = fb_rd_u8(&r);
	fb_rd_str8(&r, h->agent_id, sizeof(h->agent_id));
	h->last_acked = fb_rd_u64(&r);
	if (r.err)
		return r.err;
	return fb_agent_id_valid(h->agent_id) ? 0 : FB_EMALFORMED;
}

int fb_wire_parse_hello_ack(const uint8_t *body, size_t len, struct fb_hello_ack *a)
{
	struct fb_rd r;
	fb_rd_init(&r, body, len);
	a->last_seq = fb_rd_u64(&r);
	a->max_frame = fb_rd_u32(&r);
	a->heartbeat_ms = fb_rd_u32(&r);
	a->broker_epoch = fb_rd_u64(&r);
	return r.err;
}

static int parse_u64_body(const uint8_t *body, size_t len, uint64_t *v)
{
	struct fb_rd r;
	fb_rd_init(&r, body, len);
	*v = fb_rd_u64(&r);
	return r.err;
}

int fb_wire_parse_ack(const uint8_t *body, size_t len, uint64_t *seq)
{
	return parse_u64_body(body, len, seq);
}

int fb_wire_parse_heartbeat(const uint8_t *body, size_t len, uint64_t *ts_ns)
{
	return parse_u64_body(body, len, ts_ns);
}

int fb_wire_parse_error(const uint8_t *body, size_t len, struct fb_error_msg *e)
{
	struct fb_rd r;
	fb_rd_init(&r, body, len);
	e->code = fb_rd_u16(&r);
	fb_rd_str8(&r, e->text, sizeof(e->text));
	return r.err;
}

int fb_event_encode(struct fb_buf *out, const struct fb_event *ev)
{
	const struct fb_subject *s = &ev->subj;
	uint8_t fixed[EVENT_FIXED_LEN];
	uint8_t *p = fixed;
	fb_store_be64(p, ev->seq); p += 8;
	fb_store_be64(p, ev->ts_ns); p += 8;
	*p++ = ev->kind; *p++ = ev->severity; *p++ = ev->link_class;
	*p++ = ev->tech; *p++ = ev->port_state; *p++ = ev->phys_state;
	*p++ = (uint8_t)(s->port >> 8); *p++ = (uint8_t)s->port;
	*p++ = (uint8_t)(s->peer_port >> 8); *p++ = (uint8_t)s->peer_port;
	*p++ = (uint8_t)(s->lid >> 8); *p++ = (uint8_t)s->lid;
	fb_store_be32(p, s->ifindex); p += 4;
	fb_store_be64(p, s->switch_guid); p += 8;
	fb_store_be64(p, s->port_guid); p += 8;
	fb_store_be64(p, s->peer_guid);
	int rc = fb_buf_put(out, fixed, sizeof(fixed));
	const char *strs[] = { s->fabric, s->switch_name, s->node, s->device,
			       s->addr, s->peer_name, ev->text };
	for (size_t i = 0; !rc && i < sizeof(strs) / sizeof(strs[0]); i++)
		rc = fb_buf_put_str8(out, strs[i]);
	unsigned n = ev->n_counters > FB_COUNTERS_MAX ? FB_COUNTERS_MAX : ev->n_counters;
	rc = rc ? rc : fb_buf_put_u8(out, (uint8_t)n);
	for (unsigned i = 0; !rc && i < n; i++) {
		rc = fb_buf_put_u16(out, ev->counters[i].id);
		rc = rc ? rc : fb_buf_put_u64(out, ev->counters[i].value);
	}
	/* Only events with jobs carry the trailing field, so every encoding
	 * from before it existed stays byte-identical. A list a receiver would
	 * refuse is refused here, before it reaches the wire. */
	const char *jobs_end = memchr(ev->jobs, 0, sizeof(ev->jobs));
	if (!rc && ev->jobs[0]) {
		if (!jobs_end || fb_event_jobs_check(ev->jobs, (size_t)(jobs_end - ev->jobs), NULL))
			rc = FB_EMALFORMED;
		else
			rc = fb_buf_put_str8(out, ev->jobs);
	}
	return rc;
}

/* The optional trailing jobs field: absent, or exactly one str8 that ends
 * the body. Its length is checked before the copy so an overlong list is
 * MALFORMED (as fb_event_check would say) rather than cut. */
static const char *decode_jobs(struct fb_rd *r, char *jobs)
{
	jobs[0] = '\0';
	if (r->err || fb_rd_left(r) == 0)
		return NULL;
	uint8_t n = fb_rd_u8(r);
	const uint8_t *p = fb_rd_take(r, n);
	if (!p)
		return NULL; /* r->err is TRUNCATED */
	if (n == 0)
		return "jobs: present but empty (an event without jobs omits the field)";
	const char *why = NULL;
	if (fb_event_jobs_check((const char *)p, n, &why))
		return why;
	if (fb_rd_left(r))
		return "jobs: bytes after the jobs field (the last field of an event body)";
	memcpy(jobs, p, n);
	jobs[n] = '\0';
	return NULL;
}

int fb_event_decode(const uint8_t *p, size_t len, struct fb_event *ev)
{
	return fb_event_decode_why(p, len, ev, NULL);
}

int fb_event_decode_why(const uint8_t *p, size_t len, struct fb_event *ev, const char **why)
{
	struct fb_rd r;
	struct fb_subject *s = &ev->subj;
	if (why)
		*why = NULL;
	fb_rd_init(&r, p, len);
	ev->seq = fb_rd_u64(&r);
	ev->ts_ns = fb_rd_u64(&r);
	ev->kind = fb_rd_u8(&r);
	ev->severity = fb_rd_u8(&r);
	ev->link_class = fb_rd_u8(&r);
	ev->tech = fb_rd_u8(&r);
	ev->port_state = fb_rd_u8(&r);
	ev->phys_state = fb_rd_u8(&r);
	s->port = fb_rd_u16(&r);
	s->peer_port = fb_rd_u16(&r);
	s->lid = fb_rd_u16(&r);
	s->ifindex = fb_rd_u32(&r);
	s->switch_guid = fb_rd_u64(&r);
	s->port_guid = fb_rd_u64(&r);
	s->peer_guid = fb_rd_u64(&r);
	fb_rd_str8(&r, s->fabric, sizeof(s->fabric));
	fb_rd_str8(&r, s->switch_name, sizeof(s->switch_name));
	fb_rd_str8(&r, s->node, sizeof(s->node));
	fb_rd_str8(&r, s->device, sizeof(s->device));
	fb_rd_str8(&r, s->addr, sizeof(s->addr));
	fb_rd_str8(&r, s->peer_name, sizeof(s->peer_name));
	fb_rd_str8(&r, ev->text, sizeof(ev->text));
	uint8_t n = fb_rd_u8(&r);
	ev->jobs[0] = '\0';
	if (!r.err && n > FB_COUNTERS_MAX) {
		if (why)
			*why = "counters: too many";
		return FB_ETOOBIG;
	}
	ev->n_counters = r.err ? 0 : n;
	for (unsigned i = 0; i < ev->n_counters; i++) {
		ev->counters[i].id = fb_rd_u16(&r);
		ev->counters[i].value = fb_rd_u64(&r);
	}
	const char *jw = decode_jobs(&r, ev->jobs);
	if (r.err) {
		ev->n_counters = 0;
		return r.err;
	}
	if (jw) {
		if (why)
			*why = jw;
		return FB_EMALFORMED;
	}
	/* decode_jobs checked the list (or left it empty). */
	return fb_event_check_fixed(ev, why);
}

int fb_events_begin(struct fb_events_writer *w, struct fb_buf *out)
{
	w->out = out;
	w->count = 0;
	w->frame_start = fb_frame_begin(out, FB_FRAME_EVENTS);
	w->count_off = out->len;
	return fb_buf_put_u32(out, 0);
}

int fb_events_add(struct fb_events_writer *w, const struct fb_event *ev)
{
	size_t len_off = w->out->len;
	int rc = fb_buf_put_u16(w->out, 0);
	rc = rc ? rc : fb_event_encode(w->out, ev);
	if (rc) {
		w->out->len = len_off;
		return rc;
	}
	size_t body = w->out->len - len_off - 2;
	if (body > UINT16_MAX) {
		w->out->len = len_off;
		return FB_ETOOBIG;
	}
	fb_buf_patch_u16(w->out, len_off, (uint16_t)body);
	w->count++;
	return 0;
}

int fb_events_end(struct fb_events_writer *w)
{
	fb_buf_patch_u32(w->out, w->count_off, w->count);
	return fb_frame_end(w->out, w->frame_start);
}

int fb_events_open(struct fb_events_reader *r, const uint8_t *body, size_t len)
{
	fb_rd_init(&r->rd, body, len);
	r->count = fb_rd_u32(&r->rd);
	r->index = 0;
	if (r->rd.err)
		return r->rd.err;
	/* A count no body could hold is refused before any event is read. */
	if ((uint64_t)r->count * (2 + EVENT_MIN_LEN) > fb_rd_left(&r->rd))
		return FB_ETRUNC;
	return 0;
}

int fb_events_next(struct fb_events_reader *r, struct fb_event *ev, const uint8_t **raw, size_t *raw_len)
{
	if (r->index >= r->count)
		return fb_rd_left(&r->rd) ? FB_EMALFORMED : 0;
	uint16_t n = fb_rd_u16(&r->rd);
	const uint8_t *p = fb_rd_take(&r->rd, n);
	if (!p)
		return r->rd.err;
	int rc = fb_event_decode(p, n, ev);
	if (rc)
		return rc;
	r->index++;
	if (raw)
		*raw = p;
	if (raw_len)
		*raw_len = n;
	return 1;
}
