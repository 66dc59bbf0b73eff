/* rf_auth_core.c - the Redfish auth decision (see rf_auth_core.h). */
#include "rf_auth_core.h"

#include "config.h"
#include "fb_err.h"
#include "fb_log.h"
#include "rf_auth_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define LIMIT_WINDOW_MS (60 * 1000)

int fb_rf_auth_core_init(struct fb_rf_auth_core *c, const struct fb_config *cfg, char *err,
			 size_t errsz)
{
	memset(c, 0, sizeof(*c));
	c->anonymous_reads = cfg->rf_anonymous_reads;
	fb_rf_auth_limit_init(&c->limit, (unsigned)cfg->rf_login_failures, LIMIT_WINDOW_MS,
			      cfg->rf_login_lockout_s * 1000);
	int rc = fb_rf_sessions_init(&c->sessions, cfg->rf_max_sessions, cfg->rf_session_timeout_s);
	if (rc)
		return fb_err_set(err, errsz, rc, "Redfish sessions: %s", fb_strerror(rc));
	if (cfg->http_tokens[0]) {
		if ((rc = fb_rf_bearers_load(cfg->http_tokens, &c->bearers, err, errsz))) {
			fb_rf_sessions_free(&c->sessions);
			return rc;
		}
		c->tokens = 1;
	}
	if (!cfg->rf_accounts[0])
		return 0;
	rc = fb_rf_accounts_load(cfg->rf_accounts, &c->accounts, err, errsz);
	if (rc) {
		fb_rf_sessions_free(&c->sessions);
		fb_rf_bearers_free(&c->bearers);
		return rc;
	}
	snprintf(c->accounts_path, sizeof(c->accounts_path), "%s", cfg->rf_accounts);
	c->enabled = 1;
	return 0;
}

void fb_rf_auth_core_free(struct fb_rf_auth_core *c)
{
	fb_rf_accounts_free(&c->accounts);
	fb_rf_sessions_free(&c->sessions);
	fb_rf_bearers_free(&c->bearers);
	memset(c, 0, sizeof(*c));
}

static int b64val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Standard base64 with padding into out (at most outsz - 1 bytes, NUL
 * added). Its length, or -1. */
static int b64_decode(const char *in, char *out, size_t outsz)
{
	size_t n = strlen(in), o = 0;
	if (n == 0 || n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			if (in[i + k] == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = b64val((unsigned char)in[i + k])) < 0) {
				return -1;
			}
		}
		unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
			     (unsigned)v[3];
		for (int k = 0; k < 3 - pad; k++) {
			if (o + 1 >= outsz)
				return -1;
			out[o++] = (char)(w >> (16 - 8 * k));
		}
	}
	out[o] = '\0';
	return (int)o;
}

int fb_rf_basic_decode(const char *authorization, char *user, size_t usz, char *password,
		       size_t psz)
{
	char buf[FB_RF_USER_MAX + FB_RF_PASSWORD_MAX + 8];
	if (strncasecmp(authorization, "Basic ", 6) != 0)
		return -EINVAL;
	const char *v = authorization + 6;
	while (*v == ' ')
		v++;
	int n = b64_decode(v, buf, sizeof(buf));
	char *colon = n > 0 ? memchr(buf, ':', (size_t)n) : NULL;
	if (!colon || memchr(buf, '\0', (size_t)n)) {
		memset(buf, 0, sizeof(buf));
		return -EINVAL;
	}
	*colon = '\0';
	size_t ul = (size_t)(colon - buf), pl = (size_t)n - ul - 1;
	int rc = ul < usz && pl < psz ? 0 : -EINVAL;
	if (!rc) {
		memcpy(user, buf, ul + 1);
		memcpy(password, colon + 1, pl + 1);
	}
	memset(buf, 0, sizeof(buf));
	return rc;
}

/* A user name as the log may show it: printable, at most 32 characters. */
static void log_name(const char *user, char *out, size_t sz)
{
	size_t o = 0;
	for (size_t i = 0; user[i] && o + 1 < sz && i < FB_RF_USER_MAX; i++)
		out[o++] = user[i] > 0x20 && user[i] < 0x7f ? user[i] : '?';
	out[o] = '\0';
}

/* user/password against the accounts, through the failed-login limit. */
static int verify(struct fb_rf_auth_core *c, const char *user, const char *password,
		  const char *peer, uint64_t now_ms, const struct fb_rf_account **acct)
{
	char name[FB_RF_USER_MAX + 1];
	uint64_t left = fb_rf_auth_limit_locked(&c->limit, peer, user, now_ms);
	log_name(user, name, sizeof(name));
	if (left) {
		fb_log_warn("redfish: login as '%s' from %s refused without checking: locked out for "
			    "%llu s more after repeated failures", name, peer,
			    (unsigned long long)(left + 999) / 1000);
		return FB_RF_AUTH_NO_SESSION;
	}
	if (fb_rf_account_verify(&c->accounts, user, password, now_ms, acct) == FB_RF_VERIFY_OK) {
		fb_rf_auth_limit_ok(&c->limit, peer, user);
		return FB_RF_AUTH_OK;
	}
	unsigned n = fb_rf_auth_limit_fail(&c->limit, peer, user, now_ms);
	if (n >= c->limit.threshold)
		fb_log_warn("redfish: failed login as '%s' from %s (%u within %d s): its logins are "
			    "refused for %llu s", name, peer, n, LIMIT_WINDOW_MS / 1000,
			    (unsigned long long)c->limit.lock_ms / 1000);
	else
		fb_log_warn("redfish: failed login as '%s' from %s (%u of %u before a lockout)", name,
			    peer, n, c->limit.threshold);
	return FB_RF_AUTH_NO_SESSION;
}

static void set_caller(struct fb_rf_caller *who, const char *user, int role, const char *sid)
{
	if (!who)
		return;
	who->authenticated = 1;
	snprintf(who->user, sizeof(who->user), "%s", user);
	who->role = role;
	who->privs = fb_rf_role_privs(role);
	snprintf(who->session_id, sizeof(who->session_id), "%s", sid ? sid : "");
}

/* Who the headers say, or 401. */
static int identify(struct fb_rf_auth_core *c, const char *authorization, const char *token,
		    const char *peer, uint64_t now_ms, struct fb_rf_caller *who)
{
	if (token && *token) {
		/* lws keeps a custom header's value as sent, blanks included */
		char t[FB_RF_TOKEN_LEN + 1];
		token += strspn(token, " \t");
		size_t n = strcspn(token, " \t\r\n");
		snprintf(t, sizeof(t), "%.*s", (int)(n < sizeof(t) - 1 ? n : sizeof(t) - 1), token);
		const struct fb_rf_session *s = n == FB_RF_TOKEN_LEN && !token[n + strspn(token + n, " \t")]
							? fb_rf_session_auth(&c->sessions, t, now_ms)
							: NULL;
		if (!s)
			return FB_RF_AUTH_NO_SESSION;
		set_caller(who, s->user, s->role, s->id);
		const struct fb_rf_account *a = fb_rf_account_find(&c->accounts, s->user);
		who->pw_change = a && a->pw_change; /* now, not at login: the PATCH clears it */
		return FB_RF_AUTH_OK;
	}
	size_t n;
	const char *t = fb_rf_bearer_value(authorization, &n);
	if (t) {
		const struct fb_rf_bearer *e = fb_rf_bearer_find(&c->bearers, t, n);
		if (!e)
			return FB_RF_AUTH_NO_SESSION;
		set_caller(who, e->name, e->role, NULL);
		return FB_RF_AUTH_OK;
	}
	char user[FB_RF_USER_MAX + 2], password[FB_RF_PASSWORD_MAX + 2];
	const struct fb_rf_account *a = NULL;
	if (fb_rf_basic_decode(authorization, user, sizeof(user), password, sizeof(password)))
		return FB_RF_AUTH_NO_SESSION;
	int rc = verify(c, user, password, peer, now_ms, &a);
	memset(password, 0, sizeof(password));
	if (rc == FB_RF_AUTH_OK) {
		set_caller(who, a->user, a->role, NULL);
		who->pw_change = a->pw_change;
	}
	return rc;
}

int fb_rf_auth_core_check(struct fb_rf_auth_core *c, const char *authorization,
			  const char *token, const char *peer, enum fb_rf_priv need, int is_read,
			  uint64_t now_ms, struct fb_rf_caller *who)
{
	struct fb_rf_caller tmp;
	if (!who)
		who = &tmp;
	memset(who, 0, sizeof(*who));
	if (!fb_rf_auth_core_on(c) || need == FB_RF_PRIV_NONE)
		return FB_RF_AUTH_OK;
	if ((!token || !*token) && (!authorization || !*authorization))
		return is_read && need == FB_RF_PRIV_LOGIN && c->anonymous_reads
			       ? FB_RF_AUTH_OK
			       : FB_RF_AUTH_NO_SESSION;
	int rc = identify(c, authorization ? authorization : "", token, peer ? peer : "?", now_ms,
			  who);
	if (rc)
		return rc;
	if (who->pw_change)
		return FB_RF_AUTH_PW_CHANGE; /* whatever the role: change the password first */
	return who->privs & FB_RF_PRIV_BIT(need) ? FB_RF_AUTH_OK : FB_RF_AUTH_FORBIDDEN;
}

int fb_rf_auth_core_login(struct fb_rf_auth_core *c, const char *user, const char *password,
			  const char *peer, uint64_t now_ms, char token_out[FB_RF_TOKEN_LEN + 1],
			  const struct fb_rf_session **s)
{
	const struct fb_rf_account *a = NULL;
	if (!c->enabled)
		return FB_RF_AUTH_NO_SESSION;
	int rc = verify(c, user, password, peer ? peer : "?", now_ms, &a);
	if (rc)
		return rc;
	rc = fb_rf_session_create(&c->sessions, a->user, a->role, peer, now_ms, token_out, s);
	if (!rc)
		fb_log_info("redfish: session %s opened for '%s' from %s", (*s)->id, a->user,
			    peer ? peer : "?");
	return rc;
}

void fb_rf_peer_ip(const char *peer, char *out, size_t outsz)
{
	const char *start = peer, *end = strrchr(peer, ':');
	if (peer[0] == '[') { /* [v6]:port */
		start = peer + 1;
		end = strchr(start, ']');
	}
	size_t n = end ? (size_t)(end - start) : strlen(start);
	snprintf(out, outsz, "%.*s", (int)n, start);
}
