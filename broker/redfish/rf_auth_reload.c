/* rf_auth_reload.c - re-reading tokens and accounts (see rf_auth_reload.h). */
#include "rf_auth_reload.h"

#include "config.h"
#include "fb_log.h"
#include "rf_auth_core.h"

#include <stdio.h>
#include <string.h>

int fb_rf_auth_files_read(const struct fb_config *cfg, struct fb_rf_auth_files *out, char *err,
			  size_t errsz)
{
	memset(out, 0, sizeof(*out));
	int rc = 0;
	if (cfg->http_tokens[0]) {
		if ((rc = fb_rf_bearers_load(cfg->http_tokens, &out->bearers, err, errsz)))
			return rc;
		out->has_bearers = 1;
	}
	if (cfg->rf_accounts[0]) {
		if ((rc = fb_rf_accounts_load(cfg->rf_accounts, &out->accounts, err, errsz))) {
			fb_rf_auth_files_free(out);
			return rc;
		}
		out->has_accounts = 1;
	}
	return 0;
}

void fb_rf_auth_files_free(struct fb_rf_auth_files *f)
{
	fb_rf_bearers_free(&f->bearers);
	fb_rf_accounts_free(&f->accounts);
	memset(f, 0, sizeof(*f));
}

/* Sessions of accounts that f drops, disables or gives another role end. */
static size_t end_stale_sessions(struct fb_rf_auth_core *c, const struct fb_rf_accounts *next)
{
	size_t ended = 0;
	for (size_t i = 0; i < c->accounts.n; i++) {
		const struct fb_rf_account *old = &c->accounts.v[i];
		const struct fb_rf_account *now = fb_rf_account_find(next, old->user);
		if (now && now->enabled && now->role == old->role)
			continue;
		fb_rf_sessions_end_user(&c->sessions, old->user);
		ended++;
	}
	return ended;
}

void fb_rf_auth_core_swap(struct fb_rf_auth_core *c, struct fb_rf_auth_files *f)
{
	if (c->tokens && f->has_bearers) {
		size_t was = c->bearers.n;
		fb_rf_bearers_free(&c->bearers);
		c->bearers = f->bearers;
		memset(&f->bearers, 0, sizeof(f->bearers));
		fb_log_info("http: HttpTokens re-read: %zu tokens (were %zu)", c->bearers.n, was);
	}
	if (c->enabled && f->has_accounts) {
		size_t was = c->accounts.n, gone = end_stale_sessions(c, &f->accounts);
		fb_rf_accounts_free(&c->accounts);
		c->accounts = f->accounts;
		memset(&f->accounts, 0, sizeof(f->accounts));
		fb_log_info("redfish: RedfishAccounts re-read: %zu accounts (were %zu); sessions of "
			    "%zu removed or changed accounts ended", c->accounts.n, was, gone);
	}
	fb_rf_auth_files_free(f);
}

void fb_rf_cred_of(struct fb_rf_auth_core *c, const char *authorization, const char *token,
		   uint64_t now_ms, struct fb_rf_cred *out)
{
	memset(out, 0, sizeof(*out));
	if (!fb_rf_auth_core_on(c))
		return;
	if (token && *token) {
		char t[FB_RF_TOKEN_LEN + 1];
		token += strspn(token, " \t");
		snprintf(t, sizeof(t), "%.*s", (int)strcspn(token, " \t\r\n"), token);
		const struct fb_rf_session *s = fb_rf_session_auth(&c->sessions, t, now_ms);
		if (s) {
			out->kind = FB_RF_CRED_USER;
			snprintf(out->user, sizeof(out->user), "%s", s->user);
			snprintf(out->session, sizeof(out->session), "%s", s->id);
		}
		return;
	}
	if (!authorization)
		return;
	size_t n;
	const char *t = fb_rf_bearer_value(authorization, &n);
	if (t) {
		if (!fb_rf_digest(t, n, NULL, 0, out->digest))
			out->kind = FB_RF_CRED_BEARER;
		return;
	}
	char user[FB_RF_USER_MAX + 2], password[FB_RF_PASSWORD_MAX + 2];
	/* A name longer than any account's never logged in: nothing to track. */
	if (!fb_rf_basic_decode(authorization, user, sizeof(user), password, sizeof(password)) &&
	    strlen(user) < sizeof(out->user)) {
		out->kind = FB_RF_CRED_USER;
		memcpy(out->user, user, strlen(user) + 1);
	}
	memset(password, 0, sizeof(password));
}

int fb_rf_cred_live(const struct fb_rf_auth_core *c, const struct fb_rf_cred *cr)
{
	if (cr->kind == FB_RF_CRED_BEARER) {
		for (size_t i = 0; i < c->bearers.n; i++)
			if (fb_rf_equal(c->bearers.v[i].digest, cr->digest, sizeof(cr->digest)))
				return 1;
		return 0;
	}
	if (cr->kind == FB_RF_CRED_USER) {
		const struct fb_rf_account *a = fb_rf_account_find(&c->accounts, cr->user);
		return a && a->enabled &&
		       (!cr->session[0] || fb_rf_session_exists(&c->sessions, cr->session));
	}
	return 1;
}
