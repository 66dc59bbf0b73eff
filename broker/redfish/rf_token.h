/* rf_token.h - bearer tokens for programs (the Slurm adapter, the CLI,
 * Prometheus): "Authorization: Bearer <token>" on any HTTP route, the
 * WebSocket /ws/events included, with a Redfish role (rf_auth_priv.h).
 *
 * The broker's file (HttpTokens, mode 0600, checked as fb_secret_file.h
 * says) holds one line per token:
 *
 *     NAME:ROLE:SHA256HEX      # '#' starts a comment
 *
 * NAME says who it is in the log (letters, digits, '-_.@', at most 32),
 * ROLE is Administrator, Operator or ReadOnly, SHA256HEX the SHA-256 of the
 * token's text (64 hex digits), so the file holds no usable secret. A
 * client keeps the token itself in its own file (--token-file): random,
 * at least FB_RF_TOKEN_MIN characters, e.g. `openssl rand -hex 32`.
 *
 * Lookup hashes the presented token and compares it with every entry in
 * constant time. Lws thread only once loaded (read-only then).
 */
#ifndef FB_RF_TOKEN_H
#define FB_RF_TOKEN_H

#include "rf_account.h"
#include "rf_auth_crypto.h"

#include <stddef.h>
#include <stdint.h>

#define FB_RF_TOKEN_MIN 32          /* characters of a client's token */
#define FB_RF_TOKEN_TEXT_MAX 512    /* longer ones are refused unhashed */
#define FB_RF_TOKENS_MAX 1024
#define FB_RF_TOKENS_FILE_MAX (256u << 10)

struct fb_rf_bearer {
	char name[FB_RF_USER_MAX + 1];
	int role; /* enum fb_rf_role */
	uint8_t digest[FB_RF_DIGEST_LEN];
};

struct fb_rf_bearers {
	struct fb_rf_bearer *v; /* owned */
	size_t n;
};

/* Parse the file's text; origin names it in errors ("path:line: why"). 0 or
 * FB_ECONFIG / -ENOMEM with the reason in err. */
int fb_rf_bearers_parse(const char *text, size_t len, const char *origin,
			struct fb_rf_bearers *out, char *err, size_t errsz);
/* Read path (owner-only, fb_secret_file.h) and parse it. */
int fb_rf_bearers_load(const char *path, struct fb_rf_bearers *out, char *err, size_t errsz);
void fb_rf_bearers_free(struct fb_rf_bearers *b);
/* The token of an "Authorization: Bearer <token>" value (blanks around it
 * dropped) and its length in *len, or NULL for another scheme. */
const char *fb_rf_bearer_value(const char *authorization, size_t *len);
/* The entry whose token this is, or NULL. */
const struct fb_rf_bearer *fb_rf_bearer_find(const struct fb_rf_bearers *b, const char *token,
					     size_t len);

#endif
