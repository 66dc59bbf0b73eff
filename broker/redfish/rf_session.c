/* rf_session.c - the X-Auth-Token session table (see rf_session.h). */
#include "rf_session.h"

#include "rf_auth_crypto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fb_rf_sessions_init(struct fb_rf_sessions *s, size_t max, uint64_t timeout_s)
{
	memset(s, 0, sizeof(*s));
	s->v = calloc(max ? max : 1, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	s->max = max;
	s->timeout_s = timeout_s;
	return 0;
}

void fb_rf_sessions_free(struct fb_rf_sessions *s)
{
	if (s->v)
		memset(s->v, 0, s->max * sizeof(*s->v));
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int expired(const struct fb_rf_sessions *s, const struct fb_rf_session *x, uint64_t now_ms)
{
	return now_ms > x->used_ms && now_ms - x->used_ms >= s->timeout_s * 1000;
}

static void end(struct fb_rf_session *x)
{
	memset(x, 0, sizeof(*x));
}

size_t fb_rf_sessions_expire(struct fb_rf_sessions *s, uint64_t now_ms)
{
	size_t live = 0;
	for (size_t i = 0; i < s->max; i++) {
		if (!s->v[i].id[0])
			continue;
		if (expired(s, &s->v[i], now_ms))
			end(&s->v[i]);
		else
			live++;
	}
	return live;
}

static struct fb_rf_session *find_id(struct fb_rf_sessions *s, const char *id)
{
	if (strlen(id) != FB_RF_SESSION_ID_LEN)
		return NULL;
	for (size_t i = 0; i < s->max; i++)
		if (s->v[i].id[0] && strcmp(s->v[i].id, id) == 0)
			return &s->v[i];
	return NULL;
}

int fb_rf_session_create(struct fb_rf_sessions *s, const char *user, int role, const char *peer,
			 uint64_t now_ms, char token_out[FB_RF_TOKEN_LEN + 1],
			 const struct fb_rf_session **out)
{
	uint8_t tok[FB_RF_TOKEN_BYTES], idb[FB_RF_SESSION_ID_LEN / 2];
	struct fb_rf_session *x = NULL;
	fb_rf_sessions_expire(s, now_ms);
	for (size_t i = 0; i < s->max && !x; i++)
		if (!s->v[i].id[0])
			x = &s->v[i];
	if (!x)
		return -ENOSPC;
	int rc = fb_rf_random(tok, sizeof(tok));
	do { /* an Id in use would make two sessions one URI */
		if (!rc)
			rc = fb_rf_random(idb, sizeof(idb));
		if (!rc)
			fb_rf_hex(idb, sizeof(idb), x->id);
	} while (!rc && find_id(s, x->id) != x);
	/* The token travels as hex; what is kept is the digest of that text,
	 * which is what fb_rf_session_auth computes from a request. */
	fb_rf_hex(tok, sizeof(tok), token_out);
	memset(tok, 0, sizeof(tok));
	if (!rc)
		rc = fb_rf_digest(token_out, FB_RF_TOKEN_LEN, NULL, 0, x->token_digest);
	if (rc) {
		memset(token_out, 0, FB_RF_TOKEN_LEN + 1);
		end(x);
		return rc;
	}
	snprintf(x->user, sizeof(x->user), "%s", user);
	snprintf(x->peer, sizeof(x->peer), "%s", peer ? peer : "");
	x->role = role;
	x->created_ms = x->used_ms = now_ms;
	*out = x;
	return 0;
}

const struct fb_rf_session *fb_rf_session_auth(struct fb_rf_sessions *s, const char *token,
					       uint64_t now_ms)
{
	uint8_t d[FB_RF_DIGEST_LEN];
	struct fb_rf_session *hit = NULL;
	if (strlen(token) != FB_RF_TOKEN_LEN ||
	    fb_rf_digest(token, FB_RF_TOKEN_LEN, NULL, 0, d) != 0)
		return NULL;
	/* The token as sent is hashed first; what is compared is a digest, and
	 * every slot is compared, so timing tells nothing about the table. */
	for (size_t i = 0; i < s->max; i++)
		if (s->v[i].id[0] && fb_rf_equal(d, s->v[i].token_digest, sizeof(d)))
			hit = &s->v[i];
	if (!hit)
		return NULL;
	if (expired(s, hit, now_ms)) {
		end(hit);
		return NULL;
	}
	hit->used_ms = now_ms;
	return hit;
}

const struct fb_rf_session *fb_rf_session_get(struct fb_rf_sessions *s, const char *id,
					      uint64_t now_ms)
{
	struct fb_rf_session *x = find_id(s, id);
	if (x && expired(s, x, now_ms)) {
		end(x);
		return NULL;
	}
	return x;
}

int fb_rf_session_exists(const struct fb_rf_sessions *s, const char *id)
{
	if (strlen(id) != FB_RF_SESSION_ID_LEN)
		return 0;
	for (size_t i = 0; i < s->max; i++)
		if (s->v[i].id[0] && strcmp(s->v[i].id, id) == 0)
			return 1;
	return 0;
}

int fb_rf_session_delete(struct fb_rf_sessions *s, const char *id)
{
	struct fb_rf_session *x = find_id(s, id);
	if (!x)
		return -ENOENT;
	end(x);
	s->ended++;
	return 0;
}

void fb_rf_sessions_end_user(struct fb_rf_sessions *s, const char *user)
{
	for (size_t i = 0; i < s->max; i++)
		if (s->v[i].id[0] && strcmp(s->v[i].user, user) == 0)
			end(&s->v[i]);
	s->ended++; /* also with no session: the account's Basic streams are checked */
}

int fb_rf_sessions_set_timeout(struct fb_rf_sessions *s, uint64_t timeout_s)
{
	if (timeout_s < FB_RF_SESSION_TIMEOUT_MIN_S || timeout_s > FB_RF_SESSION_TIMEOUT_MAX_S)
		return -ERANGE;
	s->timeout_s = timeout_s;
	return 0;
}
