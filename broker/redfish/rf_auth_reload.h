/* rf_auth_reload.h - revoking tokens and accounts without a restart: on
 * SIGHUP fabricbusd reads the HttpTokens and RedfishAccounts files again.
 *
 * The loop thread reads and parses them (fb_rf_auth_files_read); a file that
 * is missing, readable by others or malformed fails the whole reload, and
 * the tables in use stay as they were (the caller logs why). A good read is
 * handed to the lws thread, the auth core's owner (ws_server.c, under its
 * hand-over mutex), which swaps it in (fb_rf_auth_core_swap): no table is
 * ever read while another thread changes it.
 *
 * A connection that stays open (a /ws/events WebSocket, an SSE stream) was
 * authenticated once, at its start; it keeps what identified it (struct
 * fb_rf_cred) so that after a swap the server can close those whose token or
 * account is gone (fb_rf_cred_live).
 */
#ifndef FB_RF_AUTH_RELOAD_H
#define FB_RF_AUTH_RELOAD_H

#include "rf_account.h"
#include "rf_auth_crypto.h"
#include "rf_session.h"
#include "rf_token.h"

#include <stddef.h>
#include <stdint.h>

struct fb_config;
struct fb_rf_auth_core;

struct fb_rf_auth_files {
	int has_bearers, has_accounts; /* the config names the file */
	struct fb_rf_bearers bearers;
	struct fb_rf_accounts accounts;
};

/* Read the files cfg names (any thread: touches no auth core). 0 with *out
 * filled (free with fb_rf_auth_files_free), or FB_ECONFIG/-errno with
 * "path: why" in err and *out empty. */
int fb_rf_auth_files_read(const struct fb_config *cfg, struct fb_rf_auth_files *out, char *err,
			  size_t errsz);
void fb_rf_auth_files_free(struct fb_rf_auth_files *f);

/* Lws thread: f's tables replace c's (f is left empty). Sessions of an
 * account that is gone, disabled or has another role now end (a session
 * keeps the role it logged in with). Logs what changed. */
void fb_rf_auth_core_swap(struct fb_rf_auth_core *c, struct fb_rf_auth_files *f);

/* What authenticated a long-lived connection. */
enum fb_rf_cred_kind {
	FB_RF_CRED_NONE = 0, /* anonymous, or logins off: never revoked */
	FB_RF_CRED_BEARER,   /* an HttpTokens token: its digest */
	FB_RF_CRED_USER,     /* an account (Basic, or its session): its name */
};

struct fb_rf_cred {
	int kind; /* enum fb_rf_cred_kind */
	char user[FB_RF_USER_MAX + 1];
	char session[FB_RF_SESSION_ID_LEN + 1]; /* a session's token: its Id, else "" */
	uint8_t digest[FB_RF_DIGEST_LEN];
};

/* The credential the headers present, as fb_rf_auth_core_check would take
 * it (X-Auth-Token first, then Authorization), once it has passed: a bearer
 * token's digest, or the account's name (a session's, or Basic's user).
 * Nothing is verified again here (no crypt(3), no failed-login count). */
void fb_rf_cred_of(struct fb_rf_auth_core *c, const char *authorization, const char *token,
		   uint64_t now_ms, struct fb_rf_cred *out);
/* 1 while cr still authenticates under c: its token is in the table, its
 * account exists and is enabled, and the session it came with (if any) has
 * not been deleted or ended (an idle timeout alone does not end a stream). */
int fb_rf_cred_live(const struct fb_rf_auth_core *c, const struct fb_rf_cred *cr);

#endif
