#include "fb_buf.h"

#include "fb_err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fb_buf_grow(struct fb_buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len)
		return -ENOMEM;
	size_t need = b->len + extra;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	uint8_t *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int fb_buf_put_grow(struct fb_buf *b, const void *p, size_t n)
{
	int rc = fb_buf_grow(b, n);
	if (rc)
		return rc;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

int fb_buf_put_u8(struct fb_buf *b, uint8_t v) { return fb_buf_put(b, &v, 1); }

int fb_buf_put_u16(struct fb_buf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)(v >> 8), (uint8_t)v };
	return fb_buf_put(b, x, 2);
}

int fb_buf_put_u32(struct fb_buf *b, uint32_t v)
{
	uint8_t x[4];
	fb_store_be32(x, v);
	return fb_buf_put(b, x, 4);
}

int fb_buf_put_u64(struct fb_buf *b, uint64_t v)
{
	uint8_t x[8];
	fb_store_be64(x, v);
	return fb_buf_put(b, x, 8);
}

int fb_buf_put_str8(struct fb_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 255)
		return FB_ETOOBIG;
	int rc = fb_buf_put_u8(b, (uint8_t)n);
	return rc ? rc : fb_buf_put(b, s, n);
}

int fb_buf_puts(struct fb_buf *b, const char *s) { return fb_buf_put(b, s, strlen(s)); }

const char fb_dig2[201] = "0001020304050607080910111213141516171819"
			  "2021222324252627282930313233343536373839"
			  "4041424344454647484950515253545556575859"
			  "6061626364656667686970717273747576777879"
			  "8081828384858687888990919293949596979899";

int fb_buf_put_uint(struct fb_buf *b, uint64_t v)
{
	char tmp[20];
	return fb_buf_put(b, tmp, fb_fmt_uint(tmp, v));
}

/* 1 if byte c must be escaped inside a JSON string. */
static inline int json_needs_escape(uint8_t c) { return c < 0x20 || c == '"' || c == '\\'; }

/* The lanes of w holding a byte < 0x20 (this covers NUL), '"' or '\\' have
 * their high bit set. A borrow can only flag lanes above a real one, so the
 * lowest flagged lane is exact (what fb_json_escape_short relies on). */
static inline uint64_t json_escape_mask(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t lt = (w - ones * 0x20) & ~w;                  /* < 0x20 */
	uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');
	uint64_t eq = ((q - ones) & ~q) | ((bs - ones) & ~bs); /* == '"' or '\\' */
	return (lt | eq) & high;
}

/* Write the escape for c (one that json_needs_escape) at o; returns the end. */
static uint8_t *json_escape(uint8_t *o, uint8_t c)
{
	static const char hex[] = "0123456789abcdef";
	*o++ = '\\';
	switch (c) {
	case '"': *o++ = '"'; break;
	case '\\': *o++ = '\\'; break;
	case '\n': *o++ = 'n'; break;
	case '\r': *o++ = 'r'; break;
	case '\t': *o++ = 't'; break;
	default:
		*o++ = 'u'; *o++ = '0'; *o++ = '0';
		*o++ = (uint8_t)hex[c >> 4]; *o++ = (uint8_t)hex[c & 15];
	}
	return o;
}

/* Length of the run of s that needs no escaping, stopping at the NUL or the
 * first byte that does; 8 bytes per step. */
typedef uint64_t __attribute__((may_alias)) fb_word;
/* The same, at any address (no alignment assumed: UBSan checks it). */
typedef uint64_t __attribute__((may_alias, aligned(1))) fb_uword;

/* Not instrumented: the aligned word that holds the NUL may reach past the
 * string's object (as glibc's strlen does), which ASan would report. */
__attribute__((no_sanitize_address)) static size_t json_plain_run(const char *s)
{
	size_t i = 0;
	/* Whole words never cross a page boundary when aligned, so reading up
	 * to the aligned word that holds the NUL stays inside mapped memory. */
	while (((uintptr_t)(s + i) & 7) != 0) {
		if (json_needs_escape((uint8_t)s[i]))
			return i;
		i++;
	}
	while (!json_escape_mask(*(const fb_word *)(const void *)(s + i)))
		i += 8;
	while (!json_needs_escape((uint8_t)s[i]))
		i++;
	return i;
}

/* Copy the CHUNK bytes at s to o whole (o has room) and return how many of
 * them lead without needing an escape (CHUNK if all): SSE2 16 at a time,
 * else 8 with the word masks on a little-endian machine, else none (the
 * byte loop does all). Not instrumented: see fb_json_escape_short. */
#if defined(__SSE2__)
#include <emmintrin.h>
#define CHUNK 16
__attribute__((no_sanitize_address)) static inline size_t chunk_plain(uint8_t *o, const char *s)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	_mm_storeu_si128((__m128i *)(void *)o, v);
	__m128i ctl = _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1f)), v); /* <= 0x1f */
	__m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
	__m128i bs = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
	unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(q, bs)));
	return m ? (size_t)__builtin_ctz(m) : CHUNK;
}
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CHUNK 8
__attribute__((no_sanitize_address)) static inline size_t chunk_plain(uint8_t *o, const char *s)
{
	uint64_t w = *(const fb_uword *)(const void *)s;
	*(fb_uword *)(void *)o = w;
	uint64_t m = json_escape_mask(w);
	return m ? (size_t)__builtin_ctzll(m) >> 3 : CHUNK; /* lowest lane first */
}
#endif

/* The one-pass path for a string of at most JSON_SHORT_MAX bytes, which is
 * nearly every string the broker renders (names, ids, registry words): out
 * has FB_BUF_JSON_STR_ROOM bytes, so nothing is measured first and nothing is
 * checked per byte. Chunks are copied whole (out has spare bytes for the
 * last one) and the output advances by the plain run only. Not instrumented
 * for the same reason as json_plain_run: a chunk read may reach past the
 * NUL, never past the page (checked before each). */
#define JSON_SHORT_MAX 256
_Static_assert(FB_BUF_JSON_STR_ROOM >= 2 + 6 * JSON_SHORT_MAX + 24, "room for the longest short string");

__attribute__((no_sanitize_address)) size_t fb_json_escape_short(uint8_t *out, const char *s)
{
	uint8_t *o = out;
	const char *end = s + JSON_SHORT_MAX;
	while (s < end) {
#ifdef CHUNK
		if (((uintptr_t)s & 4095) <= 4096 - CHUNK) {
			size_t k = chunk_plain(o, s);
			s += k;
			o += k;
			if (k == CHUNK)
				continue;
		}
#endif
		uint8_t c = (uint8_t)*s++;
		if (!json_needs_escape(c))
			*o++ = c;
		else if (c)
			o = json_escape(o, c);
		else
			return (size_t)(o - out);
	}
	return FB_JSON_LONG;
}

int fb_buf_put_json_str(struct fb_buf *b, const char *s)
{
	if (b->cap - b->len >= FB_BUF_JSON_STR_ROOM) {
		uint8_t *o = b->data + b->len;
		size_t n = fb_json_escape_short(o + 1, s);
		if (n != FB_JSON_LONG) {
			o[0] = '"';
			o[n + 1] = '"';
			b->len += n + 2;
			return 0;
		}
	}
	/* Fast path: most names need no escaping, so copy them whole. */
	size_t i = json_plain_run(s);
	size_t n = s[i] ? i + strlen(s + i) : i;
	if (i == n) {
		int rc = fb_buf_reserve(b, n + 2);
		if (rc)
			return rc;
		uint8_t *o = b->data + b->len;
		o[0] = '"';
		memcpy(o + 1, s, n);
		o[n + 1] = '"';
		b->len += n + 2;
		return 0;
	}
	/* Worst case every byte becomes \u00XX. */
	int rc = fb_buf_reserve(b, n * 6 + 2);
	if (rc)
		return rc;
	uint8_t *o = b->data + b->len;
	*o++ = '"';
	memcpy(o, s, i);
	o += i;
	for (; i < n; i++) {
		uint8_t c = (uint8_t)s[i];
		if (json_needs_escape(c))
			o = json_escape(o, c);
		else
			*o++ = c;
	}
	*o++ = '"';
	b->len = (size_t)(o - b->data);
	return 0;
}

int fb_buf_printf(struct fb_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	int rc = fb_buf_reserve(b, (size_t)n + 1);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void fb_buf_patch_u16(struct fb_buf *b, size_t off, uint16_t v)
{
	b->data[off] = (uint8_t)(v >> 8);
	b->data[off + 1] = (uint8_t)v;
}

void fb_buf_patch_u32(struct fb_buf *b, size_t off, uint32_t v) { fb_store_be32(b->data + off, v); }

void fb_buf_consume(struct fb_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->data, b->data + n, b->len - n);
	b->len -= n;
}

void fb_buf_reset(struct fb_buf *b) { b->len = 0; }

void fb_buf_free(struct fb_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

/* 1 if the 8 bytes of w are ASCII and none is NUL. */
static inline int ascii8(uint64_t w)
{
	return !((w & 0x8080808080808080ull) || ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull));
}

int fb_utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;
	uint64_t w;
	/* Names are nearly always ASCII: check that first, 8 bytes at a time
	 * (a NUL byte or a non-ASCII one goes to the exact loop below). */
	while (i + 8 <= n) {
		memcpy(&w, s + i, 8);
		if (!ascii8(w))
			break;
		i += 8;
	}
	if (i == n)
		return 1;
	/* The last 1-7 bytes as one word too, not one by one: the 8 bytes that
	 * end the string (overlapping ones already checked); below 8 bytes,
	 * loads that overlap to cover the string, padded with 0x01 (ASCII,
	 * not NUL). No copy through memory: reading a word back right after
	 * a byte-wise memcpy stalls (store forwarding). */
	if (n >= 8) {
		memcpy(&w, s + n - 8, 8);
		if (i + 8 > n && ascii8(w))
			return 1;
	} else if (n >= 4) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		if (ascii8((uint64_t)a << 32 | b))
			return 1;
	} else if (ascii8(0x0101010101010101ull << 24 | (uint64_t)s[0] << 16 | (uint64_t)s[n / 2] << 8 |
			  s[n - 1])) {
		return 1;
	}
	while (i < n) {
		uint8_t c = s[i];
		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp;
		if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
		else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
		else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
		else return 0;
		if (len > n - i)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3F);
		}
		/* Overlong forms, surrogates and out-of-range code points. */
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
		i += len;
	}
	return 1;
}
