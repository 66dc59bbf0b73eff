/* rf_auth_limit.h - failed Redfish logins, rate-limited per (peer, user).
 *
 * Every wrong password costs a crypt(3) on the thread that serves HTTP, and
 * guessing is the point of trying many: after `threshold` failures from one
 * peer address for one user name within `window_ms`, that pair is refused
 * without checking anything for `lock_ms` (the other users of that peer,
 * and that user from elsewhere, are not held). Keyed on the pair so that an
 * attacker cannot lock the administrator out from every address.
 *
 * A fixed table of FB_RF_LIMIT_SLOTS: when it is full the oldest unlocked
 * entry is forgotten. Explicit clock (CLOCK_MONOTONIC ms).
 */
#ifndef FB_RF_AUTH_LIMIT_H
#define FB_RF_AUTH_LIMIT_H

#include <stddef.h>
#include <stdint.h>

#define FB_RF_LIMIT_SLOTS 512
#define FB_RF_LIMIT_KEY_MAX 112

struct fb_rf_limit_entry {
	char key[FB_RF_LIMIT_KEY_MAX]; /* "peer user"; "" = free */
	uint64_t first_ms;             /* first failure of the window */
	uint64_t locked_until_ms;
	unsigned fails;
};

struct fb_rf_auth_limit {
	unsigned threshold;
	uint64_t window_ms, lock_ms;
	struct fb_rf_limit_entry v[FB_RF_LIMIT_SLOTS];
};

void fb_rf_auth_limit_init(struct fb_rf_auth_limit *l, unsigned threshold, uint64_t window_ms,
			   uint64_t lock_ms);
/* 0 when peer may try user's password now; else the ms left of its lock. */
uint64_t fb_rf_auth_limit_locked(const struct fb_rf_auth_limit *l, const char *peer,
				 const char *user, uint64_t now_ms);
/* Count a failure; returns the failures in the window so far. When that
 * reaches the threshold the pair is locked (the caller logs it). */
unsigned fb_rf_auth_limit_fail(struct fb_rf_auth_limit *l, const char *peer, const char *user,
			       uint64_t now_ms);
/* A good login: forget the pair's failures. */
void fb_rf_auth_limit_ok(struct fb_rf_auth_limit *l, const char *peer, const char *user);

#endif
