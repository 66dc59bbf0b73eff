/* fb_buf.h - a growable byte buffer (writer) and a bounds-checked reader.
 *
 * Every byte that comes off the network or the disk is read through
 * struct fb_rd. Its error is sticky: after any out-of-bounds or invalid read
 * rd->err is set, every later read returns zeroes, and the caller checks
 * rd->err once at the end. No caller does pointer arithmetic on input.
 *
 * Integers are big-endian on the wire and on disk.
 */
#ifndef FB_BUF_H
#define FB_BUF_H

#include "fb_err.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Owned by whoever declared it; release with fb_buf_free(). */
struct fb_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

#define FB_BUF_INIT { NULL, 0, 0 }

/* The growing half of fb_buf_reserve and fb_buf_put (out of line). */
int fb_buf_grow(struct fb_buf *b, size_t extra);
int fb_buf_put_grow(struct fb_buf *b, const void *p, size_t n);

/* Room for extra more bytes: 0 or -ENOMEM. Inline because the common case
 * (room already there) is one compare, and it runs several times per event
 * on the loop (journal records) and the WebSocket thread (rendering). */
static inline int fb_buf_reserve(struct fb_buf *b, size_t extra)
{
	return extra <= b->cap - b->len ? 0 : fb_buf_grow(b, extra);
}

/* "00".."99": numbers are written two digits per division. */
extern const char fb_dig2[201];

/* The number of decimal digits of v: from its bit length (log10(2) ~
 * 1233 / 4096), corrected by one compare. */
static inline size_t fb_dec_len(uint64_t v)
{
	static const uint64_t pow10[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
		10000000ull, 100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
		1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull };
	v |= 1; /* 0 has one digit; the last bit never changes the count */
	unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	return t + (v >= pow10[t]);
}

/* v in decimal at out (at most 20 bytes, no NUL), written from the end two
 * digits at a time. Returns the length. The one decimal formatter: the
 * renderers inline it, fb_buf_put_uint calls it. */
static inline size_t fb_fmt_uint(char *out, uint64_t v)
{
	size_t n = fb_dec_len(v);
	char *o = out + n;
	for (; v >= 100; v /= 100) {
		o -= 2;
		memcpy(o, fb_dig2 + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(o - 2, fb_dig2 + 2 * v, 2);
	else
		o[-1] = (char)('0' + v);
	return n;
}
/* Append n bytes; inline for the same reason as fb_buf_reserve. */
static inline int fb_buf_put(struct fb_buf *b, const void *p, size_t n)
{
	if (n > b->cap - b->len)
		return fb_buf_put_grow(b, p, n);
	if (n) { /* b->data is NULL while cap is 0 */
		memcpy(b->data + b->len, p, n);
		b->len += n;
	}
	return 0;
}
int fb_buf_put_u8(struct fb_buf *b, uint8_t v);
int fb_buf_put_u16(struct fb_buf *b, uint16_t v);
int fb_buf_put_u32(struct fb_buf *b, uint32_t v);
int fb_buf_put_u64(struct fb_buf *b, uint64_t v);
/* A u8 length then the bytes; strings longer than 255 bytes are refused. */
int fb_buf_put_str8(struct fb_buf *b, const char *s);
/* Text helpers for hand-rolled JSON (hot path: no jansson there). */
int fb_buf_puts(struct fb_buf *b, const char *s);
int fb_buf_put_uint(struct fb_buf *b, uint64_t v);
/* s as a JSON string literal, quotes included, escaped per RFC 8259. */
int fb_buf_put_json_str(struct fb_buf *b, const char *s);
/* With this much room left, a string of up to 256 bytes is written in one
 * pass (no strlen, no growth check): a hot renderer reserves it up front. */
#define FB_BUF_JSON_STR_ROOM (2 + 6 * 256 + 32)
/* The inside of a JSON string literal for s (escaped per RFC 8259, no
 * quotes) written at out, which has FB_BUF_JSON_STR_ROOM bytes (bytes past
 * the result may be overwritten): the bytes written, or FB_JSON_LONG if s is
 * longer than 256 bytes (then use fb_buf_put_json_str). For a renderer that
 * keeps its own write position. */
#define FB_JSON_LONG SIZE_MAX
size_t fb_json_escape_short(uint8_t *out, const char *s);
int fb_buf_printf(struct fb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Patch a big-endian integer at an earlier offset (for length prefixes). */
void fb_buf_patch_u16(struct fb_buf *b, size_t off, uint16_t v);
void fb_buf_patch_u32(struct fb_buf *b, size_t off, uint32_t v);
/* Drop the first n bytes. */
void fb_buf_consume(struct fb_buf *b, size_t n);
void fb_buf_reset(struct fb_buf *b);
void fb_buf_free(struct fb_buf *b);

/* The checked reader. Does not own p. */
struct fb_rd {
	const uint8_t *p;
	size_t len;
	size_t off;
	int err; /* 0, or the first fb_err hit */
};

/* Inline, as the primitives below: once or more per decoded event. */
static inline void fb_rd_init(struct fb_rd *r, const void *p, size_t len)
{
	r->p = p;
	r->len = len;
	r->off = 0;
	r->err = 0;
}
static inline size_t fb_rd_left(const struct fb_rd *r) { return r->err ? 0 : r->len - r->off; }
/* Returns a pointer to the next n bytes and advances, or NULL (and sets err). */
static inline const uint8_t *fb_rd_take(struct fb_rd *r, size_t n);
static inline uint8_t fb_rd_u8(struct fb_rd *r);
static inline uint16_t fb_rd_u16(struct fb_rd *r);
static inline uint32_t fb_rd_u32(struct fb_rd *r);
static inline uint64_t fb_rd_u64(struct fb_rd *r);
/* A u8-length string into out (NUL-terminated). Refuses a length that does
 * not fit outsz, embedded NUL bytes and invalid UTF-8 (FB_EMALFORMED). */
static inline void fb_rd_str8(struct fb_rd *r, char *out, size_t outsz);

/* 1 if the n bytes are valid UTF-8 without NUL bytes. */
int fb_utf8_valid(const uint8_t *s, size_t n);

/* The length of the string at s if it ends within 32 bytes, else 32; s has
 * 32 readable bytes (a NUL-padded name slot, a fixed-size field). Two
 * vector compares instead of a strlen call, for the hot paths that copy
 * short names as whole 32-byte blocks (fb_redfish.c, broker/batch.c). */
static inline size_t fb_nul32(const char *s)
{
#if defined(__SSE2__)
	const __m128i z = _mm_setzero_si128();
	unsigned lo = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)s), z));
	unsigned hi = (unsigned)_mm_movemask_epi8(
		_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + 16)), z));
	/* bit 32 set: 32 when the block has no NUL, without a branch */
	return (size_t)__builtin_ctzll((uint64_t)(lo | hi << 16) | 1ull << 32);
#else
	const char *nul = memchr(s, 0, 32);
	return nul ? (size_t)(nul - s) : 32;
#endif
}

/* Big-endian loads and stores for fixed-size headers. */
static inline uint32_t fb_load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void fb_store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline uint64_t fb_load_be64(const uint8_t *p)
{
	return (uint64_t)fb_load_be32(p) << 32 | fb_load_be32(p + 4);
}
static inline void fb_store_be64(uint8_t *p, uint64_t v)
{
	fb_store_be32(p, (uint32_t)(v >> 32));
	fb_store_be32(p + 4, (uint32_t)v);
}

/* The reader's primitives are inline: they run for every field of every
 * event on the ingest path. */
static inline const uint8_t *fb_rd_take(struct fb_rd *r, size_t n)
{
	if (r->err)
		return NULL;
	if (n > r->len - r->off) {
		r->err = FB_ETRUNC;
		return NULL;
	}
	const uint8_t *p = r->p + r->off;
	r->off += n;
	return p;
}

static inline uint8_t fb_rd_u8(struct fb_rd *r)
{
	const uint8_t *p = fb_rd_take(r, 1);
	return p ? p[0] : 0;
}

static inline uint16_t fb_rd_u16(struct fb_rd *r)
{
	const uint8_t *p = fb_rd_take(r, 2);
	return p ? (uint16_t)(p[0] << 8 | p[1]) : 0;
}

static inline uint32_t fb_rd_u32(struct fb_rd *r)
{
	const uint8_t *p = fb_rd_take(r, 4);
	return p ? fb_load_be32(p) : 0;
}

static inline uint64_t fb_rd_u64(struct fb_rd *r)
{
	const uint8_t *p = fb_rd_take(r, 8);
	return p ? fb_load_be64(p) : 0;
}

/* Inline too: seven per decoded event (fb_event_decode_why). */
static inline void fb_rd_str8(struct fb_rd *r, char *out, size_t outsz)
{
	out[0] = '\0';
	uint8_t n = fb_rd_u8(r);
	if (!n)
		return; /* most of an event's names are empty */
	const uint8_t *p = fb_rd_take(r, n);
	if (!p)
		return;
	if ((size_t)n >= outsz) {
		r->err = FB_ETOOBIG;
		return;
	}
	if (!fb_utf8_valid(p, n)) {
		r->err = FB_EMALFORMED;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

#endif
