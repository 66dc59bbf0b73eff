/* fb_hostlist.c - Slurm hostlist expressions (see fb_hostlist.h).
 *
 * Two passes over the expression: the first parses every item and counts
 * its names (the product of its bracket groups' sizes) without producing
 * any, so that a list that is bad or too big at its end is refused before
 * the caller saw a name; the second parses each item again and walks its
 * groups like an odometer, the last group fastest, as Slurm does.
 */
#include "fb_hostlist.h"

#include "fb_err.h"

#include <stdio.h>
#include <string.h>

#define NUM_DIGITS_MAX 18 /* fits an unsigned long long with room to add 1 */

struct range {
	unsigned long long lo, hi;
	int width; /* digits of lo: "08" pads to 2 (a bound without a leading zero never pads) */
};

/* One "text[ranges]" group of an item; offsets are into the expression. */
struct group {
	size_t text_off, text_len; /* the literal text before '[' */
	size_t body_off, body_len; /* between the brackets */
	size_t count;              /* names the group yields */
	int width;                 /* its longest number */
	size_t at;                 /* expansion: offset in the body of the current range */
	struct range r;
	unsigned long long cur;
};

struct item {
	unsigned ng;
	struct group g[FB_HOSTLIST_GROUPS_MAX];
	size_t tail_off, tail_len; /* literal text after the last group (the whole item if none) */
	size_t count;
};

/* The broker's rule for node names (broker/fabric/jobs.c): printable ASCII but
 * space, ',', '[' and ']'. */
static int name_byte(unsigned char c)
{
	return c > 0x20 && c < 0x7f && c != ',' && c != '[' && c != ']';
}

static int digits_of(unsigned long long v)
{
	int n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* s[0..n): 1..NUM_DIGITS_MAX decimal digits. */
static int parse_num(const char *s, size_t n, unsigned long long *v)
{
	if (n == 0 || n > NUM_DIGITS_MAX)
		return -1;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (unsigned long long)(s[i] - '0');
	}
	return 0;
}

/* The range of expr at off, up to the next ',' or end (exclusive), as "lo"
 * or "lo-hi". */
static int parse_range(const char *expr, size_t off, size_t end, struct range *r, char *err,
		       size_t errsz)
{
	const char *s = expr + off;
	size_t n = end - off;
	const char *dash = memchr(s, '-', n);
	size_t lo_n = dash ? (size_t)(dash - s) : n;
	int shown = n > 40 ? 40 : (int)n;
	if (n == 0)
		return fb_err_set(err, errsz, FB_EMALFORMED, "empty range at byte %zu", off);
	if (parse_num(s, lo_n, &r->lo) ||
	    (dash ? parse_num(dash + 1, n - lo_n - 1, &r->hi) : (r->hi = r->lo, 0)))
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "bad range '%.*s' at byte %zu (want N or N-M, at most %d digits each)",
				  shown, s, off, NUM_DIGITS_MAX);
	if (r->hi < r->lo)
		return fb_err_set(err, errsz, FB_EMALFORMED, "reversed range %.*s at byte %zu", shown,
				  s, off);
	r->width = (int)lo_n;
	return 0;
}

/* Count the group's names and find its widest number. */
static int check_group(const char *expr, struct group *g, size_t max, char *err, size_t errsz)
{
	size_t off = g->body_off, end = g->body_off + g->body_len;
	g->count = 0;
	g->width = 0;
	for (;;) {
		const char *comma = memchr(expr + off, ',', end - off);
		size_t stop = comma ? (size_t)(comma - expr) : end;
		struct range r;
		int rc = parse_range(expr, off, stop, &r, err, errsz);
		if (rc)
			return rc;
		/* hi - lo can be ~1e18: compare before adding */
		if (r.hi - r.lo >= max || g->count + (size_t)(r.hi - r.lo) + 1 > max)
			return fb_err_set(err, errsz, FB_ETOOBIG, "more than %zu names at byte %zu", max,
					  off);
		g->count += (size_t)(r.hi - r.lo) + 1;
		int w = digits_of(r.hi) > r.width ? digits_of(r.hi) : r.width;
		g->width = w > g->width ? w : g->width;
		if (!comma)
			return 0;
		off = stop + 1;
	}
}

/* A '[' at expr[open]: the group's body, checked and counted. */
static int parse_group(const char *expr, size_t len, size_t text, size_t open, struct item *it,
		       size_t max, size_t *close, char *err, size_t errsz)
{
	size_t i = open + 1;
	for (; i < len && expr[i] != ']'; i++) {
		unsigned char c = (unsigned char)expr[i];
		if (c == '[')
			return fb_err_set(err, errsz, FB_EMALFORMED, "'[' inside brackets at byte %zu", i);
		if (!(c >= '0' && c <= '9') && c != '-' && c != ',')
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "byte 0x%02x at byte %zu: only digits, '-' and ',' go "
					  "between brackets", c, i);
	}
	if (i == len)
		return fb_err_set(err, errsz, FB_EMALFORMED, "'[' at byte %zu is never closed", open);
	if (it->ng == FB_HOSTLIST_GROUPS_MAX)
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "more than %d bracket groups in one name at byte %zu",
				  FB_HOSTLIST_GROUPS_MAX, open);
	struct group *g = &it->g[it->ng++];
	*g = (struct group){ .text_off = text, .text_len = open - text, .body_off = open + 1,
			     .body_len = i - open - 1 };
	*close = i;
	return check_group(expr, g, max, err, errsz);
}

/* Multiply out the item's groups and check its names' length. */
static int size_item(const struct item *it, size_t off, size_t max, size_t *count, char *err,
		     size_t errsz)
{
	size_t n = 1, name_len = it->tail_len;
	for (unsigned k = 0; k < it->ng; k++) {
		if (n > max / it->g[k].count)
			return fb_err_set(err, errsz, FB_ETOOBIG, "more than %zu names in the item at "
					  "byte %zu", max, off);
		n *= it->g[k].count;
		name_len += it->g[k].text_len + (size_t)it->g[k].width;
	}
	if (name_len > FB_HOSTLIST_NAME_MAX)
		return fb_err_set(err, errsz, FB_ETOOBIG, "the item at byte %zu makes names of %zu "
				  "bytes (at most %d)", off, name_len, FB_HOSTLIST_NAME_MAX);
	*count = n;
	return 0;
}

/* The item starting at off, up to the next top-level ',' or the end, into
 * *it; *end is where it stops. */
static int parse_item(const char *expr, size_t len, size_t off, size_t max, struct item *it,
		      size_t *end, char *err, size_t errsz)
{
	size_t i = off, text = off;
	it->ng = 0;
	while (i < len && expr[i] != ',') {
		unsigned char c = (unsigned char)expr[i];
		if (c == '[') {
			size_t close = 0;
			int rc = parse_group(expr, len, text, i, it, max, &close, err, errsz);
			if (rc)
				return rc;
			i = text = close + 1;
			continue;
		}
		if (c == ']')
			return fb_err_set(err, errsz, FB_EMALFORMED, "']' without '[' at byte %zu", i);
		if (!name_byte(c))
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "byte 0x%02x at byte %zu is not allowed in a node name "
					  "(printable ASCII but space, ',', '[', ']')", c, i);
		i++;
	}
	if (i == off)
		return fb_err_set(err, errsz, FB_EMALFORMED, "empty name at byte %zu", off);
	if (it->ng && i > text) /* "n[1-3]x": Slurm refuses it too */
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "text after ']' at byte %zu (a name ends with its last group)", text);
	it->tail_off = text;
	it->tail_len = i - text;
	*end = i;
	return size_item(it, off, max, &it->count, err, errsz);
}

/* Point g at its range starting at body offset at (validated in pass 1). */
static void load_range(const char *expr, struct group *g, size_t at)
{
	size_t off = g->body_off + at, end = g->body_off + g->body_len;
	const char *comma = memchr(expr + off, ',', end - off);
	g->at = at;
	if (parse_range(expr, off, comma ? (size_t)(comma - expr) : end, &g->r, NULL, 0) == 0)
		g->cur = g->r.lo;
}

/* The group's next number; 0 when it has wrapped around to its first. */
static int advance(const char *expr, struct group *g)
{
	if (g->cur < g->r.hi) {
		g->cur++;
		return 1;
	}
	const char *comma = memchr(expr + g->body_off + g->at, ',', g->body_len - g->at);
	load_range(expr, g, comma ? (size_t)(comma - expr) - g->body_off + 1 : 0);
	return comma != NULL;
}

static int emit_item(const char *expr, struct item *it, fb_hostlist_cb cb, void *arg)
{
	char name[FB_HOSTLIST_NAME_MAX + 1];
	for (unsigned k = 0; k < it->ng; k++)
		load_range(expr, &it->g[k], 0);
	for (;;) {
		size_t n = 0;
		for (unsigned k = 0; k < it->ng; k++) {
			const struct group *g = &it->g[k];
			memcpy(name + n, expr + g->text_off, g->text_len);
			n += g->text_len;
			n += (size_t)snprintf(name + n, sizeof(name) - n, "%0*llu", g->r.width, g->cur);
		}
		memcpy(name + n, expr + it->tail_off, it->tail_len); /* size_item bounded n */
		n += it->tail_len;
		name[n] = '\0';
		int rc = cb(arg, name, n);
		if (rc)
			return rc;
		int k = (int)it->ng - 1;
		while (k >= 0 && !advance(expr, &it->g[k]))
			k--;
		if (k < 0)
			return 0;
	}
}

int fb_hostlist_expand(const char *expr, size_t len, size_t max_names, fb_hostlist_cb cb, void *arg,
		       size_t *count, char *err, size_t errsz)
{
	struct item it;
	size_t total = 0, end;
	if (len == 0)
		return fb_err_set(err, errsz, FB_EMALFORMED, "empty list");
	for (size_t off = 0;; off = end + 1) {
		int rc = parse_item(expr, len, off, max_names, &it, &end, err, errsz);
		if (rc)
			return rc;
		if (it.count > max_names - total)
			return fb_err_set(err, errsz, FB_ETOOBIG, "more than %zu names", max_names);
		total += it.count;
		if (end == len)
			break;
	}
	for (size_t off = 0; cb && off < len; off = end + 1) {
		if (parse_item(expr, len, off, max_names, &it, &end, NULL, 0) != 0)
			return FB_EMALFORMED; /* cannot happen: pass 1 took it */
		int rc = emit_item(expr, &it, cb, arg);
		if (rc)
			return rc;
	}
	if (count)
		*count = total;
	return 0;
}
