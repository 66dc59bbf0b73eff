/* rf_auth_core.h - who is calling, and may they: the Redfish auth decision
 * without HTTP. The lws side (rf_auth.c for /redfish/v1, ws_fabric.c for
 * /fabric/jobs) passes the Authorization and X-Auth-Token header values and
 * the privilege the route needs, and answers 401 or 403 as told.
 *
 *   - need FB_RF_PRIV_NONE: public (service root, $metadata, odata).
 *   - X-Auth-Token: a live session (rf_session.h), else 401.
 *   - Authorization: Bearer: a token of the HttpTokens file (rf_token.h),
 *     else 401.
 *   - Authorization: Basic: a good user:password (rf_account.h), else 401;
 *     failures are rate-limited per (peer, user) (rf_auth_limit.h) and logged.
 *   - nothing: 401, except a read that needs only Login when the site set
 *     RedfishAnonymousReads=yes.
 *   - a caller whose role lacks the privilege: 403.
 *
 * With neither an accounts file (RedfishAccounts) nor a tokens file
 * (HttpTokens) there is nobody to log in as: every request passes, as before accounts existed, and fabricbusd
 * warns at start. Everything here belongs to the lws thread.
 */
#ifndef FB_RF_AUTH_CORE_H
#define FB_RF_AUTH_CORE_H

#include "rf_account.h"
#include "rf_auth_limit.h"
#include "rf_auth_priv.h"
#include "rf_session.h"
#include "rf_token.h"

#include <stdint.h>

struct fb_config;

struct fb_rf_auth_core {
	int enabled;         /* an accounts file was configured */
	int tokens;          /* a tokens file was configured (HttpTokens) */
	int anonymous_reads; /* RedfishAnonymousReads */
	char accounts_path[4096]; /* RedfishAccounts, for changes (rf_account_store.h) */
	struct fb_rf_accounts accounts;
	struct fb_rf_sessions sessions;
	struct fb_rf_auth_limit limit;
	struct fb_rf_bearers bearers;
};

/* Logins are on: accounts or tokens (or both) are configured. */
static inline int fb_rf_auth_core_on(const struct fb_rf_auth_core *c)
{
	return c && (c->enabled || c->tokens);
}

/* Who a request came from, once checked. */
struct fb_rf_caller {
	int authenticated;                          /* 0: anonymous (open or public) */
	char user[FB_RF_USER_MAX + 1];
	int role;                                   /* enum fb_rf_role, when authenticated */
	unsigned privs;                             /* FB_RF_PRIV_BIT set */
	char session_id[FB_RF_SESSION_ID_LEN + 1];  /* "" for Basic */
	int pw_change;                              /* the account's PasswordChangeRequired */
};

enum fb_rf_auth_result {
	FB_RF_AUTH_OK = 0,
	FB_RF_AUTH_NO_SESSION = 1, /* 401: no, bad or expired credentials */
	FB_RF_AUTH_FORBIDDEN = 2,  /* 403: authenticated, but the role lacks the privilege */
	FB_RF_AUTH_PW_CHANGE = 3,  /* 403: the account's PasswordChangeRequired is set (who is
				      filled; the Redfish router lets its own account through) */
};

/* Load the accounts and tokens files the config names (neither: auth off). 0, or
 * FB_ECONFIG/-errno with "path: why; what to do" in err. */
int fb_rf_auth_core_init(struct fb_rf_auth_core *c, const struct fb_config *cfg, char *err,
			 size_t errsz);
void fb_rf_auth_core_free(struct fb_rf_auth_core *c);

/* The verdict (enum fb_rf_auth_result) for a request that needs `need`. authorization and token are the header values (NULL
 * when absent); peer is the client's address without its port (the
 * failed-login limit's key, and the log's);
 * is_read is GET/HEAD. *who (may be NULL) says who it was. */
int fb_rf_auth_core_check(struct fb_rf_auth_core *c, const char *authorization,
			  const char *token, const char *peer, enum fb_rf_priv need, int is_read,
			  uint64_t now_ms, struct fb_rf_caller *who);

/* POST .../Sessions: check user/password as a Basic login would, then make
 * a session. peer is the client's address without its port (fb_rf_peer_ip),
 * as for fb_rf_auth_core_check. 0 with the token in token_out and *s set; FB_RF_AUTH_NO_SESSION;
 * -ENOSPC when RedfishMaxSessions are live; -errno. */
int fb_rf_auth_core_login(struct fb_rf_auth_core *c, const char *user, const char *password,
			  const char *peer, uint64_t now_ms, char token_out[FB_RF_TOKEN_LEN + 1],
			  const struct fb_rf_session **s);

/* Decode "Basic base64(user:password)" into user and password (NUL-
 * terminated). 0, or -EINVAL for another scheme or a malformed value. */
int fb_rf_basic_decode(const char *authorization, char *user, size_t usz, char *password,
		       size_t psz);

/* The address of "ip:port" / "[v6]:port" without the port, into out: the
 * failed-login limit counts per address, whatever the client's port. */
void fb_rf_peer_ip(const char *peer, char *out, size_t outsz);

#endif
