/* fb_conf.c - line reading and value parsing for Key=Value configuration files. */
#include "fb_conf.h"

#include "fb_addr.h"
#include "fb_err.h"
#include "fb_log.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Split a number from its unit suffix; the suffix is returned lower-cased. */
static int split_number(const char *s, uint64_t *num, char *unit, size_t unitsz)
{
	if (!isdigit((unsigned char)*s))
		return FB_ECONFIG;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return FB_ECONFIG;
	size_t n = strlen(end);
	if (n >= unitsz)
		return FB_ECONFIG;
	for (size_t i = 0; i <= n; i++)
		unit[i] = (char)tolower((unsigned char)end[i]);
	*num = v;
	return 0;
}

static int scale(uint64_t v, uint64_t mul, uint64_t *out)
{
	if (mul && v > UINT64_MAX / mul)
		return FB_ECONFIG;
	*out = v * mul;
	return 0;
}

struct unit {
	const char *u;
	uint64_t mul;
};

static int parse_units(const char *s, const struct unit *units, size_t n, uint64_t *out)
{
	uint64_t v;
	char u[4];
	if (split_number(s, &v, u, sizeof(u)))
		return FB_ECONFIG;
	for (size_t i = 0; i < n; i++)
		if (strcmp(u, units[i].u) == 0)
			return scale(v, units[i].mul, out);
	return FB_ECONFIG;
}

int fb_conf_parse_size(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1 }, { "b", 1 }, { "k", 1ull << 10 }, { "kb", 1ull << 10 },
		{ "m", 1ull << 20 }, { "mb", 1ull << 20 }, { "g", 1ull << 30 }, { "gb", 1ull << 30 },
		{ "t", 1ull << 40 }, { "tb", 1ull << 40 },
	};
	return parse_units(s, units, sizeof(units) / sizeof(units[0]), out);
}

int fb_conf_parse_duration_ms(const char *s, uint64_t *out)
{
	static const struct unit units[] = {
		{ "", 1000 }, { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "min", 60000 },
		{ "h", 3600000 }, { "d", 86400000 },
	};
	return parse_units(s, units, sizeof(units) / sizeof(units[0]), out);
}

int fb_conf_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return FB_ECONFIG;
}

char *fb_conf_trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int fb_conf_split(char *line, char **key, char **val, const char *origin, char *err, size_t errsz)
{
	char *eq = strchr(line, '=');
	*key = *val = NULL; /* set whatever fb_err_set returns (gcc cannot see it is FB_ECONFIG) */
	if (!eq)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "%s: expected Key=Value, got '%.80s'", origin, line);
	*eq = '\0';
	*key = fb_conf_trim(line);
	*val = fb_conf_trim(eq + 1);
	if (!**key)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "%s: expected Key=Value, got no key before '='", origin);
	return 0;
}

int fb_conf_read_file(const char *path, fb_conf_line_fn fn, void *arg, char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "%s: cannot open: %s", path, strerror(errno));
	char *buf = malloc(FB_CONF_LINE_MAX); /* 4 KiB: not on the stack */
	if (!buf) {
		fclose(f);
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: out of memory", path);
	}
	int lineno = 0, rc = 0;
	while (!rc && fgets(buf, FB_CONF_LINE_MAX, f)) {
		lineno++;
		char origin[512];
		snprintf(origin, sizeof(origin), "%.480s:%d", path, lineno);
		if (!strchr(buf, '\n') && !feof(f)) {
			rc = fb_err_set(err, errsz, FB_ECONFIG,
					"%s: line too long (more than %d bytes)", origin,
					FB_CONF_LINE_MAX - 2);
			break;
		}
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *t = fb_conf_trim(buf), *key, *val;
		if (*t == '\0')
			continue;
		rc = fb_conf_split(t, &key, &val, origin, err, errsz);
		if (!rc)
			rc = fn(arg, key, val, origin, lineno, err, errsz);
	}
	if (!rc && ferror(f))
		rc = fb_err_set(err, errsz, FB_ECONFIG,
				"%s: read error: %s", path, strerror(errno));
	free(buf);
	fclose(f);
	return rc;
}

int fb_conf_set_hostport_list(char *dst, size_t dstsz, const char *v, char *why, size_t whysz)
{
	char buf[1024];
	if (strlen(v) >= sizeof(buf) || strlen(v) >= dstsz) {
		snprintf(why, whysz, "longer than %zu bytes", (dstsz < sizeof(buf) ? dstsz : sizeof(buf)) - 1);
		return FB_ECONFIG;
	}
	strcpy(buf, v);
	char *save = NULL;
	for (char *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
		char host[256];
		int port;
		while (*e == ' ')
			e++;
		if (fb_addr_parse(e, NULL, host, sizeof(host), &port)) {
			snprintf(why, whysz, "'%.80s': expected host:port[,host:port...]", e);
			return FB_ECONFIG;
		}
	}
	strcpy(dst, v);
	return 0;
}

void fb_conf_format_duration_ms(uint64_t ms, char *out, size_t outsz)
{
	if (ms % 1000 == 0)
		snprintf(out, outsz, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(out, outsz, "%" PRIu64 "ms", ms);
}

/* ---- the key-table engine ---- */

static int parse_count(const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return (errno || *end || end == v || v[0] == '-' || v[0] == '+') ? FB_ECONFIG : 0;
}

/* "expected a, b or c" from a NULL-terminated list. */
static int apply_enum(const struct fb_conf_key *k, int *dst, const char *v, char *why, size_t whysz)
{
	size_t n = 0, off;
	for (; k->names[n]; n++)
		if (strcasecmp(v, k->names[n]) == 0) {
			*dst = (int)n;
			return 0;
		}
	off = (size_t)snprintf(why, whysz, "expected");
	for (size_t i = 0; i < n && off < whysz; i++)
		off += (size_t)snprintf(why + off, whysz - off, "%s %s", i == 0 ? "" : i + 1 < n ? "," : " or",
					k->names[i]);
	return FB_ECONFIG;
}

static int apply_string(const struct fb_conf_key *k, char *dst, const char *v, char *why,
			size_t whysz)
{
	size_t n = strlen(v);
	/* "" of an EMPTY_OK key means unset/off: what ok judges is a set value. */
	int empty_ok = n == 0 && (k->flags & FB_CONF_EMPTY_OK);
	if ((n == 0 && !empty_ok) || n >= k->size || (!empty_ok && k->ok && !k->ok(v))) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* expect: a table constant with one %zu */
		snprintf(why, whysz, k->expect, k->size - 1);
#pragma GCC diagnostic pop
		return FB_ECONFIG;
	}
	memcpy(dst, v, n + 1);
	return 0;
}

/* What a number of key k must look like, into why. */
static int number_expected(const struct fb_conf_key *k, char *why, size_t whysz)
{
	char lo[32], hi[32];
	switch (k->type) {
	case FB_CONF_SIZE:
		return fb_err_set(why, whysz, FB_ECONFIG, "expected a size such as 64M between %" PRIu64
				  " and %" PRIu64, k->min, k->max);
	case FB_CONF_DURATION_MS:
		fb_conf_format_duration_ms(k->min, lo, sizeof(lo));
		fb_conf_format_duration_ms(k->max, hi, sizeof(hi));
		break;
	case FB_CONF_DURATION_S:
		snprintf(lo, sizeof(lo), "%" PRIu64 "s", k->min);
		snprintf(hi, sizeof(hi), "%" PRIu64 "s", k->max);
		break;
	default:
		return fb_err_set(why, whysz, FB_ECONFIG, "expected a whole number between %" PRIu64
				  " and %" PRIu64, k->min, k->max);
	}
	return fb_err_set(why, whysz, FB_ECONFIG, "expected a duration such as 500ms, 30s, 7d "
			  "between %s and %s", lo, hi);
}

/* Parse v for key k into cfg; on failure write what was expected into why. */
static int apply(const struct fb_conf_key *k, void *cfg, const char *v, char *why, size_t whysz)
{
	char *field = (char *)cfg + k->off;
	uint64_t num = 0;
	int rc = 0, iv;
	switch (k->type) {
	case FB_CONF_COUNT:
		rc = parse_count(v, &num);
		break;
	case FB_CONF_SIZE:
		rc = fb_conf_parse_size(v, &num);
		break;
	case FB_CONF_DURATION_MS:
		rc = fb_conf_parse_duration_ms(v, &num);
		break;
	case FB_CONF_DURATION_S:
		rc = fb_conf_parse_duration_ms(v, &num);
		num /= 1000;
		break;
	case FB_CONF_BOOL:
		if (fb_conf_parse_bool(v, &iv))
			return fb_err_set(why, whysz, FB_ECONFIG, "expected yes or no");
		*(int *)field = iv;
		return 0;
	case FB_CONF_ENUM:
		return apply_enum(k, (int *)field, v, why, whysz);
	case FB_CONF_LOGLEVEL:
		if ((iv = fb_log_level_parse(v)) < 0)
			return fb_err_set(why, whysz, FB_ECONFIG, "expected error, warn, info or debug");
		*(int *)field = iv;
		return 0;
	case FB_CONF_STRING:
		return apply_string(k, field, v, why, whysz);
	case FB_CONF_HOSTPORT:
		if (fb_addr_parse(v, NULL, field, k->size, (int *)((char *)cfg + k->off2)))
			return fb_err_set(why, whysz, FB_ECONFIG, "expected HOST:PORT with a port 1..65535");
		return 0;
	case FB_CONF_HOSTPORT_LIST:
		return fb_conf_set_hostport_list(field, k->size, v, why, whysz);
	case FB_CONF_CUSTOM:
		return k->parse(cfg, k, v, why, whysz);
	}
	if (rc || num < k->min || num > k->max)
		return number_expected(k, why, whysz);
	*(uint64_t *)field = num;
	return 0;
}

static const struct fb_conf_key *find_key(const struct fb_conf_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcasecmp(t->keys[i].key, name) == 0)
			return &t->keys[i];
	return NULL;
}

/* Where an error happened, as its message starts: "path:3: " for a file
 * line, "-o " or "-o: " for an option (fb_conf_table.option_names_key). */
static const char *where_sep(const struct fb_conf_table *t, int from_file)
{
	return from_file || !t->option_names_key ? ": " : " ";
}

static int set_prop(const struct fb_conf_table *t, void *cfg, const char *name, const char *val,
		    const char *origin, int from_file, char *err, size_t errsz)
{
	const struct fb_conf_props *pp = &t->props;
	const char *sep = where_sep(t, from_file), *pfx = pp->prefix;
	char *arr = (char *)cfg + pp->off, *p = NULL, why[512];
	unsigned *n = (unsigned *)((char *)cfg + pp->count_off);
	if (!*name || strlen(name) >= pp->name_size || strlen(val) >= pp->value_size)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s%s%s%.64s: name or value too long (at "
				  "most %zu and %zu bytes)", origin, sep, pfx, name, pp->name_size - 1,
				  pp->value_size - 1);
	if (pp->check && pp->check(name, val, why, sizeof(why)))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s%s%s%s%s", origin, sep, pfx, name, why);
	for (unsigned i = 0; i < *n; i++)
		if (strcmp(arr + i * pp->stride, name) == 0)
			p = arr + i * pp->stride;
	if (p && from_file)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s%s%s%s is set twice", origin, sep, pfx,
				  name);
	if (!p) {
		if (*n == pp->max)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s%stoo many %s* properties (at "
					  "most %u)", origin, sep, pfx, pp->max);
		p = arr + (*n)++ * pp->stride;
		strcpy(p, name);
	}
	strcpy(p + pp->value_off, val);
	return 0;
}

/* Apply one Key=Value. seen (file loads only) holds the line each key was
 * set on, to refuse a second setting. */
static int set_kv(const struct fb_conf_table *t, void *cfg, const char *key, const char *val,
		  const char *origin, int *seen, int lineno, char *err, size_t errsz)
{
	const char *pfx = t->props.prefix, *sep = where_sep(t, seen != NULL);
	if (pfx && strncasecmp(key, pfx, strlen(pfx)) == 0)
		return set_prop(t, cfg, key + strlen(pfx), val, origin, seen != NULL, err, errsz);
	const struct fb_conf_key *k = find_key(t, key);
	if (!k && !seen && t->option_names_key)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s %.64s: unknown key (see %s)", origin,
				  key, t->see);
	if (!k)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: unknown key '%.64s' (see %s)", origin,
				  key, t->see);
	size_t i = (size_t)(k - t->keys);
	if (seen && seen[i] && !(k->flags & FB_CONF_REPEAT))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: %s is set twice (first at line %d)",
				  origin, k->key, seen[i]);
	char why[200];
	if (apply(k, cfg, val, why, sizeof(why)))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s%s%s: bad value '%.80s': %s", origin, sep,
				  k->key, val, why);
	if (seen)
		seen[i] = lineno;
	return 0;
}

int fb_conf_apply_defaults(const struct fb_conf_table *t, void *cfg, char *err, size_t errsz)
{
	char why[200];
	for (size_t i = 0; i < t->n; i++)
		if (t->keys[i].def && apply(&t->keys[i], cfg, t->keys[i].def, why, sizeof(why)))
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: bad value '%s': %s",
					  t->keys[i].key, t->keys[i].def, why);
	return 0;
}

struct load_ctx {
	const struct fb_conf_table *t;
	void *cfg;
	int *seen;
};

static int load_line(void *arg, const char *key, const char *val, const char *origin, int lineno,
		     char *err, size_t errsz)
{
	struct load_ctx *x = arg;
	return set_kv(x->t, x->cfg, key, val, origin, x->seen, lineno, err, errsz);
}

int fb_conf_load_file(const struct fb_conf_table *t, void *cfg, const char *path, char *err,
		      size_t errsz)
{
	struct load_ctx x = { t, cfg, calloc(t->n ? t->n : 1, sizeof(int)) };
	if (!x.seen)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: out of memory", path);
	int rc = fb_conf_read_file(path, load_line, &x, err, errsz);
	free(x.seen);
	return rc;
}

int fb_conf_set(const struct fb_conf_table *t, void *cfg, const char *key, const char *val,
		const char *origin, char *err, size_t errsz)
{
	return set_kv(t, cfg, key, val, origin, NULL, 0, err, errsz);
}

int fb_conf_set_option(const struct fb_conf_table *t, void *cfg, const char *keyval,
		       const char *origin, char *err, size_t errsz)
{
	char line[FB_CONF_LINE_MAX], *key, *val;
	if (strlen(keyval) >= sizeof(line))
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: option too long", origin);
	strcpy(line, keyval);
	int rc = fb_conf_split(line, &key, &val, origin, err, errsz);
	return rc ? rc : fb_conf_set(t, cfg, key, val, origin, err, errsz);
}

void fb_conf_help(const struct fb_conf_table *t, FILE *f)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct fb_conf_key *k = &t->keys[i];
		if (k->def)
			fprintf(f, "    %s=%s\n        %s\n", k->key, k->def, k->help);
		else
			fprintf(f, "  %-20s %s\n", k->key, k->help);
	}
}

/* One key's value as a file takes it back into out. */
static void format_value(const struct fb_conf_key *k, const void *cfg, char *out, size_t outsz)
{
	static const char *const levels[] = { "error", "warn", "info", "debug" };
	const char *field = (const char *)cfg + k->off;
	out[0] = '\0';
	switch (k->type) {
	case FB_CONF_COUNT:
	case FB_CONF_SIZE:
		snprintf(out, outsz, "%" PRIu64, *(const uint64_t *)field);
		break;
	case FB_CONF_DURATION_MS:
		fb_conf_format_duration_ms(*(const uint64_t *)field, out, outsz);
		break;
	case FB_CONF_DURATION_S:
		snprintf(out, outsz, "%" PRIu64 "s", *(const uint64_t *)field);
		break;
	case FB_CONF_BOOL:
		snprintf(out, outsz, "%s", *(const int *)field ? "yes" : "no");
		break;
	case FB_CONF_ENUM:
		snprintf(out, outsz, "%s", k->names[*(const int *)field]);
		break;
	case FB_CONF_LOGLEVEL:
		snprintf(out, outsz, "%s", levels[*(const int *)field & 3]);
		break;
	case FB_CONF_STRING:
	case FB_CONF_HOSTPORT_LIST:
		snprintf(out, outsz, "%s", field);
		break;
	case FB_CONF_HOSTPORT: /* an IPv6 host goes back in brackets (fb_addr_parse) */
		snprintf(out, outsz, strchr(field, ':') ? "[%s]:%d" : "%s:%d", field,
			 *(const int *)((const char *)cfg + k->off2));
		break;
	case FB_CONF_CUSTOM:
		k->format(cfg, k, out, outsz);
		break;
	}
}

void fb_conf_print(const struct fb_conf_table *t, const void *cfg, FILE *f)
{
	char val[FB_CONF_LINE_MAX];
	for (size_t i = 0; i < t->n; i++) {
		const struct fb_conf_key *k = &t->keys[i];
		if ((k->flags & FB_CONF_REPEAT) || (k->type == FB_CONF_CUSTOM && !k->format))
			continue;
		format_value(k, cfg, val, sizeof(val));
		fprintf(f, "%s=%s\n", k->key, val);
	}
	if (t->props.prefix)
		fb_conf_print_props(t, cfg, f);
}

void fb_conf_print_props(const struct fb_conf_table *t, const void *cfg, FILE *f)
{
	const struct fb_conf_props *pp = &t->props;
	const char *arr = (const char *)cfg + pp->off;
	unsigned n = *(const unsigned *)((const char *)cfg + pp->count_off);
	for (unsigned i = 0; i < n; i++) {
		const char *name = arr + i * pp->stride;
		int secret = strstr(name, "password") || strstr(name, "secret");
		fprintf(f, "%s%s=%s\n", pp->prefix, name, secret ? "(hidden)" : name + pp->value_off);
	}
}
