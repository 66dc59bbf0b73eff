/* rf_token.c - the bearer tokens file (rf_token.h). */
#include "rf_token.h"

#include "fb_err.h"
#include "fb_secret_file.h"
#include "rf_auth_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int name_ok(const char *s, size_t n)
{
	if (!n || n > FB_RF_USER_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && (!s[i] || !strchr("-_.@", s[i])))
			return 0;
	return 1;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* n bytes of hex (not NUL-terminated) into a digest. */
static int unhex(const char *s, size_t n, uint8_t *out)
{
	if (n != 2 * FB_RF_DIGEST_LEN)
		return -1;
	for (size_t i = 0; i < FB_RF_DIGEST_LEN; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* One "NAME:ROLE:SHA256HEX" (blanks around it already cut) into e. */
static int parse_line(const char *l, size_t n, struct fb_rf_bearer *e, char *why, size_t whysz)
{
	if (memchr(l, '\0', n))
		return fb_err_set(why, whysz, FB_ECONFIG, "a NUL byte in the line");
	const char *c1 = memchr(l, ':', n);
	const char *c2 = c1 ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - l)) : NULL;
	if (!c2)
		return fb_err_set(why, whysz, FB_ECONFIG, "expected NAME:ROLE:SHA256HEX");
	if (!name_ok(l, (size_t)(c1 - l)))
		return fb_err_set(why, whysz, FB_ECONFIG, "bad name (letters, digits, '-_.@', at most %d)",
				  FB_RF_USER_MAX);
	char role[32];
	snprintf(role, sizeof(role), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	if ((e->role = fb_rf_role_parse(role)) < 0)
		return fb_err_set(why, whysz, FB_ECONFIG,
				  "unknown role '%s' (Administrator, Operator or ReadOnly)", role);
	if (unhex(c2 + 1, n - (size_t)(c2 + 1 - l), e->digest))
		return fb_err_set(why, whysz, FB_ECONFIG, "expected the token's SHA-256 as 64 hex digits "
				  "(printf %%s \"$token\" | sha256sum)");
	snprintf(e->name, sizeof(e->name), "%.*s", (int)(c1 - l), l);
	return 0;
}

int fb_rf_bearers_parse(const char *text, size_t len, const char *origin,
			struct fb_rf_bearers *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	int lineno = 0;
	for (size_t pos = 0; pos < len;) {
		const char *l = text + pos, *nl = memchr(l, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - l) : len - pos;
		pos += n + 1;
		lineno++;
		const char *hash = memchr(l, '#', n);
		if (hash)
			n = (size_t)(hash - l);
		while (n && isspace((unsigned char)*l))
			l++, n--;
		while (n && isspace((unsigned char)l[n - 1]))
			n--;
		if (!n)
			continue;
		char why[160];
		struct fb_rf_bearer e;
		int rc = out->n == FB_RF_TOKENS_MAX
				 ? fb_err_set(why, sizeof(why), FB_ECONFIG, "more than %d tokens", FB_RF_TOKENS_MAX)
				 : parse_line(l, n, &e, why, sizeof(why));
		if (!rc && !(out->n % 16)) {
			struct fb_rf_bearer *v = realloc(out->v, (out->n + 16) * sizeof(*v));
			rc = v ? 0 : -ENOMEM;
			if (v)
				out->v = v;
			else
				snprintf(why, sizeof(why), "out of memory");
		}
		if (rc) {
			fb_rf_bearers_free(out);
			return fb_err_set(err, errsz, rc, "%s:%d: %s", origin, lineno, why);
		}
		out->v[out->n++] = e;
	}
	return 0;
}

int fb_rf_bearers_load(const char *path, struct fb_rf_bearers *out, char *err, size_t errsz)
{
	char *text;
	size_t len;
	memset(out, 0, sizeof(*out));
	int rc = fb_secret_file_read(path, "bearer token hashes", FB_RF_TOKENS_FILE_MAX, &text, &len,
				     err, errsz);
	if (rc)
		return rc;
	rc = fb_rf_bearers_parse(text, len, path, out, err, errsz);
	free(text);
	return rc;
}

void fb_rf_bearers_free(struct fb_rf_bearers *b)
{
	free(b->v);
	memset(b, 0, sizeof(*b));
}

const char *fb_rf_bearer_value(const char *authorization, size_t *len)
{
	if (strncasecmp(authorization, "Bearer ", 7) != 0)
		return NULL;
	const char *t = authorization + 7;
	t += strspn(t, " ");
	size_t n = strlen(t);
	while (n && (t[n - 1] == ' ' || t[n - 1] == '\t'))
		n--;
	*len = n;
	return t;
}

const struct fb_rf_bearer *fb_rf_bearer_find(const struct fb_rf_bearers *b, const char *token,
					     size_t len)
{
	uint8_t d[FB_RF_DIGEST_LEN];
	if (len < FB_RF_TOKEN_MIN || len > FB_RF_TOKEN_TEXT_MAX || fb_rf_digest(token, len, NULL, 0, d))
		return NULL;
	const struct fb_rf_bearer *hit = NULL;
	for (size_t i = 0; i < b->n; i++) /* every entry: the time does not tell which matched */
		if (fb_rf_equal(b->v[i].digest, d, sizeof(d)) && !hit)
			hit = &b->v[i];
	return hit;
}
