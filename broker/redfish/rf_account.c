/* rf_account.c - the accounts file and password verification (see
 * rf_account.h). */
#include "rf_account.h"

#include "fb_err.h"
#include "fb_secret_file.h"
#include "rf_auth_priv.h"

#include <crypt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What an unknown user is checked against, so that a wrong name costs as
 * much as a wrong password (a yescrypt hash of a throwaway string). */
static const char dummy_hash[] = "$y$j9T$7eJflZv34CTq/dvZ8mn8I/$nBOL9ipSu5P/KEpzBH1cIqg8cHJYgGUuzHUDRVEiXf7";

static const char *const hash_prefixes[] = { "$y$", "$gy$", "$7$", "$6$", "$5$", "$2b$", "$2y$",
					     NULL };

int fb_rf_user_valid(const char *user)
{
	size_t n = strlen(user);
	if (n == 0 || n > FB_RF_USER_MAX || user[0] == '.' || user[0] == '-')
		return 0;
	return strspn(user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int hash_valid(const char *h)
{
	size_t n = strlen(h);
	if (n == 0 || n > FB_RF_HASH_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) /* crypt(3) output: printable, no ':' */
		if (h[i] <= 0x20 || h[i] >= 0x7f || h[i] == ':')
			return 0;
	for (int i = 0; hash_prefixes[i]; i++)
		if (strncmp(h, hash_prefixes[i], strlen(hash_prefixes[i])) == 0)
			return 1;
	return 0;
}

/* One "USER:ROLE:HASH" line (NUL-terminated, no newline) into a. */
static int parse_line(char *line, const char *origin, int lineno, struct fb_rf_account *a,
		      char *err, size_t errsz)
{
	char *role = strchr(line, ':');
	char *hash = role ? strchr(role + 1, ':') : NULL;
	if (!hash)
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: expected USER:ROLE:HASH (make "
				  "lines with fabricbus passwd)", origin, lineno);
	*role++ = '\0';
	*hash++ = '\0';
	char *flag = strchr(hash, ':');
	if (flag) {
		*flag++ = '\0';
		if (strcmp(flag, "0") != 0)
			return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: user %s: the fourth field "
					  "may only be 0 (password change required)", origin, lineno,
					  line);
		a->pw_change = 1;
	}
	if (!fb_rf_user_valid(line))
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: bad user name: want 1 to %d of "
				  "A-Z a-z 0-9 . _ - (not starting with . or -)", origin, lineno,
				  FB_RF_USER_MAX);
	a->role = fb_rf_role_parse(role);
	if (a->role < 0)
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: user %s: role must be "
				  "Administrator, Operator or ReadOnly", origin, lineno, line);
	a->enabled = hash[0] != '!';
	if (!a->enabled)
		hash++;
	if (!hash_valid(hash))
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: user %s: the password is not a "
				  "crypt(3) hash ($y$, $6$, ...); make it with fabricbus passwd",
				  origin, lineno, line);
	memcpy(a->user, line, strlen(line) + 1);
	memcpy(a->hash, hash, strlen(hash) + 1);
	return 0;
}

static int add_line(struct fb_rf_accounts *out, char *line, const char *origin, int lineno,
		    char *err, size_t errsz)
{
	struct fb_rf_account a;
	memset(&a, 0, sizeof(a));
	int rc = parse_line(line, origin, lineno, &a, err, errsz);
	if (rc)
		return rc;
	if (fb_rf_account_find(out, a.user))
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: user %s is listed twice", origin,
				  lineno, a.user);
	if (out->n == FB_RF_ACCOUNTS_MAX)
		return fb_err_set(err, errsz, FB_ETOOBIG, "%s:%d: more than %d accounts", origin,
				  lineno, FB_RF_ACCOUNTS_MAX);
	struct fb_rf_account *v = realloc(out->v, (out->n + 1) * sizeof(*v));
	if (!v)
		return fb_err_set(err, errsz, -ENOMEM, "%s: out of memory", origin);
	out->v = v;
	v[out->n++] = a;
	return 0;
}

int fb_rf_accounts_parse(const char *text, size_t len, const char *origin,
			 struct fb_rf_accounts *out, char *err, size_t errsz)
{
	char line[FB_RF_USER_MAX + FB_RF_HASH_MAX + 64];
	int lineno = 0, rc = 0;
	memset(out, 0, sizeof(*out));
	for (size_t pos = 0; pos < len && !rc;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *s = text + pos;
		pos += n + 1;
		lineno++;
		if (n && s[n - 1] == '\r')
			n--;
		while (n && (*s == ' ' || *s == '\t'))
			s++, n--;
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
			n--;
		if (n == 0 || *s == '#')
			continue;
		if (n >= sizeof(line) || memchr(s, '\0', n))
			rc = fb_err_set(err, errsz, FB_EMALFORMED, "%s:%d: %s", origin, lineno,
					n >= sizeof(line) ? "line too long" : "NUL byte in line");
		else {
			memcpy(line, s, n);
			line[n] = '\0';
			rc = add_line(out, line, origin, lineno, err, errsz);
		}
	}
	if (!rc)
		rc = fb_rf_random(out->pepper, sizeof(out->pepper));
	if (rc)
		fb_rf_accounts_free(out);
	return rc;
}

int fb_rf_accounts_load(const char *path, struct fb_rf_accounts *out, char *err, size_t errsz)
{
	char *text;
	size_t len;
	memset(out, 0, sizeof(*out));
	int rc = fb_secret_file_read(path, "password hashes", FB_RF_ACCOUNTS_FILE_MAX, &text, &len,
				     err, errsz);
	if (rc)
		return rc;
	rc = fb_rf_accounts_parse(text, len, path, out, err, errsz);
	free(text);
	return rc;
}

void fb_rf_accounts_free(struct fb_rf_accounts *a)
{
	if (a->v)
		memset(a->v, 0, a->n * sizeof(*a->v)); /* hashes and verified digests */
	free(a->v);
	memset(a, 0, sizeof(*a));
}

struct fb_rf_account *fb_rf_account_find(const struct fb_rf_accounts *a, const char *user)
{
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].user, user) == 0)
			return &a->v[i];
	return NULL;
}

int fb_rf_password_check(const char *hash, const char *password)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return 0;
	const char *out = crypt_rn(password, hash, cd, (int)sizeof(*cd));
	size_t n = strlen(hash);
	int ok = out && out[0] != '*' && strlen(out) == n && fb_rf_equal(out, hash, n);
	memset(cd, 0, sizeof(*cd)); /* it held the password */
	free(cd);
	return ok;
}

int fb_rf_account_verify(struct fb_rf_accounts *a, const char *user, const char *password,
			 uint64_t now_ms, const struct fb_rf_account **acct)
{
	uint8_t d[FB_RF_DIGEST_LEN];
	struct fb_rf_account *ac = fb_rf_account_find(a, user);
	if (acct)
		*acct = NULL;
	if (!ac) {
		fb_rf_password_check(dummy_hash, password);
		return FB_RF_VERIFY_BAD;
	}
	if (fb_rf_digest(a->pepper, sizeof(a->pepper), password, strlen(password), d) != 0)
		return FB_RF_VERIFY_BAD;
	int ok = now_ms < ac->verified_until_ms && fb_rf_equal(d, ac->verified, sizeof(d));
	if (!ok && fb_rf_password_check(ac->hash, password)) {
		ok = 1;
		memcpy(ac->verified, d, sizeof(d));
		ac->verified_until_ms = now_ms + FB_RF_VERIFIED_TTL_MS;
	}
	if (!ok || !ac->enabled)
		return FB_RF_VERIFY_BAD;
	if (acct)
		*acct = ac;
	return FB_RF_VERIFY_OK;
}

int fb_rf_password_hash(const char *password, const char *prefix, char *out, size_t outsz)
{
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	size_t n = strlen(password);
	if (n < FB_RF_PASSWORD_MIN || n > FB_RF_PASSWORD_MAX)
		return -EINVAL;
	if (!crypt_gensalt_rn(prefix, 0, NULL, 0, salt, (int)sizeof(salt)))
		return errno ? -errno : -EINVAL;
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	if (!cd)
		return -ENOMEM;
	const char *h = crypt_rn(password, salt, cd, (int)sizeof(*cd));
	int rc = !h || h[0] == '*' ? (errno ? -errno : -EINVAL)
	       : strlen(h) >= outsz ? -ENOSPC : 0;
	if (!rc)
		memcpy(out, h, strlen(h) + 1);
	memset(cd, 0, sizeof(*cd));
	free(cd);
	return rc;
}

/* The user field of the line at s (n bytes), or a zero length for comments
 * and blank lines. */
static size_t line_user(const char *s, size_t n)
{
	if (n == 0 || s[0] == '#')
		return 0;
	const char *c = memchr(s, ':', n);
	return c ? (size_t)(c - s) : 0;
}

/* text with user's first line replaced by line (NULL: dropped) and later
 * ones dropped; line appended when user has none. */
static int rewrite(const char *text, size_t len, const char *user, const char *line, char **out,
		   size_t *outlen)
{
	size_t ul = strlen(user), ll = line ? strlen(line) : 0, o = 0;
	char *buf = malloc(len + ll + 3);
	int done = 0;
	if (!buf)
		return -ENOMEM;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *s = text + pos;
		pos += n + 1;
		if (line_user(s, n) == ul && memcmp(s, user, ul) == 0) {
			if (!done && line) {
				memcpy(buf + o, line, ll);
				o += ll;
				buf[o++] = '\n';
			}
			done = 1; /* a second line for user (refused on load) goes */
			continue;
		}
		memcpy(buf + o, s, n);
		o += n;
		buf[o++] = '\n';
	}
	if (!done && line) {
		memcpy(buf + o, line, ll);
		o += ll;
		buf[o++] = '\n';
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	return 0;
}

int fb_rf_accounts_upsert(const char *text, size_t len, const char *user, const char *role,
			  const char *hash, int flags, char **out, size_t *outlen)
{
	char line[FB_RF_USER_MAX + FB_RF_HASH_MAX + 32];
	if (!fb_rf_user_valid(user) || fb_rf_role_parse(role) < 0 || !hash_valid(hash))
		return -EINVAL;
	snprintf(line, sizeof(line), "%s:%s:%s%s%s", user, role,
		 flags & FB_RF_ACCT_ENABLED ? "" : "!", hash,
		 flags & FB_RF_ACCT_PW_CHANGE ? ":0" : "");
	return rewrite(text, len, user, line, out, outlen);
}

int fb_rf_accounts_remove(const char *text, size_t len, const char *user, char **out,
			  size_t *outlen)
{
	return rewrite(text, len, user, NULL, out, outlen);
}
