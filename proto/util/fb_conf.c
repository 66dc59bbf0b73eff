/* fb_conf.c - line reading and value parsing for Key=Value configuration files. */
#include "fb_conf.h"

#include "fb_addr.h"

#include "fb_err.h"

#include <ctype.h>
#include <errno.h>
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
	if (!eq) {
		snprintf(err, errsz, "%s: expected Key=Value, got '%.80s'", origin, line);
		return FB_ECONFIG;
	}
	*eq = '\0';
	*key = fb_conf_trim(line);
	*val = fb_conf_trim(eq + 1);
	if (!**key) {
		snprintf(err, errsz, "%s: expected Key=Value, got no key before '='", origin);
		return FB_ECONFIG;
	}
	return 0;
}

int fb_conf_read_file(const char *path, fb_conf_line_fn fn, void *arg, char *err, size_t errsz)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errsz, "%s: cannot open: %s", path, strerror(errno));
		return FB_ECONFIG;
	}
	char *buf = malloc(FB_CONF_LINE_MAX); /* 4 KiB: not on the stack */
	if (!buf) {
		fclose(f);
		snprintf(err, errsz, "%s: out of memory", path);
		return FB_ECONFIG;
	}
	int lineno = 0, rc = 0;
	while (!rc && fgets(buf, FB_CONF_LINE_MAX, f)) {
		lineno++;
		char origin[512];
		snprintf(origin, sizeof(origin), "%.480s:%d", path, lineno);
		if (!strchr(buf, '\n') && !feof(f)) {
			snprintf(err, errsz, "%s: line too long (more than %d bytes)", origin,
				 FB_CONF_LINE_MAX - 2);
			rc = FB_ECONFIG;
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
	if (!rc && ferror(f)) {
		snprintf(err, errsz, "%s: read error: %s", path, strerror(errno));
		rc = FB_ECONFIG;
	}
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
