/* fb_event_scan.c - see fb_event_scan.h. Every byte is read through fb_rd. */
#include "fb_event_scan.h"

#include "fb_buf.h"

#include <string.h>

#define MISSED_ID "Fabricbus.1.0.SubscriberEventsMissed"

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Leave w on the first byte of the value of the first `"key"` (quotes
 * included in key) followed by ':'. */
static int find_value(const char *p, size_t len, const char *key, struct fb_rd *w)
{
	size_t kl = strlen(key);
	const char *k = memmem(p, len, key, kl);
	uint8_t c;
	if (!k)
		return 0;
	fb_rd_init(w, k + kl, len - (size_t)(k - p) - kl);
	while (is_space(c = fb_rd_u8(w)))
		;
	if (c != ':' || w->err)
		return 0;
	while (fb_rd_left(w) && is_space(w->p[w->off]))
		fb_rd_u8(w);
	return 1;
}

static int scan_u64(const char *p, size_t len, const char *key, uint64_t *out)
{
	struct fb_rd w;
	uint64_t v = 0;
	int n = 0;
	uint8_t c;
	if (!find_value(p, len, key, &w))
		return 0;
	c = fb_rd_u8(&w);
	if (c == '"')
		c = fb_rd_u8(&w);
	for (; c >= '0' && c <= '9' && !w.err; c = fb_rd_u8(&w), n++) {
		uint64_t d = (uint64_t)(c - '0');
		if (v > (UINT64_MAX - d) / 10)
			return 0;
		v = v * 10 + d;
	}
	if (!n)
		return 0;
	*out = v;
	return 1;
}

int fb_event_scan_id(const char *json, size_t len, uint64_t *id)
{
	return scan_u64(json, len, "\"Id\"", id);
}

int fb_event_scan_missed(const char *json, size_t len, struct fb_event_missed *m)
{
	struct fb_rd w;
	const uint8_t *v;
	/* the cheap test first: almost every message fails it */
	if (!memmem(json, len, MISSED_ID, sizeof(MISSED_ID) - 1) ||
	    !find_value(json, len, "\"MessageId\"", &w))
		return 0;
	v = fb_rd_take(&w, sizeof(MISSED_ID) + 1); /* the quoted MessageId */
	if (!v || v[0] != '"' || memcmp(v + 1, MISSED_ID, sizeof(MISSED_ID) - 1) != 0 ||
	    v[sizeof(MISSED_ID)] != '"')
		return 0;
	memset(m, 0, sizeof(*m));
	scan_u64(json, len, "\"Missed\"", &m->missed);
	m->have_resume = scan_u64(json, len, "\"ResumeSince\"", &m->resume_since);
	return 1;
}
