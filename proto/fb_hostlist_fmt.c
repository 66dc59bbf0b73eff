/* fb_hostlist_fmt.c - node names as a Slurm hostlist (see fb_hostlist_fmt.h). */
#include "fb_hostlist_fmt.h"

#include "fb_buf.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Digits of a number the hostlist ranges; longer runs stay in the prefix. */
#define HL_DIGITS_MAX 18

struct hl_name {
	const char *s;
	size_t plen;           /* prefix bytes */
	size_t ndig;           /* trailing digits (0: none) */
	size_t width;          /* zero-padded to this many digits, 0: not padded */
	uint64_t val;
};

static void hl_split(const char *s, struct hl_name *h)
{
	size_t len = strlen(s), d = 0;
	while (d < len && d < HL_DIGITS_MAX && s[len - 1 - d] >= '0' && s[len - 1 - d] <= '9')
		d++;
	if (d == len || (d == HL_DIGITS_MAX && len > d && s[len - 1 - d] >= '0' && s[len - 1 - d] <= '9'))
		d = 0; /* all digits, or too many: no range */
	h->s = s;
	h->plen = len - d;
	h->ndig = d;
	h->val = d ? strtoull(s + len - d, NULL, 10) : 0;
}

static int hl_cmp(const void *pa, const void *pb)
{
	const struct hl_name *a = pa, *b = pb;
	size_t m = a->plen < b->plen ? a->plen : b->plen;
	int c = memcmp(a->s, b->s, m);
	if (c)
		return c;
	if (a->plen != b->plen)
		return a->plen < b->plen ? -1 : 1;
	if (a->ndig != b->ndig)
		return a->ndig < b->ndig ? -1 : 1;
	return (a->val > b->val) - (a->val < b->val);
}

static int same_prefix(const struct hl_name *a, const struct hl_name *b)
{
	return a->plen == b->plen && memcmp(a->s, b->s, a->plen) == 0;
}

/* Numbers with the same prefix and digit count are padded to that count if
 * any of them has a leading zero (node001..node100: "node[001-100]");
 * else they print as they are, and merge across digit counts
 * (leaf1..leaf18: "leaf[1-18]"). h is sorted (hl_cmp). */
static void set_widths(struct hl_name *h, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		int padded = 0;
		while (j < n && h[j].ndig == h[i].ndig && same_prefix(&h[i], &h[j])) {
			padded |= h[j].ndig > 1 && h[j].s[h[j].plen] == '0';
			j++;
		}
		for (size_t k = i; k < j; k++)
			h[k].width = padded ? h[k].ndig : 0;
		i = j;
	}
}

static int hl_same_group(const struct hl_name *a, const struct hl_name *b)
{
	return a->ndig && b->ndig && a->width == b->width && same_prefix(a, b);
}

char *fb_hostlist_format(const char *const *names, size_t n)
{
	struct hl_name *h = calloc(n ? n : 1, sizeof(*h));
	struct fb_buf out = { 0 };
	int rc = 0;
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++)
		hl_split(names[i], &h[i]);
	qsort(h, n, sizeof(*h), hl_cmp);
	set_widths(h, n);
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i + 1;
		if (out.len)
			rc = fb_buf_put(&out, ",", 1);
		if (!h[i].ndig) {
			rc = rc ? rc : fb_buf_put(&out, h[i].s, strlen(h[i].s));
			while (j < n && strcmp(h[j].s, h[i].s) == 0)
				j++;
			i = j;
			continue;
		}
		while (j < n && hl_same_group(&h[i], &h[j]))
			j++;
		int w = (int)h[i].width;
		if (j - i == 1 || h[j - 1].val == h[i].val) {
			rc = rc ? rc : fb_buf_put(&out, h[i].s, strlen(h[i].s));
			i = j;
			continue;
		}
		rc = rc ? rc : fb_buf_printf(&out, "%.*s[", (int)h[i].plen, h[i].s);
		for (size_t k = i; k < j && !rc;) {
			size_t e = k;
			while (e + 1 < j && h[e + 1].val <= h[e].val + 1)
				e++; /* a run (duplicates included) */
			rc = fb_buf_printf(&out, "%s%0*" PRIu64, k > i ? "," : "", w, h[k].val);
			if (!rc && h[e].val != h[k].val)
				rc = fb_buf_printf(&out, "-%0*" PRIu64, w, h[e].val);
			k = e + 1;
		}
		rc = rc ? rc : fb_buf_put(&out, "]", 1);
		i = j;
	}
	free(h);
	if (!rc)
		rc = fb_buf_put(&out, "", 1);
	if (rc) {
		fb_buf_free(&out);
		return NULL;
	}
	return (char *)out.data;
}
