/* rf_account.h - Redfish accounts: the accounts file, password hashes and
 * their verification.
 *
 * The file (config key RedfishAccounts) has one account per line, like
 * /etc/shadow:
 *
 *     # comments and blank lines are ignored
 *     USER:ROLE:HASH
 *
 * USER is 1..32 of [A-Za-z0-9._-] (it is also the account's Id in
 * /redfish/v1/AccountService/Accounts/USER), ROLE is Administrator, Operator
 * or ReadOnly, HASH is a crypt(3) hash from libxcrypt: yescrypt ($y$, the
 * default of `fabricbus passwd`), gost-yescrypt ($gy$), scrypt ($7$),
 * SHA-512 ($6$), SHA-256 ($5$) or bcrypt ($2b$/$2y$). A HASH that starts
 * with '!' is a disabled account (Enabled false), as in /etc/shadow. An
 * optional fourth field "0" (USER:ROLE:HASH:0) means the password must be
 * changed before anything else (PasswordChangeRequired), as a last-change
 * date of 0 does in /etc/shadow: the account may log in, read its own
 * account and PATCH its Password, nothing more; the PATCH clears it. Nothing
 * else is accepted (no DES, no clear text): a bad line stops the start with
 * "path:line: why". The file must be owner-only (fb_secret_file.h).
 *
 * Verifying a password runs crypt(3), which yescrypt makes deliberately slow
 * (tens of ms). Basic auth sends the password with every request, so a
 * password that verified is remembered as SHA-256(per-process pepper,
 * password) for FB_RF_VERIFIED_TTL_MS: the same password again is checked
 * against that digest, a different one runs crypt(3) again.
 */
#ifndef FB_RF_ACCOUNT_H
#define FB_RF_ACCOUNT_H

#include "rf_auth_crypto.h"

#include <stddef.h>
#include <stdint.h>

#define FB_RF_USER_MAX 32
#define FB_RF_HASH_MAX 255
#define FB_RF_PASSWORD_MIN 8
#define FB_RF_PASSWORD_MAX 255
#define FB_RF_ACCOUNTS_MAX 1024
#define FB_RF_ACCOUNTS_FILE_MAX (1u << 20)
#define FB_RF_VERIFIED_TTL_MS (5 * 60 * 1000)

struct fb_rf_account {
	char user[FB_RF_USER_MAX + 1];
	int role; /* enum fb_rf_role */
	int enabled;
	int pw_change; /* PasswordChangeRequired */
	char hash[FB_RF_HASH_MAX + 1]; /* without the '!' of a disabled account */
	/* The last password that verified, as a peppered digest, and until when
	 * it is trusted without crypt(3) (0: none). */
	uint8_t verified[FB_RF_DIGEST_LEN];
	uint64_t verified_until_ms;
};

struct fb_rf_accounts {
	struct fb_rf_account *v; /* owned */
	size_t n;
	uint8_t pepper[FB_RF_DIGEST_LEN];
};

/* Parse a whole accounts file's text (len bytes, NUL not needed). origin
 * names it in errors ("path"). 0, or FB_EMALFORMED/FB_ETOOBIG/-ENOMEM with
 * "origin:line: why" in err; out is left empty on error. */
int fb_rf_accounts_parse(const char *text, size_t len, const char *origin,
			 struct fb_rf_accounts *out, char *err, size_t errsz);
/* Read path (owner-only, at most FB_RF_ACCOUNTS_FILE_MAX bytes) and parse it. */
int fb_rf_accounts_load(const char *path, struct fb_rf_accounts *out, char *err, size_t errsz);
void fb_rf_accounts_free(struct fb_rf_accounts *a);

/* The account named user, or NULL. */
struct fb_rf_account *fb_rf_account_find(const struct fb_rf_accounts *a, const char *user);

enum fb_rf_verify {
	FB_RF_VERIFY_OK = 0,
	FB_RF_VERIFY_BAD = 1,      /* no such user, wrong password or disabled */
};
/* Check user's password at now_ms (CLOCK_MONOTONIC ms: fb_time_ms()). An
 * unknown user still costs one crypt(3), so timing does not tell which user
 * names exist. On OK, *acct (when not NULL) is the account. */
int fb_rf_account_verify(struct fb_rf_accounts *a, const char *user, const char *password,
			 uint64_t now_ms, const struct fb_rf_account **acct);

/* 1 when user is a valid account name (see above). */
int fb_rf_user_valid(const char *user);

/* A new crypt(3) hash of password into out: prefix "$y$" (yescrypt) or
 * "$6$" (SHA-512), random salt from libxcrypt. 0, -EINVAL (the password is
 * shorter than FB_RF_PASSWORD_MIN or longer than FB_RF_PASSWORD_MAX), or
 * -errno. */
int fb_rf_password_hash(const char *password, const char *prefix, char *out, size_t outsz);
/* 1 when password matches hash; 0 otherwise (also for an unusable hash). */
int fb_rf_password_check(const char *hash, const char *password);

/* flags of fb_rf_accounts_upsert and fb_rf_account_store_set */
#define FB_RF_ACCT_ENABLED 1
#define FB_RF_ACCT_PW_CHANGE 2 /* PasswordChangeRequired */

/* A new accounts file text: text (len bytes; may be NULL/0 for a new file)
 * with user's line replaced by "user:role:hash" ("user:role:!hash" when not
 * FB_RF_ACCT_ENABLED in flags, ":0" appended with FB_RF_ACCT_PW_CHANGE), or the line appended when user has none; comments and other
 * lines kept as they are. *out is malloc'd (NUL-terminated), the caller
 * frees it. 0 or -ENOMEM/-EINVAL. */
int fb_rf_accounts_upsert(const char *text, size_t len, const char *user, const char *role,
			  const char *hash, int flags, char **out, size_t *outlen);
/* The same text without user's line(s). 0 or -ENOMEM. */
int fb_rf_accounts_remove(const char *text, size_t len, const char *user, char **out,
			  size_t *outlen);

#endif
