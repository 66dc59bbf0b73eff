/* rf_session.h - Redfish login sessions (X-Auth-Token), on an explicit clock.
 *
 * POST /redfish/v1/SessionService/Sessions creates one: a token of
 * FB_RF_TOKEN_BYTES from getrandom(2), given to the client once (hex) and
 * kept here only as its SHA-256, so a core dump or a debugger shows no usable
 * token; a request's token is hashed and compared in constant time. A
 * session that has not been used for the timeout (SessionService
 * SessionTimeout) is gone. The Id in the session's URI is a separate random
 * value, so listing sessions reveals no token.
 *
 * The table belongs to the thread that serves HTTP (no locks); times are
 * CLOCK_MONOTONIC milliseconds passed in by the caller (tests drive them).
 */
#ifndef FB_RF_SESSION_H
#define FB_RF_SESSION_H

#include "rf_account.h"

#include <stddef.h>
#include <stdint.h>

#define FB_RF_TOKEN_BYTES 32
#define FB_RF_TOKEN_LEN (2 * FB_RF_TOKEN_BYTES) /* hex */
#define FB_RF_SESSION_ID_LEN 16                 /* hex of 8 random bytes */
#define FB_RF_SESSION_TIMEOUT_MIN_S 30          /* SessionService.SessionTimeout bounds */
#define FB_RF_SESSION_TIMEOUT_MAX_S 86400

struct fb_rf_session {
	char id[FB_RF_SESSION_ID_LEN + 1]; /* "" = free slot */
	char user[FB_RF_USER_MAX + 1];
	int role; /* enum fb_rf_role, copied at login */
	uint8_t token_digest[FB_RF_DIGEST_LEN];
	uint64_t created_ms, used_ms;
	char peer[64]; /* who logged in, for the log and ClientOriginIPAddress */
};

struct fb_rf_sessions {
	struct fb_rf_session *v; /* max slots, owned */
	size_t max;
	uint64_t timeout_s;
	uint64_t ended; /* moves when a session is deleted or an account's
			 * sessions end (changed, disabled, deleted): the
			 * server then closes the streams no longer allowed */
};

/* 0 or -ENOMEM. */
int fb_rf_sessions_init(struct fb_rf_sessions *s, size_t max, uint64_t timeout_s);
void fb_rf_sessions_free(struct fb_rf_sessions *s);

/* A new session for user (role) from peer. The token goes to token_out
 * (FB_RF_TOKEN_LEN + 1 bytes), *out to the session. 0, -ENOSPC when all
 * max sessions are in use (after dropping expired ones), or -errno. */
int fb_rf_session_create(struct fb_rf_sessions *s, const char *user, int role, const char *peer,
			 uint64_t now_ms, char token_out[FB_RF_TOKEN_LEN + 1],
			 const struct fb_rf_session **out);
/* The live session whose token this is (and mark it used now), or NULL. */
const struct fb_rf_session *fb_rf_session_auth(struct fb_rf_sessions *s, const char *token,
					       uint64_t now_ms);
/* The live session with this Id, or NULL (does not count as use). */
const struct fb_rf_session *fb_rf_session_get(struct fb_rf_sessions *s, const char *id,
					      uint64_t now_ms);
/* 1 while the session with this Id is in the table (idle or not; no use,
 * no expiry): a stream opened with its token stays open that long. */
int fb_rf_session_exists(const struct fb_rf_sessions *s, const char *id);
/* End the session with this Id. 0 or -ENOENT. */
int fb_rf_session_delete(struct fb_rf_sessions *s, const char *id);
/* End every session of user (its account was removed or changed). */
void fb_rf_sessions_end_user(struct fb_rf_sessions *s, const char *user);
/* Drop sessions idle past the timeout; returns how many are live. */
size_t fb_rf_sessions_expire(struct fb_rf_sessions *s, uint64_t now_ms);
/* Set SessionTimeout (FB_RF_SESSION_TIMEOUT_MIN_S .. _MAX_S). 0 or -ERANGE. */
int fb_rf_sessions_set_timeout(struct fb_rf_sessions *s, uint64_t timeout_s);

#endif
