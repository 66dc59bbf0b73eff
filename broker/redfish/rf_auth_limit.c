/* rf_auth_limit.c - failed-login lockout per (peer, user) (see the .h). */
#include "rf_auth_limit.h"

#include <stdio.h>
#include <string.h>

void fb_rf_auth_limit_init(struct fb_rf_auth_limit *l, unsigned threshold, uint64_t window_ms,
			   uint64_t lock_ms)
{
	memset(l, 0, sizeof(*l));
	l->threshold = threshold ? threshold : 1;
	l->window_ms = window_ms;
	l->lock_ms = lock_ms;
}

static void make_key(char *key, const char *peer, const char *user)
{
	/* A user name too long for the key still gets its own (truncated)
	 * entry; names past FB_RF_USER_MAX are not accounts anyway. */
	snprintf(key, FB_RF_LIMIT_KEY_MAX, "%.63s %s", peer, user);
}

static const struct fb_rf_limit_entry *find(const struct fb_rf_auth_limit *l, const char *key)
{
	for (size_t i = 0; i < FB_RF_LIMIT_SLOTS; i++)
		if (l->v[i].key[0] && strcmp(l->v[i].key, key) == 0)
			return &l->v[i];
	return NULL;
}

uint64_t fb_rf_auth_limit_locked(const struct fb_rf_auth_limit *l, const char *peer,
				 const char *user, uint64_t now_ms)
{
	char key[FB_RF_LIMIT_KEY_MAX];
	make_key(key, peer, user);
	const struct fb_rf_limit_entry *e = find(l, key);
	return e && e->locked_until_ms > now_ms ? e->locked_until_ms - now_ms : 0;
}

/* A free slot, else the unlocked one whose window started first, else
 * the lock that ends first. */
static struct fb_rf_limit_entry *victim(struct fb_rf_auth_limit *l, uint64_t now_ms)
{
	struct fb_rf_limit_entry *best = &l->v[0];
	for (size_t i = 0; i < FB_RF_LIMIT_SLOTS; i++) {
		struct fb_rf_limit_entry *e = &l->v[i];
		if (!e->key[0])
			return e;
		int e_locked = e->locked_until_ms > now_ms, b_locked = best->locked_until_ms > now_ms;
		if (e_locked != b_locked ? !e_locked
		    : e_locked ? e->locked_until_ms < best->locked_until_ms
			       : e->first_ms < best->first_ms)
			best = e;
	}
	return best;
}

unsigned fb_rf_auth_limit_fail(struct fb_rf_auth_limit *l, const char *peer, const char *user,
			       uint64_t now_ms)
{
	char key[FB_RF_LIMIT_KEY_MAX];
	make_key(key, peer, user);
	struct fb_rf_limit_entry *e = (struct fb_rf_limit_entry *)find(l, key);
	if (!e) {
		e = victim(l, now_ms);
		memset(e, 0, sizeof(*e));
		memcpy(e->key, key, sizeof(key));
	}
	if (e->fails && now_ms - e->first_ms >= l->window_ms && e->locked_until_ms <= now_ms)
		e->fails = 0; /* the window passed: start counting again */
	if (!e->fails)
		e->first_ms = now_ms;
	e->fails++;
	if (e->fails >= l->threshold)
		e->locked_until_ms = now_ms + l->lock_ms;
	return e->fails;
}

void fb_rf_auth_limit_ok(struct fb_rf_auth_limit *l, const char *peer, const char *user)
{
	char key[FB_RF_LIMIT_KEY_MAX];
	make_key(key, peer, user);
	struct fb_rf_limit_entry *e = (struct fb_rf_limit_entry *)find(l, key);
	if (e)
		memset(e, 0, sizeof(*e));
}
