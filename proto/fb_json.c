/* fb_json.c - checked readers of jansson values (see fb_json.h). */
#include "fb_json.h"

#include "fb_err.h"
#include "fb_text.h"

#include <stdarg.h>
#include <string.h>

int fb_json_fail(char *err, size_t errsz, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = fb_err_vset(err, errsz, FB_EMALFORMED, fmt, ap);
	va_end(ap);
	return rc;
}

int fb_json_get_uint(const json_t *v, uint64_t max, int allow_str, uint64_t *out)
{
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < 0 || (uint64_t)i > max)
			return -1;
		*out = (uint64_t)i;
		return 0;
	}
	uint64_t x;
	if (!allow_str || !json_is_string(v) ||
	    fb_text_parse_u64(json_string_value(v), json_string_length(v), &x) || x > max)
		return -1;
	*out = x;
	return 0;
}

uint64_t fb_json_uint_max(size_t size)
{
	return size == 1 ? UINT8_MAX : size == 2 ? UINT16_MAX : size == 4 ? UINT32_MAX : UINT64_MAX;
}

int fb_json_get_uint_field(const json_t *v, void *dst, size_t size)
{
	uint64_t x;
	if (fb_json_get_uint(v, fb_json_uint_max(size), 0, &x))
		return -1;
	if (size == 1)
		*(uint8_t *)dst = (uint8_t)x;
	else if (size == 2)
		*(uint16_t *)dst = (uint16_t)x;
	else
		*(uint32_t *)dst = (uint32_t)x;
	return 0;
}

int fb_json_get_str(const json_t *v, char *dst, size_t dstsz)
{
	const char *s = json_string_value(v);
	if (!s)
		return FB_JSON_ETYPE;
	if (strlen(s) != json_string_length(v))
		return FB_JSON_EVALUE;
	return fb_strlcpy_field(dst, dstsz, s) ? FB_JSON_ELONG : 0;
}

static int has_counter(const struct fb_event *ev, uint16_t id)
{
	for (unsigned i = 0; i < ev->n_counters; i++)
		if (ev->counters[i].id == id)
			return 1;
	return 0;
}

int fb_json_get_counters(const json_t *v, struct fb_event *ev, const char **bad)
{
	const char *name;
	json_t *val;
	if (!json_is_object(v))
		return FB_JSON_ETYPE;
	json_object_foreach((json_t *)v, name, val) {
		uint16_t id;
		uint64_t x;
		*bad = name;
		if (fb_text_parse_counter(name, &id))
			return FB_JSON_ENAME;
		if (has_counter(ev, id)) /* "counter_7" and its name, say */
			return FB_JSON_ETWICE;
		if (fb_json_get_uint(val, UINT64_MAX, 1, &x))
			return FB_JSON_EVALUE;
		if (fb_event_add_counter(ev, id, x))
			return FB_JSON_ELONG;
	}
	return 0;
}

int fb_json_get_jobs(const json_t *v, char *jobs, size_t *at)
{
	size_t len = 0, i;
	json_t *item;
	jobs[0] = '\0';
	if (!json_is_array(v))
		return FB_JSON_ETYPE;
	json_array_foreach(v, i, item) {
		const char *s = json_string_value(item);
		size_t n = s ? json_string_length(item) : 0;
		*at = i;
		if (!n || strspn(s, "0123456789") != n) {
			jobs[0] = '\0';
			return FB_JSON_EVALUE;
		}
		if (len + (i > 0) + n >= FB_JOBS_MAX) {
			jobs[0] = '\0';
			return FB_JSON_ELONG;
		}
		if (i > 0)
			jobs[len++] = ',';
		memcpy(jobs + len, s, n + 1); /* with its NUL: jobs stays a string */
		len += n;
	}
	return 0;
}

int fb_json_parse_counters(const json_t *v, struct fb_event *ev, const char *where, char *err,
			   size_t errsz)
{
	const char *name = "";
	switch (fb_json_get_counters(v, ev, &name)) {
	case 0:
		return 0;
	case FB_JSON_ETYPE:
		return fb_json_fail(err, errsz, "%s: must be an object of counter name -> integer", where);
	case FB_JSON_ENAME:
		return fb_json_fail(err, errsz, "%s: unknown counter '%.64s'", where, name);
	case FB_JSON_ETWICE:
		return fb_json_fail(err, errsz, "%s: '%.64s' given twice", where, name);
	case FB_JSON_EVALUE:
		return fb_json_fail(err, errsz, "%s.%.64s: must be a non-negative integer", where, name);
	default:
		return fb_json_fail(err, errsz, "%s: more than %d counters", where, FB_COUNTERS_MAX);
	}
}

int fb_json_parse_jobs(const json_t *v, struct fb_event *ev, const char *where, char *err,
		       size_t errsz)
{
	size_t i = 0;
	switch (fb_json_get_jobs(v, ev->jobs, &i)) {
	case 0:
		return 0;
	case FB_JSON_ETYPE:
		return fb_json_fail(err, errsz,
				    "%s: must be an array of job id strings such as [\"123\",\"124\"]",
				    where);
	case FB_JSON_EVALUE:
		return fb_json_fail(err, errsz, "%s[%zu]: must be a non-empty string of decimal digits",
				    where, i);
	default:
		return fb_json_fail(err, errsz, "%s: longer than %d bytes joined with commas", where,
				    FB_JOBS_MAX - 1);
	}
}
