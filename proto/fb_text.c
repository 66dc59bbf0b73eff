/* fb_text.c - parsing the text forms of event values (see fb_text.h). */
#include "fb_text.h"

#include "fb_event.h"

#include <strings.h>

int fb_text_parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 0)
		return -1;
	uint64_t acc = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || acc > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		acc = acc * 10 + (uint64_t)(s[i] - '0');
	}
	*out = acc;
	return 0;
}

int fb_text_parse_guid(const char *s, size_t n, uint64_t *out)
{
	if (n < 3 || n > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	uint64_t acc = 0;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		acc = acc << 4 | d;
	}
	*out = acc;
	return 0;
}

/* Days since 1970-01-01 of a proleptic-Gregorian date (y >= 1). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = y / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char **p, int n, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++, (*p)++) {
		if (**p < '0' || **p > '9')
			return -1;
		v = v * 10 + (unsigned)(**p - '0');
	}
	*out = v;
	return 0;
}

int fb_text_parse_time(const char *s, uint64_t *ts_ns)
{
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned y, mo, d, h, mi, sec, oh = 0, om = 0;
	const char *p = s;
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || (*p != 'T' && *p != 't' && *p != ' ') || !*p++ ||
	    digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
	    digits(&p, 2, &sec))
		return -1;
	if (y < 1970)
		return -1;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || sec > 60)
		return -1;
	uint64_t frac = 0;
	if (*p == '.') {
		int n = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, n++)
			if (n < 9)
				frac = frac * 10 + (uint64_t)(*p - '0');
		if (n == 0)
			return -1;
		for (; n < 9; n++)
			frac *= 10;
	}
	int sign = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
			return -1;
	} else {
		return -1;
	}
	if (*p)
		return -1;
	int64_t t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (int64_t)(oh * 3600 + om * 60);
	if (t < 0 || (uint64_t)t > (UINT64_MAX - frac) / 1000000000u)
		return -1;
	*ts_ns = (uint64_t)t * 1000000000u + frac;
	return 0;
}

int fb_text_parse_counter(const char *name, uint16_t *id)
{
	int v = fb_counter_parse(name);
	if (v > 0) {
		*id = (uint16_t)v;
		return 0;
	}
	if (strncasecmp(name, "counter_", 8) != 0 || !name[8])
		return -1;
	unsigned long n = 0;
	for (const char *p = name + 8; *p; p++) {
		if (*p < '0' || *p > '9' || n > 65535)
			return -1;
		n = n * 10 + (unsigned long)(*p - '0');
	}
	if (n == 0 || n > 65535 || fb_counter_name((unsigned)n))
		return -1; /* named ids must use their name */
	*id = (uint16_t)n;
	return 0;
}

int fb_text_is_name(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}
