/* fb_redfish.c - fabric event -> DMTF Redfish Event (Event.v1_13_0).
 *
 * Two parts: the OriginOfCondition path and the renderer. Which message an
 * event becomes, and the registries' wording, are in fb_redfish_table.c.
 * The renderer runs once per event on the fan-out path, so it writes JSON
 * by hand into an fb_buf, formats numbers and timestamps itself and
 * allocates nothing but buffer growth.
 *
 * Precondition for rendering: the event's strings are NUL-terminated UTF-8
 * (true for anything that came through fb_wire or fb_event_from_json). A
 * field without a NUL is rendered as "?" instead of being over-read.
 */
#include "fb_redfish.h"

#include "fb_err.h"
#include "fb_redfish_table.h"

#include <assert.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- small bounded text helpers (no snprintf on the hot path) ---------- */

/* Two digits of a fixed-width field (dates and times). */
static inline void put2(char *o, unsigned v) { memcpy(o, fb_dig2 + 2 * v, 2); }

/* A string field of a fixed-size array, or "?" if it lacks its NUL. An
 * empty field (most of an event's) answers from its first byte, a NUL in
 * the last byte (the usual case) without a scan: the renderer reads the
 * event right after another core wrote it, so every cache line it need not
 * touch is a miss saved. */
#define FLD(a)                                                                                     \
	((a)[0] == 0 || (a)[sizeof(a) - 1] == 0 || memchr((a), 0, sizeof(a)) ? (const char *)(a) : "?")

/* 8 lower-case hex digits of v, most significant first, as the bytes of a
 * little-endian word: each nibble is spread into a byte of its own, then
 * turned into '0'-'9' or 'a'-'f' in all eight bytes at once (+0x27 moves
 * the digits from 10 up past '9' to 'a'). */
static inline uint64_t hex8(uint32_t v)
{
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t x = v;
	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full; /* byte k: nibble k */
	x += ones * '0' + ((x + ones * 6) >> 4 & ones) * 0x27;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x); /* nibble 7 first in memory */
#endif
	return x;
}

/* "0x" and 16 lower-case hex digits, NUL-terminated; out has 19 bytes. */
static void fmt_guid(char *out, uint64_t v)
{
	uint64_t hi = hex8((uint32_t)(v >> 32)), lo = hex8((uint32_t)v);
	out[0] = '0';
	out[1] = 'x';
	memcpy(out + 2, &hi, 8);
	memcpy(out + 10, &lo, 8);
	out[18] = '\0';
}

/* Decimal, NUL-terminated; out has 21 bytes. Returns the length. */
static size_t fmt_u64(char out[21], uint64_t v)
{
	size_t n = fb_fmt_uint(out, v);
	out[n] = '\0';
	return n;
}

/* A bounded string builder: err is set once anything did not fit. */
struct sb {
	char *p;
	size_t len, cap; /* cap includes the NUL */
	int err;
};

static void sb_init(struct sb *s, char *p, size_t cap)
{
	s->p = p;
	s->len = 0;
	s->cap = cap;
	s->err = cap == 0;
	if (cap)
		p[0] = '\0';
}

static void sb_putn(struct sb *s, const char *str, size_t n)
{
	if (s->err || n >= s->cap - s->len) {
		s->err = 1;
		return;
	}
	memcpy(s->p + s->len, str, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void sb_puts(struct sb *s, const char *str) { sb_putn(s, str, strlen(str)); }
#define SB_LIT(s, lit) sb_putn((s), (lit), sizeof(lit) - 1)

static void sb_putu(struct sb *s, uint64_t v)
{
	char tmp[24];
	sb_putn(s, tmp, fmt_u64(tmp, v));
}

/* RFC 3986's unreserved set, as a bitmap of the 256 byte values: a load,
 * a shift and a mask per byte, no branch. */
static inline int unreserved(uint8_t ch)
{
	static const uint64_t map[4] = {
		0x03ff600000000000ull, /* '-' '.' '0'-'9' */
		0x47fffffe87fffffeull, /* 'A'-'Z' '_' 'a'-'z' '~' */
		0, 0,
	};
	return (map[ch >> 6] >> (ch & 63)) & 1;
}

#if defined(__SSE2__)
/* Copy the 16 bytes at s to o and return how many of them lead in the
 * unreserved set (16 if all; NUL is not in it): letters by folding case,
 * '-' '.' '0'-'9' as one range less '/', and '_' '~'. Not instrumented: the
 * read may reach past the NUL, never past the page (the caller checks), as
 * fb_buf.c's chunk_plain. */
__attribute__((no_sanitize_address)) static inline size_t seg_chunk(char *o, const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	_mm_storeu_si128((__m128i *)(void *)o, v);
	__m128i a = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
	__m128i alpha = _mm_cmpeq_epi8(_mm_min_epu8(a, _mm_set1_epi8(25)), a);
	__m128i d = _mm_sub_epi8(v, _mm_set1_epi8('-')); /* '-' '.' '/' '0'-'9': 0..12 */
	__m128i num = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')),
				       _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(12)), d));
	__m128i sym = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('_')), _mm_cmpeq_epi8(v, _mm_set1_epi8('~')));
	unsigned bad = ~(unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(alpha, num), sym)) & 0xffff;
	return bad ? (size_t)__builtin_ctz(bad) : 16;
}
#endif

/* One path segment, percent-encoding every byte outside RFC 3986's
 * unreserved set, so names with '/', '?', '%' or spaces stay one segment.
 * Runs of unreserved bytes (nearly every name) go 16 at a time where the
 * room allows, else byte by byte with the room checked per byte. Only
 * seg_chunk's 16-byte read is left out of ASan's checks (it may reach past
 * the NUL); the byte loop is checked. */
static void sb_seg(struct sb *s, const char *seg)
{
	if (s->err)
		return;
	char *o = s->p + s->len, *end = s->p + s->cap - 1; /* the last byte is the NUL's */
	for (const uint8_t *c = (const uint8_t *)seg;;) {
#if defined(__SSE2__)
		if (end - o >= 16 && ((uintptr_t)c & 4095) <= 4096 - 16) {
			size_t k = seg_chunk(o, (const char *)c);
			o += k;
			c += k;
			if (k == 16)
				continue;
		}
#endif
		uint8_t ch = *c++;
		if (!ch)
			break;
		if (unreserved(ch) && o < end) {
			*o++ = (char)ch;
		} else if (!unreserved(ch) && end - o >= 3) {
			o[0] = '%';
			o[1] = "0123456789ABCDEF"[ch >> 4];
			o[2] = "0123456789ABCDEF"[ch & 15];
			o += 3;
		} else {
			s->err = 1;
			return;
		}
	}
	*o = '\0';
	s->len = (size_t)(o - s->p);
}

/* ---- naming the subject ------------------------------------------------ */

/* The switch's Redfish Id: its name, else its GUID, else (Ethernet) its
 * address. NULL when the event names no switch. */
static const char *switch_id(const struct fb_event *ev, char guid[19])
{
	const char *name = FLD(ev->subj.switch_name);
	if (name[0])
		return name;
	if (ev->subj.switch_guid) {
		fmt_guid(guid, ev->subj.switch_guid);
		return guid;
	}
	const char *addr = FLD(ev->subj.addr);
	if (ev->tech == FB_TECH_ETH && addr[0] && ev->link_class != FB_LINK_NODE)
		return addr;
	return NULL;
}

/* The port's Redfish Id: the ifIndex on Ethernet, else the port number.
 * NULL when unknown (port 0 means "not known" in the event model). */
static const char *port_id(const struct fb_event *ev, char num[24])
{
	if (ev->tech == FB_TECH_ETH && ev->subj.ifindex) {
		fmt_u64(num, ev->subj.ifindex);
		return num;
	}
	if (ev->subj.port) {
		fmt_u64(num, ev->subj.port);
		return num;
	}
	return NULL;
}

/* The subject's switch and port Ids, worked out once per render and used by
 * the origin, the MessageArgs and the resource label (a GUID or a number was
 * formatted up to three times). sw and port point into the struct or the
 * event: pass it by pointer, never copy it. */
struct ids {
	const char *sw, *port;
	char guid[19], num[24];
};

static void ids_of(const struct fb_event *ev, struct ids *d)
{
	d->sw = switch_id(ev, d->guid);
	d->port = port_id(ev, d->num);
}

static int is_switch_kind(unsigned kind)
{
	return kind == FB_KIND_SWITCH_UNREACHABLE || kind == FB_KIND_SWITCH_REACHABLE || fb_event_is_root_cause(kind);
}

/* Node-side events point at the node's interface, not at a switch. */
static int is_node_side(const struct fb_event *ev)
{
	return ev->link_class == FB_LINK_NODE || ev->kind == FB_KIND_INVENTORY;
}

/* An adapter's action (a drain) is about the node even when the event
 * also names the switch port that caused it. */
static int prefers_node(const struct fb_event *ev)
{
	return is_node_side(ev) || ev->kind == FB_KIND_ACTION;
}

static int origin_of(const struct fb_event *ev, const struct ids *d, const char *default_fabric, char *out,
		     size_t outsz)
{
	const char *sw = d->sw, *port = d->port;
	const char *node = FLD(ev->subj.node);
	const char *dev = FLD(ev->subj.device);
	const char *fabric = FLD(ev->subj.fabric);
	if (!fabric[0])
		fabric = default_fabric && default_fabric[0] ? default_fabric : FB_REDFISH_DEFAULT_FABRIC;

	struct sb s;
	sb_init(&s, out, outsz);
	if (!is_switch_kind(ev->kind) && node[0] && (prefers_node(ev) || !sw)) {
		SB_LIT(&s, "/redfish/v1/Systems/");
		sb_seg(&s, node);
		if (dev[0] && is_node_side(ev)) {
			SB_LIT(&s, "/NetworkInterfaces/");
			sb_seg(&s, dev);
		}
	} else {
		SB_LIT(&s, "/redfish/v1/Fabrics/");
		sb_seg(&s, fabric);
		if (sw) {
			SB_LIT(&s, "/Switches/");
			sb_seg(&s, sw);
			if (port && !is_switch_kind(ev->kind)) {
				SB_LIT(&s, "/Ports/");
				sb_seg(&s, port);
			}
		}
	}
	if (s.err) {
		if (outsz)
			out[0] = '\0';
		return FB_ETOOBIG;
	}
	return (int)s.len;
}

int fb_redfish_origin(const struct fb_event *ev, const char *default_fabric, char *out, size_t outsz)
{
	struct ids d;
	ids_of(ev, &d);
	return origin_of(ev, &d, default_fabric, out, outsz);
}

/* ---- MessageArgs -------------------------------------------------------- */

#define ARG_MAX 5
#define ARG_SZ 192 /* a composed arg (a label, "node:device", a number) */

/* Args point at the event's fields and static words where they can (no
 * copy), else at own[]. Every field fits an arg whole, and every arg is
 * short enough for fb_json_escape_short. */
_Static_assert(FB_NAME_MAX <= ARG_SZ && FB_ADDR_MAX <= ARG_SZ && FB_TEXT_MAX <= ARG_SZ &&
		       FB_FABRIC_MAX <= ARG_SZ && FB_AGENT_ID_MAX <= 256 && FB_JOBS_MAX <= 256 && ARG_SZ <= 256,
	       "every string the renderer escapes takes fb_json_escape_short's one-pass path");

struct args {
	unsigned n;
	const char *v[ARG_MAX];
	char own[ARG_MAX][ARG_SZ];
};

static struct sb arg_next(struct args *a)
{
	struct sb s;
	a->v[a->n] = a->own[a->n];
	sb_init(&s, a->own[a->n], ARG_SZ); /* overlong args are cut, never overrun */
	a->n++;
	return s;
}

static void arg_str(struct args *a, const char *v) { a->v[a->n++] = v && v[0] ? v : "unknown"; }

static void arg_u64(struct args *a, uint64_t v)
{
	struct sb s = arg_next(a);
	sb_putu(&s, v);
}

/* A readable name for the resource, for ResourceStateChanged and actions. */
static void resource_label(const struct fb_event *ev, const struct ids *d, struct sb *s)
{
	const char *sw = d->sw, *port = d->port;
	const char *node = FLD(ev->subj.node), *dev = FLD(ev->subj.device);
	if (node[0] && (prefers_node(ev) || !sw)) {
		sb_puts(s, node);
		/* An action is about the node (its origin is the ComputerSystem),
		 * not about one of its adapters. */
		if (dev[0] && ev->kind != FB_KIND_ACTION) {
			SB_LIT(s, " ");
			sb_puts(s, dev);
		}
		if (!is_node_side(ev))
			port = NULL; /* the port number is the switch's, not the node's */
	} else if (sw) {
		sb_puts(s, sw);
	} else {
		SB_LIT(s, "fabric ");
		sb_puts(s, FLD(ev->subj.fabric)[0] ? FLD(ev->subj.fabric) : FB_REDFISH_DEFAULT_FABRIC);
		return;
	}
	if (port) {
		SB_LIT(s, " port ");
		sb_puts(s, port);
	}
}

/* ARGS_SUPPRESSED: suppressed, whose (the text, else the subject), the
 * interval in seconds, the first and the last EventId made quiet. */
static void args_suppressed(const struct fb_event *ev, const struct ids *d, struct args *a)
{
	arg_u64(a, fb_event_counter(ev, FB_CTR_SUPPRESSED, 0));
	const char *text = FLD(ev->text);
	if (text[0]) {
		arg_str(a, text);
	} else {
		struct sb s = arg_next(a);
		resource_label(ev, d, &s);
	}
	arg_u64(a, fb_event_counter(ev, FB_CTR_INTERVAL_MS, 0) / 1000);
	arg_u64(a, fb_event_counter(ev, FB_CTR_FIRST_SUPPRESSED_ID, 0));
	arg_u64(a, fb_event_counter(ev, FB_CTR_LAST_SUPPRESSED_ID, 0));
}

/* ARGS_NIC: adapter "node:device"; fabricbus does not track PCI functions,
 * and an mlx5_N / netdev is one function: "0". */
static void args_nic(const struct fb_event *ev, const struct ids *d, struct args *a)
{
	const char *node = FLD(ev->subj.node), *dev = FLD(ev->subj.device);
	struct sb s = arg_next(a);
	sb_puts(&s, node);
	if (node[0] && dev[0])
		SB_LIT(&s, ":");
	sb_puts(&s, dev);
	if (!s.len)
		SB_LIT(&s, "unknown");
	arg_str(a, d->port);
	arg_str(a, "0");
}

static void build_args(const struct fb_event *ev, const struct fb_redfish_msg *m, const struct ids *d,
		       struct args *a)
{
	unsigned shape = m->shape;
	a->n = 0;
	switch (shape) {
	case ARGS_SWITCH:
		arg_str(a, d->sw);
		break;
	case ARGS_SW_PORT:
	case ARGS_SW_PORT_FLAP:
		arg_str(a, d->sw);
		arg_str(a, d->port);
		break;
	case ARGS_FLAP_SUMMARY:
	case ARGS_FLAP_STABLE: {
		uint64_t sup = fb_event_counter(ev, FB_CTR_SUPPRESSED, 0);
		uint64_t secs = fb_event_counter(ev, FB_CTR_INTERVAL_MS, 0) / 1000;
		arg_str(a, d->sw);
		arg_str(a, d->port);
		arg_u64(a, shape == ARGS_FLAP_SUMMARY ? sup : secs);
		arg_u64(a, shape == ARGS_FLAP_SUMMARY ? secs : sup);
		break;
	}
	case ARGS_SUPPRESSED:
		args_suppressed(ev, d, a);
		break;
	case ARGS_NIC:
	case ARGS_NIC_FLAP:
		args_nic(ev, d, a);
		break;
	case ARGS_ERR_THRESHOLD:
		arg_str(a, fb_redfish_table_threshold_property(ev));
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_XMIT_WAIT:
		arg_str(a, "PortXmitWait");
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_STATE: {
		struct sb s = arg_next(a);
		resource_label(ev, d, &s);
		arg_str(a, fb_redfish_table_port_state(ev));
		break;
	}
	case ARGS_HEALTH: {
		struct sb s = arg_next(a);
		resource_label(ev, d, &s);
		/* Resource.Health has the same three values as MessageSeverity,
		 * and the message was picked by it. */
		arg_str(a, fb_severity_name(m->sev));
		break;
	}
	}
	if (shape == ARGS_SW_PORT_FLAP || shape == ARGS_NIC_FLAP) {
		uint64_t win_s = fb_event_counter(ev, FB_CTR_FLAP_WINDOW_S, 0);
		arg_u64(a, fb_event_counter(ev, FB_CTR_FLAP_COUNT, 0));
		arg_u64(a, win_s / 60 + (win_s % 60 != 0)); /* minutes, rounded up */
	}
}

/* ---- JSON writer -------------------------------------------------------- */

/* The write position o is a local of the renderer, passed in and returned,
 * not a field: a byte store through it could alias a field, which would
 * make the compiler reload and store the position around every piece. Room
 * is asked for per section (a bound for its pieces, most of them constant),
 * not per piece, and the pieces are then written unchecked. */
struct jw {
	struct fb_buf *b;
	uint8_t *end;  /* the end of the room in b (or sink after a failure) */
	uint8_t *sink; /* JW_SINK bytes that take the writes after a failure */
	int err;
#ifndef NDEBUG
	uint8_t *claim; /* how far the last section said it would write */
#endif
};

/* No section asks for more: a string's room and a little around it. */
#define JW_SINK (FB_BUF_JSON_STR_ROOM + 256)

/* Cold: the room reserved up front ran out (a long document), or memory did. */
__attribute__((noinline)) static uint8_t *jw_grow(struct jw *w, uint8_t *o, size_t n)
{
	if (!w->err) {
		struct fb_buf *b = w->b;
		b->len = (size_t)(o - b->data);
		w->err = fb_buf_reserve(b, n);
		if (!w->err) {
			w->end = b->data + b->cap;
			return b->data + b->len;
		}
	}
	/* Out of memory: the rest goes to the sink, from its start at every
	 * section, and the caller drops the document. end = sink leaves no
	 * room, so every later section comes back here. */
	w->end = w->sink;
	return w->sink;
}

/* Debug builds check that every section stayed within the room it asked
 * for (the unit tests render thousands of edge cases under ASan), so a bound
 * that is too small fails a test, not a broker. */
#ifndef NDEBUG
#define JW_CHECK(w, o) assert(!(w)->claim || (o) <= (w)->claim)
#define JW_CLAIM(w, o, n) ((w)->claim = (o) + (n))
#else
#define JW_CHECK(w, o) ((void)0)
#define JW_CLAIM(w, o, n) ((void)0)
#endif

/* o, with n bytes of room after it (n <= JW_SINK). */
static inline uint8_t *jw_room(struct jw *w, uint8_t *o, size_t n)
{
	/* Here, not in jw_grow: every section's ask is checked, not only those
	 * that happen to grow the buffer (the sink takes at most JW_SINK). */
	assert(n <= JW_SINK);
	JW_CHECK(w, o); /* before a growth moves the buffer */
	o = w->end - o >= (ptrdiff_t)n ? o : jw_grow(w, o, n);
	JW_CLAIM(w, o, n);
	return o;
}

static uint8_t *jw_init(struct jw *w, struct fb_buf *b, uint8_t *sink, size_t reserve)
{
	w->b = b;
	w->sink = sink;
	w->err = fb_buf_reserve(b, reserve);
	w->end = w->err ? sink : b->data + b->cap;
#ifndef NDEBUG
	w->claim = NULL;
#endif
	return w->err ? sink : b->data + b->len;
}

/* The document ends at o; on a failure the buffer is left as it was at
 * start (never half a document). */
static int jw_done(struct jw *w, uint8_t *o, size_t start)
{
	JW_CHECK(w, o);
	w->b->len = w->err ? start : (size_t)(o - w->b->data);
	return w->err;
}

/* ---- pieces, written unchecked into room asked for before ---------------- */

static inline uint8_t *put(uint8_t *o, const void *p, size_t n)
{
	memcpy(o, p, n);
	return o + n;
}
#define PUT_LIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* The length of the name in a NUL-padded slot (fb_event.h), found in the
 * whole slot at once (a name is shorter than its slot). */
_Static_assert(FB_NAME_SLOT == 32, "slot_len reads one fb_nul32 block");
static inline size_t slot_len(const char *slot) { return fb_nul32(slot); }

/* A name from one of fb_event.h's NUL-padded FB_NAME_SLOT tables ONLY
 * (never a plain string: the whole slot is read), copied as a whole slot:
 * no strlen and no length-dependent copy. Room: FB_NAME_SLOT. */
static inline uint8_t *put_name(uint8_t *o, const char *slot)
{
	memcpy(o, slot, FB_NAME_SLOT);
	return o + slot_len(slot);
}

/* s escaped for a JSON string, no quotes; room: FB_BUF_JSON_STR_ROOM. s is
 * at most 256 bytes (the _Static_assert above), so the short escaper never
 * answers FB_JSON_LONG; a debug build checks it. */
static inline uint8_t *put_escaped(uint8_t *o, const char *s)
{
	size_t n = fb_json_escape_short(o, s);
	assert(n != FB_JSON_LONG);
	return o + n;
}

/* s as a JSON string, quotes included; room: FB_BUF_JSON_STR_ROOM. s is at
 * most 256 bytes (a field or an arg: see the _Static_assert above). */
static inline uint8_t *put_str(uint8_t *o, const char *s)
{
	*o++ = '"';
	o = put_escaped(o, s);
	*o++ = '"';
	return o;
}

/* Decimal; room: 20. */
static inline uint8_t *put_uint(uint8_t *o, uint64_t v) { return o + fb_fmt_uint((char *)o, v); }

/* A u64 for JSON readers with signed 64-bit integers (jansson, and so
 * fb_redfish_parse): above INT64_MAX it is a decimal string, the form
 * fb_event_json uses too. Room: 26. */
static inline uint8_t *put_u64(uint8_t *o, uint64_t v)
{
	if (v <= INT64_MAX)
		return put_uint(o, v);
	*o++ = '"';
	o = put_uint(o, v);
	*o++ = '"';
	return o;
}

/* "2026-11-22T09:52:21.123456Z" (27 bytes and a NUL): UTC, microseconds.
 * Calendar from days since the epoch with the proleptic-Gregorian era
 * arithmetic (H. Hinnant's civil_from_days), so no gmtime_r and no locale
 * or TZ lookups. */
static void fmt_iso8601(char *out, uint64_t ts_ns)
{
	uint64_t secs = ts_ns / 1000000000u;
	uint32_t usec = (uint32_t)(ts_ns % 1000000000u / 1000u);
	uint64_t days = secs / 86400u;
	uint32_t sod = (uint32_t)(secs % 86400u);

	uint64_t z = days + 719468u; /* days since 0000-03-01 */
	uint64_t era = z / 146097u;
	uint32_t doe = (uint32_t)(z - era * 146097u);                          /* [0, 146096] */
	uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	uint32_t mp = (5 * doy + 2) / 153;                                    /* Mar = 0 */
	uint32_t day = doy - (153 * mp + 2) / 5 + 1;
	uint32_t mon = mp < 10 ? mp + 3 : mp - 9;
	uint64_t year = yoe + era * 400 + (mon <= 2);

	uint32_t y = (uint32_t)(year % 10000u); /* u64 ns ends in 2554 */
	put2(out, y / 100);
	put2(out + 2, y % 100);
	out[4] = '-';
	put2(out + 5, mon);
	out[7] = '-';
	put2(out + 8, day);
	out[10] = 'T';
	put2(out + 11, sod / 3600);
	out[13] = ':';
	put2(out + 14, sod / 60 % 60);
	out[16] = ':';
	put2(out + 17, sod % 60);
	out[19] = '.';
	put2(out + 20, usec / 10000);
	put2(out + 22, usec / 100 % 100);
	put2(out + 24, usec % 100);
	out[26] = 'Z';
	out[27] = '\0';
}

/* ---- sections ------------------------------------------------------------ */

/* Key and value of a section of its own: a string, a number, a GUID. */
static uint8_t *jw_key_str(struct jw *w, uint8_t *o, const char *key, size_t klen, const char *v)
{
	o = jw_room(w, o, klen + FB_BUF_JSON_STR_ROOM);
	return put_str(put(o, key, klen), v);
}
#define KEY_STR(w, o, lit, v) jw_key_str((w), (o), (lit), sizeof(lit) - 1, (v))

static uint8_t *jw_key_u64(struct jw *w, uint8_t *o, const char *key, size_t klen, uint64_t v)
{
	o = jw_room(w, o, klen + 32);
	return put_u64(put(o, key, klen), v);
}
#define KEY_U64(w, o, lit, v) jw_key_u64((w), (o), (lit), sizeof(lit) - 1, (v))

static uint8_t *jw_key_guid(struct jw *w, uint8_t *o, const char *key, size_t klen, uint64_t v)
{
	o = jw_room(w, o, klen + 24);
	o = put(o, key, klen);
	*o++ = '"';
	fmt_guid((char *)o, v); /* its NUL is overwritten by the quote */
	o[18] = '"';
	return o + 19;
}
#define KEY_GUID(w, o, lit, v) jw_key_guid((w), (o), (lit), sizeof(lit) - 1, (v))

/* The envelope and the record up to MessageSeverity: ids, the timestamp
 * and registry words, bounded together by HEAD_ROOM (literals 185 bytes,
 * two EventIds copied as 24-byte blocks 48, the timestamp and its NUL 28,
 * EventType and severity copied as slots 64). */
#define HEAD_ROOM 400
static uint8_t *jw_head(struct jw *w, uint8_t *o, const struct fb_event *ev, uint64_t event_id,
			const struct fb_redfish_class *cls)
{
	char id[24] = { 0 }; /* whole-array copies below: no indeterminate bytes */
	size_t idn = fmt_u64(id, event_id);
	o = jw_room(w, o, HEAD_ROOM);
	o = PUT_LIT(o, "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":\"");
	o = put(o, id, sizeof(id)) - sizeof(id) + idn; /* a fixed-size copy: two moves, no call */
	o = PUT_LIT(o, "\",\"Name\":\"Fabric Event\",\"Events@odata.count\":1,\"Events\":[{\"EventType\":\"");
	o = put_name(o, cls->event_type);
	o = PUT_LIT(o, "\",\"EventId\":\"");
	o = put(o, id, sizeof(id)) - sizeof(id) + idn;
	o = PUT_LIT(o, "\",\"EventTimestamp\":\"");
	fmt_iso8601((char *)o, ev->ts_ns);
	o += 27;
	o = PUT_LIT(o, "\",\"MemberId\":\"0\",\"MessageSeverity\":\"");
	o = put_name(o, fb_severity_name(cls->severity));
	return PUT_LIT(o, "\"");
}

/* The Message: the registry template with %1..%9 replaced by the args,
 * each escaped as it is written (the template has nothing to escape, and
 * an arg's own "%1" stays literal: args are never expanded again). */
static uint8_t *jw_template(struct jw *w, uint8_t *o, const struct fb_redfish_msg *m, const struct args *a)
{
	const char *t = m->tmpl, *end = t + m->tmpl_len;
	while (t < end) {
		const char *pct = memchr(t, '%', (size_t)(end - t));
		size_t n = (size_t)((pct ? pct : end) - t);
		o = put(jw_room(w, o, n + 1), t, n);
		if (!pct)
			break;
		unsigned k = (unsigned)(pct[1] - '1'); /* pct[1] is at most the NUL */
		if (pct[1] >= '1' && pct[1] <= '9' && k < a->n) {
			o = put_escaped(jw_room(w, o, FB_BUF_JSON_STR_ROOM), a->v[k]);
			t = pct + 2;
		} else {
			*o++ = '%';
			t = pct + 1;
		}
	}
	return o;
}

static uint8_t *jw_message(struct jw *w, uint8_t *o, const struct fb_redfish_msg *m, const struct args *a)
{
	o = jw_room(w, o, 32 + m->id_len);
	o = PUT_LIT(o, ",\"MessageId\":\"");
	o = put(o, m->id, m->id_len);
	o = PUT_LIT(o, "\",\"Message\":\"");
	o = jw_template(w, o, m, a);
	o = PUT_LIT(jw_room(w, o, 20), "\",\"MessageArgs\":[");
	for (unsigned i = 0; i < a->n; i++) {
		o = jw_room(w, o, 1 + FB_BUF_JSON_STR_ROOM);
		if (i)
			*o++ = ',';
		o = put_str(o, a->v[i]);
	}
	return PUT_LIT(jw_room(w, o, 1), "]");
}

/* The origin is copied as it is: it is made of unreserved bytes, '/' and
 * %XX escapes (sb_seg), none of which JSON escapes. */
static uint8_t *jw_origin(struct jw *w, uint8_t *o, const struct fb_redfish_facts *f, uint64_t group)
{
	const char *origin = f->origin_len < 0 ? "/redfish/v1/Fabrics" : f->origin; /* unreachable: max fits */
	size_t n = f->origin_len < 0 ? strlen(origin) : (size_t)f->origin_len;
	o = jw_room(w, o, n + 96); /* literals 53, the group's digits 24 */
	o = PUT_LIT(o, ",\"OriginOfCondition\":{\"@odata.id\":\"");
	o = put(o, origin, n);
	o = PUT_LIT(o, "\"}");
	if (group && group <= INT64_MAX) {
		o = PUT_LIT(o, ",\"EventGroupId\":");
		o = put_uint(o, group);
	}
	return o;
}

/* The counters the record has fields for, found in one pass (the first of
 * a repeated id counts, as in fb_event_counter). */
struct meta {
	uint64_t group, resync, lifted, cut;
	int quiet; /* an FB_CTR_QUIET is there: fb_event_quiet says why */
};

static void scan_meta(const struct fb_event *ev, unsigned nc, struct meta *mt)
{
	*mt = (struct meta){ 0 };
	for (unsigned i = nc; i-- > 0;) { /* backwards: the first one is written last */
		uint64_t v = ev->counters[i].value;
		switch (ev->counters[i].id) {
		case FB_CTR_EVENT_GROUP_ID: mt->group = v; break;
		case FB_CTR_RESYNC: mt->resync = v; break;
		case FB_CTR_LIMIT_LIFTED: mt->lifted = v; break;
		case FB_CTR_LISTS_CUT: mt->cut = v; break;
		case FB_CTR_QUIET: mt->quiet = 1; break;
		}
	}
}

/* "Jobs":["123","124"] from "123,124": one string per job id, as in the
 * JSON form, so no reader has to split. All of them fit one string's room:
 * at most 95 bytes, each escaped to at most 6. */
static uint8_t *jw_jobs(struct jw *w, uint8_t *o, const char *jobs)
{
	o = jw_room(w, o, 16 + FB_BUF_JSON_STR_ROOM);
	o = PUT_LIT(o, ",\"Jobs\":[");
	for (const char *p = jobs; *p;) {
		size_t n = strcspn(p, ",");
		char id[FB_JOBS_MAX];
		memcpy(id, p, n); /* n < FB_JOBS_MAX: p lies within one NUL-terminated field */
		id[n] = '\0';
		if (p != jobs)
			*o++ = ',';
		o = put_str(o, id);
		p += n + (p[n] == ',');
	}
	*o++ = ']';
	return o;
}

/* A root cause's lists under their own names (the fields that store them
 * are rendered above as well, so fb_redfish_parse reads the event back):
 * "NoPath" and "Degraded" hostlists, "Symptoms" EventId ranges. */
static uint8_t *jw_root_cause(struct jw *w, uint8_t *o, const struct fb_event *ev, const struct meta *mt)
{
	if (ev->kind == FB_KIND_SWITCH_RECOVERED)
		return o;
	o = KEY_STR(w, o, ",\"NoPath\":", FLD(ev->text));
	o = KEY_STR(w, o, ",\"Degraded\":", FLD(ev->subj.peer_name));
	o = KEY_STR(w, o, ",\"Symptoms\":", FLD(ev->subj.device));
	if (mt->cut)
		o = PUT_LIT(jw_room(w, o, 16), ",\"ListsCut\":true");
	return o;
}

/* A name's slot, or "unknown" in one. */
static const char *or_unknown(const char *s)
{
	static const char unknown[FB_NAME_SLOT] = "unknown";
	return s ? s : unknown;
}

/* Oem.Fabricbus's head: who sent it, and what it is, in enum names. */
static uint8_t *jw_oem_head(struct jw *w, uint8_t *o, const struct fb_event *ev)
{
	o = KEY_STR(w, o, ",\"Oem\":{\"Fabricbus\":{\"AgentId\":", FLD(ev->agent_id));
	o = jw_room(w, o, 192); /* literals 53, the sequence 26, three names copied as slots 96 */
	o = put_u64(PUT_LIT(o, ",\"Sequence\":"), ev->seq);
	o = put_name(PUT_LIT(o, ",\"Kind\":\""), or_unknown(fb_kind_name(ev->kind)));
	o = put_name(PUT_LIT(o, "\",\"LinkClass\":\""), or_unknown(fb_link_class_name(ev->link_class)));
	o = put_name(PUT_LIT(o, "\",\"Technology\":\""), or_unknown(fb_tech_name(ev->tech)));
	return PUT_LIT(o, "\"");
}

/* The subject's fields that are set, and the port's states. */
static uint8_t *jw_oem_subject(struct jw *w, uint8_t *o, const struct fb_event *ev)
{
	const struct fb_subject *sj = &ev->subj;
	if (FLD(sj->switch_name)[0])
		o = KEY_STR(w, o, ",\"SwitchName\":", FLD(sj->switch_name));
	if (sj->port)
		o = KEY_U64(w, o, ",\"Port\":", sj->port);
	if (FLD(sj->node)[0])
		o = KEY_STR(w, o, ",\"Node\":", FLD(sj->node));
	if (FLD(sj->device)[0])
		o = KEY_STR(w, o, ",\"Device\":", FLD(sj->device));
	if (FLD(sj->addr)[0])
		o = KEY_STR(w, o, ",\"Address\":", FLD(sj->addr));
	if (sj->ifindex)
		o = KEY_U64(w, o, ",\"IfIndex\":", sj->ifindex);
	if (sj->switch_guid)
		o = KEY_GUID(w, o, ",\"SwitchGUID\":", sj->switch_guid);
	if (sj->port_guid)
		o = KEY_GUID(w, o, ",\"PortGUID\":", sj->port_guid);
	if (sj->lid)
		o = KEY_U64(w, o, ",\"LID\":", sj->lid);
	if (sj->peer_guid)
		o = KEY_GUID(w, o, ",\"PeerGUID\":", sj->peer_guid);
	if (sj->peer_port)
		o = KEY_U64(w, o, ",\"PeerPort\":", sj->peer_port);
	if (FLD(sj->peer_name)[0])
		o = KEY_STR(w, o, ",\"PeerName\":", FLD(sj->peer_name));
	if (ev->port_state)
		o = KEY_U64(w, o, ",\"PortState\":", ev->port_state);
	if (ev->phys_state)
		o = KEY_U64(w, o, ",\"PhysState\":", ev->phys_state);
	return o;
}

/* "Counters":{"name":value,...}; an id without a name is carried through
 * as "counter_<id>". Counter names need no escaping. */
static uint8_t *jw_counters(struct jw *w, uint8_t *o, const struct fb_event *ev, unsigned nc)
{
	o = PUT_LIT(jw_room(w, o, 16), ",\"Counters\":{");
	for (unsigned i = 0; i < nc; i++) {
		const char *name = fb_counter_name(ev->counters[i].id);
		o = jw_room(w, o, 64); /* ',' '"' name (a slot: 32) '":' value (26) */
		if (i)
			*o++ = ',';
		*o++ = '"';
		o = name ? put_name(o, name) : put_uint(PUT_LIT(o, "counter_"), ev->counters[i].id);
		o = put_u64(PUT_LIT(o, "\":"), ev->counters[i].value);
	}
	return PUT_LIT(jw_room(w, o, 1), "}");
}

/* Oem.Fabricbus: everything the event carries that the record above does
 * not, so adapters never need the binary event. */
static uint8_t *jw_oem(struct jw *w, uint8_t *o, const struct fb_event *ev, unsigned nc, const struct meta *mt)
{
	o = jw_oem_subject(w, jw_oem_head(w, o, ev), ev);
	if (nc)
		o = jw_counters(w, o, ev, nc);
	o = jw_room(w, o, 96); /* the three flags 56, the quiet reason < 26 */
	if (mt->resync)
		o = PUT_LIT(o, ",\"Resync\":true"); /* found at an agent's resync (PROTOCOL.md) */
	unsigned quiet = mt->quiet ? fb_event_quiet(ev) : 0;
	if (quiet) { /* skipped by default subscriptions: why (PROTOCOL.md, "Quiet events") */
		const char *qn = fb_quiet_name(quiet);
		o = PUT_LIT(o, ",\"Quiet\":");
		if (qn)
			o = put(put_name(PUT_LIT(o, "\""), qn), "\"", 1);
		else
			o = put_u64(o, quiet);
	}
	if (ev->kind == FB_KIND_EVENTS_SUPPRESSED && mt->lifted)
		o = PUT_LIT(o, ",\"LimitLifted\":true");
	if (FLD(ev->text)[0])
		o = KEY_STR(w, o, ",\"Text\":", FLD(ev->text));
	if (FLD(ev->jobs)[0])
		o = jw_jobs(w, o, FLD(ev->jobs));
	if (fb_event_is_root_cause(ev->kind))
		o = jw_root_cause(w, o, ev, mt);
	return PUT_LIT(jw_room(w, o, 8), "}}");
}

int fb_redfish_render(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		      const char *default_fabric)
{
	struct fb_redfish_facts f;
	return fb_redfish_render_facts(out, ev, event_id, default_fabric, &f);
}

int fb_redfish_render_facts(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
			    const char *default_fabric, struct fb_redfish_facts *f)
{
	const struct fb_redfish_msg *m = fb_redfish_table_classify(ev, &f->cls);
	struct ids d;
	ids_of(ev, &d);
	f->origin_len = origin_of(ev, &d, default_fabric, f->origin, sizeof(f->origin));
	struct args a;
	build_args(ev, m, &d, &a);
	unsigned nc = ev->n_counters < FB_COUNTERS_MAX ? ev->n_counters : FB_COUNTERS_MAX;
	struct meta mt;
	scan_meta(ev, nc, &mt);

	size_t start = out->len;
	uint8_t sink[JW_SINK];
	struct jw w;
	/* Room for a typical document up front; a longer one grows as it goes. */
	uint8_t *o = jw_init(&w, out, sink, 1024 + FB_BUF_JSON_STR_ROOM);
	o = jw_head(&w, o, ev, event_id, &f->cls);
	o = jw_message(&w, o, m, &a);
	o = jw_origin(&w, o, f, mt.group);
	o = jw_oem(&w, o, ev, nc, &mt);
	o = PUT_LIT(jw_room(&w, o, 4), "}]}");
	return jw_done(&w, o, start);
}

int fb_redfish_render_missed(struct fb_buf *out, uint64_t missed, uint64_t resume_since)
{
	const struct fb_redfish_msg *m = fb_redfish_table_missed();
	struct args a = { 0 };
	arg_u64(&a, missed);
	arg_u64(&a, resume_since);

	size_t start = out->len;
	uint8_t sink[JW_SINK];
	struct jw w;
	uint8_t *o = jw_init(&w, out, sink, 1024 + FB_BUF_JSON_STR_ROOM); /* > 0: data is set */
	o = jw_room(&w, o, 256);
	o = PUT_LIT(o, "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":\"missed-");
	o = put_uint(o, resume_since);
	o = PUT_LIT(o, "\",\"Name\":\"Fabric Event\",\"Events@odata.count\":1,\"Events\":[{");
	o = PUT_LIT(o, "\"EventType\":\"Other\",\"MemberId\":\"0\",\"MessageSeverity\":\"");
	o = PUT_LIT(put_name(o, fb_severity_name(m->sev)), "\"");
	o = jw_message(&w, o, m, &a);
	o = jw_room(&w, o, 256);
	o = PUT_LIT(o, ",\"OriginOfCondition\":{\"@odata.id\":\"/redfish/v1/EventService\"}");
	o = put_u64(PUT_LIT(o, ",\"Oem\":{\"Fabricbus\":{\"Missed\":"), missed);
	o = put_u64(PUT_LIT(o, ",\"ResumeSince\":"), resume_since);
	o = PUT_LIT(o, "}}}]}");
	return jw_done(&w, o, start);
}
