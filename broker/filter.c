#include "filter.h"

#include "fb_err.h"
#include "fb_event.h"

#include <stdlib.h>
#include <stdint.h>
#include <string.h>

void fb_filter_init(struct fb_filter *f) { memset(f, 0, sizeof(*f)); }

/* Strictly decimal: no sign, no spaces, no hex, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	if (!*s)
		return -1;
	uint64_t v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* Split a comma list in place and hand each non-empty element to fn. */
typedef int (*elem_fn)(struct fb_filter *f, const char *elem, const char **why);

static int for_each_elem(struct fb_filter *f, char *list, elem_fn fn, const char *empty,
			 const char **why)
{
	int seen = 0;
	char *save = NULL;
	for (char *e = strtok_r(list, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		int rc = fn(f, e, why);
		if (rc)
			return rc;
		seen = 1;
	}
	if (!seen) {
		*why = empty;
		return FB_EMALFORMED;
	}
	return 0;
}

static int add_prefix(struct fb_filter *f, const char *e, const char **why)
{
	if (f->n_prefix >= FB_FILTER_PREFIXES) {
		*why = "prefix: too many prefixes (at most 8)";
		return FB_ETOOBIG;
	}
	if (fb_strlcpy_field(f->prefix[f->n_prefix], sizeof(f->prefix[0]), e)) {
		*why = "prefix: longer than 127 bytes";
		return FB_ETOOBIG;
	}
	f->n_prefix++;
	return 0;
}

static int add_severity(struct fb_filter *f, const char *e, const char **why)
{
	int s = fb_severity_parse(e);
	if (s < 0) {
		*why = "severity: expected OK, Warning or Critical";
		return FB_EMALFORMED;
	}
	f->sev_mask |= 1u << s;
	return 0;
}

/* MessageIds and Redfish paths are printable ASCII; anything else (a
 * non-UTF-8 byte) would also make the filter's JSON in /status invalid. */
static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

int fb_filter_arg(struct fb_filter *f, const char *arg, const char **why)
{
	static const char *const names[] = { "since", "prefix", "severity", "origin", "quiet", "all" };
	char buf[FB_FILTER_ARG_MAX];
	const char *eq = strchr(arg, '=');
	size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
	int which = -1;
	for (int i = 0; i < 6; i++)
		if (strlen(names[i]) == nlen && memcmp(arg, names[i], nlen) == 0)
			which = i;
	if (which < 0)
		return 0; /* unknown parameter: ignored */

	static const char *const toolong[] = { "since: value too long", "prefix: value too long",
					       "severity: value too long", "origin: value too long",
					       "quiet: value too long", "all: value too long" };
	static const char *const empty[] = { "since: missing value", "prefix: missing value",
					     "severity: missing value", "origin: missing value",
					     "quiet: missing value", "all: missing value" };
	const char *val = eq ? eq + 1 : "";
	if (strlen(val) >= sizeof(buf)) {
		*why = toolong[which];
		return FB_ETOOBIG;
	}
	memcpy(buf, val, strlen(val) + 1);
	if (!buf[0]) {
		*why = empty[which];
		return FB_EMALFORMED;
	}
	if ((which == 1 || which == 3) && !printable(buf)) {
		*why = which == 1 ? "prefix: only printable ASCII without spaces"
				  : "origin: only printable ASCII without spaces";
		return FB_EMALFORMED;
	}

	switch (which) {
	case 0:
		if (parse_u64(buf, &f->since)) {
			*why = "since: expected an EventId (decimal, 0..2^64-1)";
			return FB_EMALFORMED;
		}
		f->has_since = 1;
		return 0;
	case 1:
		return for_each_elem(f, buf, add_prefix, empty[1], why);
	case 2:
		return for_each_elem(f, buf, add_severity, empty[2], why);
	case 4:
	case 5:
		if (strcmp(buf, "0") && strcmp(buf, "1")) {
			*why = which == 4 ? "quiet: expected 0 or 1" : "all: expected 0 or 1";
			return FB_EMALFORMED;
		}
		f->quiet = buf[0] == '1';
		return 0;
	default:
		if (buf[0] != '/') {
			*why = "origin: expected a path starting with /redfish/v1/";
			return FB_EMALFORMED;
		}
		if (fb_strlcpy_field(f->origin, sizeof(f->origin), buf)) {
			*why = toolong[3];
			return FB_ETOOBIG;
		}
		return 0;
	}
}

/* A prefix that ends inside a path segment only matches that whole segment:
 * ".../Switches/sw1" matches ".../Switches/sw1/Ports/3" but not ".../sw10". */
static int origin_match(const char *want, const char *origin)
{
	size_t n = strlen(want);
	if (strncmp(origin, want, n) != 0)
		return 0;
	return want[n - 1] == '/' || origin[n] == '\0' || origin[n] == '/';
}

int fb_filter_match(const struct fb_filter *f, const char *message_id, unsigned severity,
		       const char *origin)
{
	if (f->sev_mask && (severity >= 32 || !(f->sev_mask & (1u << severity))))
		return 0;
	if (f->n_prefix) {
		unsigned i;
		for (i = 0; i < f->n_prefix; i++)
			if (strncmp(message_id, f->prefix[i], strlen(f->prefix[i])) == 0)
				break;
		if (i == f->n_prefix)
			return 0;
	}
	if (f->origin[0] && !(origin && origin_match(f->origin, origin)))
		return 0;
	return 1;
}

int fb_filter_json(const struct fb_filter *f, struct fb_buf *out)
{
	int rc = fb_buf_puts(out, "{");
	const char *sep = "";
	if (!rc && f->has_since) {
		rc = fb_buf_puts(out, "\"since\":");
		/* Past INT64_MAX most JSON readers (jansson: fabricbus status)
		 * refuse the whole document; such a since is "after everything"
		 * anyway, as INT64_MAX is. */
		if (!rc)
			rc = fb_buf_put_uint(out, f->since > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX
										: f->since);
		sep = ",";
	}
	if (!rc && f->n_prefix) {
		rc = fb_buf_printf(out, "%s\"prefix\":[", sep);
		for (unsigned i = 0; !rc && i < f->n_prefix; i++) {
			if (i)
				rc = fb_buf_puts(out, ",");
			if (!rc)
				rc = fb_buf_put_json_str(out, f->prefix[i]);
		}
		if (!rc)
			rc = fb_buf_puts(out, "]");
		sep = ",";
	}
	if (!rc && f->sev_mask) {
		rc = fb_buf_printf(out, "%s\"severity\":[", sep);
		const char *c = "";
		for (unsigned s = 0; !rc && s < FB_SEV__END; s++) {
			if (!(f->sev_mask & (1u << s)))
				continue;
			rc = fb_buf_printf(out, "%s\"%s\"", c, fb_severity_name(s));
			c = ",";
		}
		if (!rc)
			rc = fb_buf_puts(out, "]");
		sep = ",";
	}
	if (!rc && f->origin[0]) {
		rc = fb_buf_printf(out, "%s\"origin\":", sep);
		if (!rc)
			rc = fb_buf_put_json_str(out, f->origin);
		sep = ",";
	}
	if (!rc && f->quiet)
		rc = fb_buf_printf(out, "%s\"quiet\":true", sep);
	return rc ? rc : fb_buf_puts(out, "}");
}
