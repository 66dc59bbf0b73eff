/* rf_etag.c - see rf_etag.h. */
#include "rf_etag.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void fb_rf_etag(const void *p, size_t n, char out[FB_RF_ETAG_MAX])
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	snprintf(out, FB_RF_ETAG_MAX, "W/\"%016llx\"", (unsigned long long)h);
}

/* The opaque part of a tag ("abc" of W/"abc" or "abc"), as [*s, *s+*n). */
static void opaque(const char *t, size_t len, const char **s, size_t *n)
{
	if (len >= 2 && t[0] == 'W' && t[1] == '/') {
		t += 2;
		len -= 2;
	}
	if (len >= 2 && t[0] == '"' && t[len - 1] == '"') {
		t++;
		len -= 2;
	}
	*s = t;
	*n = len;
}

int fb_rf_etag_listed(const char *header, const char *etag)
{
	if (!header)
		return 0;
	const char *want;
	size_t want_n;
	opaque(etag, strlen(etag), &want, &want_n);
	const char *p = header;
	while (*p) {
		p += strspn(p, " \t,");
		size_t n = strcspn(p, ",");
		size_t m = n;
		while (m && (p[m - 1] == ' ' || p[m - 1] == '\t'))
			m--;
		if (m == 1 && p[0] == '*')
			return 1;
		const char *got;
		size_t got_n;
		opaque(p, m, &got, &got_n);
		if (m && got_n == want_n && memcmp(got, want, want_n) == 0)
			return 1;
		p += n;
	}
	return 0;
}
