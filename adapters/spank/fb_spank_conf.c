/* fb_spank_conf.c - parse the plugin's plugstack.conf arguments. */
#include "fb_spank_conf.h"

#include "fb_addr.h"
#include "fb_err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KNOWN "broker, timeout, fail_on_down, on_unreachable, mapdir, register, token_file, " \
	"tls_ca"

void fb_spank_conf_defaults(struct fb_spank_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->host, sizeof(c->host), "%s", FB_SPANK_DEFAULT_HOST);
	c->port = FB_SPANK_DEFAULT_PORT;
	snprintf(c->broker, sizeof(c->broker), "%s:%d", FB_SPANK_DEFAULT_HOST,
		 FB_SPANK_DEFAULT_PORT);
	c->timeout_ms = FB_SPANK_DEFAULT_TIMEOUT_MS;
	c->fail_on_down = 0;
	c->fail_unreachable = 0;
	c->do_register = 1;
	snprintf(c->mapdir, sizeof(c->mapdir), "%s", FB_SPANK_DEFAULT_MAPDIR);
}

/* yes/no (also true/false, 1/0) into *out: 0, or -1 (*out unchanged).
 * Narrower than fb_conf_parse_bool (on/off, any case) on purpose: the
 * plugin refuses what its documentation does not list. */
static int parse_bool(int *out, const char *v)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int parse_broker(struct fb_spank_conf *c, const char *v)
{
	char host[sizeof(c->host)];
	int port = 0;
	if (strlen(v) >= sizeof(c->broker))
		return -1;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return -1; /* it goes into log lines and the map file */
	if (fb_addr_parse(v, NULL, host, sizeof(host), &port) != 0)
		return -1;
	memcpy(c->host, host, sizeof(host));
	c->port = (uint16_t)port;
	snprintf(c->broker, sizeof(c->broker), "%s", v);
	return 0;
}

static int parse_timeout(struct fb_spank_conf *c, const char *v)
{
	char *end;
	if (*v < '0' || *v > '9')
		return -1;
	errno = 0;
	long ms = strtol(v, &end, 10);
	if (*end || errno || ms < 1 || ms > FB_SPANK_MAX_TIMEOUT_MS)
		return -1;
	c->timeout_ms = (int)ms;
	return 0;
}

/* An absolute file path of printable bytes (it goes into log lines). */
static int parse_path(char *out, size_t outsz, const char *v)
{
	size_t n = strlen(v);
	if (n == 0 || v[0] != '/' || n >= outsz)
		return -1;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f)
			return -1;
	memcpy(out, v, n + 1);
	return 0;
}

/* An absolute directory; a trailing '/' is dropped so that file names join
 * cleanly ("/" itself stays "/"). */
static int parse_mapdir(struct fb_spank_conf *c, const char *v)
{
	if (parse_path(c->mapdir, sizeof(c->mapdir), v) < 0)
		return -1;
	size_t n = strlen(c->mapdir);
	while (n > 1 && c->mapdir[n - 1] == '/')
		c->mapdir[--n] = '\0';
	return 0;
}

enum { K_BROKER, K_TIMEOUT, K_FAIL_ON_DOWN, K_ON_UNREACHABLE, K_MAPDIR, K_REGISTER,
       K_TOKEN_FILE, K_TLS_CA, K__N };
static const char *const keys[K__N] = {
	[K_BROKER] = "broker", [K_TIMEOUT] = "timeout", [K_FAIL_ON_DOWN] = "fail_on_down",
	[K_ON_UNREACHABLE] = "on_unreachable", [K_MAPDIR] = "mapdir", [K_REGISTER] = "register",
	[K_TOKEN_FILE] = "token_file", [K_TLS_CA] = "tls_ca",
};

/* The key's index, or -1. */
static int key_index(const char *key, size_t klen)
{
	for (int k = 0; k < K__N; k++)
		if (strlen(keys[k]) == klen && memcmp(keys[k], key, klen) == 0)
			return k;
	return -1;
}

/* Returns 0, or -1 for a bad value with *want saying what is wanted. */
static int apply(struct fb_spank_conf *c, int k, const char *v, const char **want)
{
	switch (k) {
	case K_BROKER:
		*want = "HOST:PORT or [IPV6]:PORT, port 1..65535";
		return parse_broker(c, v);
	case K_TIMEOUT:
		*want = "milliseconds, 1..60000";
		return parse_timeout(c, v);
	case K_FAIL_ON_DOWN:
		*want = "yes or no";
		return parse_bool(&c->fail_on_down, v);
	case K_ON_UNREACHABLE:
		*want = "continue or fail";
		if (!strcmp(v, "continue"))
			c->fail_unreachable = 0;
		else if (!strcmp(v, "fail"))
			c->fail_unreachable = 1;
		else
			return -1;
		return 0;
	case K_MAPDIR:
		*want = "an absolute directory path";
		return parse_mapdir(c, v);
	case K_REGISTER:
		*want = "yes or no";
		return parse_bool(&c->do_register, v);
	case K_TOKEN_FILE:
		*want = "an absolute file path";
		return parse_path(c->token_file, sizeof(c->token_file), v);
	case K_TLS_CA:
		*want = "an absolute file path";
		return parse_path(c->tls_ca, sizeof(c->tls_ca), v);
	default:
		*want = "a known key";
		return -1;
	}
}

int fb_spank_conf_parse(struct fb_spank_conf *c, int argc, char *const argv[], char *err,
			size_t errsz)
{
	unsigned seen = 0;
	fb_spank_conf_defaults(c);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i] ? argv[i] : "";
		const char *eq = strchr(a, '=');
		const char *want = NULL;
		if (!eq || eq == a) {
			fb_err_set(err, errsz, FB_ECONFIG,
				   "malformed argument '%s': want key=value (keys: %s)", a,
				   KNOWN);
			goto fail;
		}
		int k = key_index(a, (size_t)(eq - a));
		if (k < 0) {
			fb_err_set(err, errsz, FB_ECONFIG,
				   "unknown argument '%s' (known: %s)", a, KNOWN);
			goto fail;
		}
		unsigned bit = 1u << k;
		if (seen & bit) {
			fb_err_set(err, errsz, FB_ECONFIG,
				   "argument '%.*s' given twice (at '%s')", (int)(eq - a),
				   a, a);
			goto fail;
		}
		seen |= bit;
		int rc = apply(c, k, eq + 1, &want);
		if (rc < 0) {
			fb_err_set(err, errsz, FB_ECONFIG, "bad value in '%s': want %s", a, want);
			goto fail;
		}
	}
	return 0;
fail:
	fb_spank_conf_defaults(c);
	return FB_ECONFIG;
}
