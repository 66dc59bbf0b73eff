/* test_rf_auth.c - Redfish accounts, passwords, sessions, failed-login
 * limits and the role -> privilege map (broker/redfish/rf_account*,
 * rf_session*, rf_auth_*), on an explicit clock. */
#include "fb_test.h"

#include "fb_err.h"
#include "fb_secret_file.h"
#include "config.h"
#include "rf_account.h"
#include "rf_account_store.h"
#include "rf_auth_core.h"
#include "rf_auth_limit.h"
#include "rf_auth_priv.h"
#include "rf_auth_reload.h"
#include "rf_session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* "secret-pw1" as SHA-512 (fast enough for a unit test). */
static char h_admin[FB_RF_HASH_MAX + 1];

static void make_hashes(void)
{
	if (!h_admin[0] && fb_rf_password_hash("secret-pw1", "$6$", h_admin, sizeof(h_admin)))
		abort();
}

static int parse(const char *text, struct fb_rf_accounts *a, char *err, size_t errsz)
{
	return fb_rf_accounts_parse(text, strlen(text), "accts", a, err, errsz);
}

static void accounts_file_parsed(void)
{
	char text[1024], err[256];
	struct fb_rf_accounts a;
	make_hashes();
	snprintf(text, sizeof(text),
		 "# accounts\n\n  admin:Administrator:%s  \r\nops:Operator:%s\nro:ReadOnly:!%s", h_admin,
		 h_admin, h_admin);
	CHECK_EQ(parse(text, &a, err, sizeof(err)), 0);
	CHECK_EQ(a.n, 3);
	CHECK_STR(a.v[0].user, "admin");
	CHECK_EQ(a.v[0].role, FB_RF_ROLE_ADMINISTRATOR);
	CHECK_EQ(a.v[1].role, FB_RF_ROLE_OPERATOR);
	CHECK_EQ(a.v[2].role, FB_RF_ROLE_READONLY);
	CHECK(a.v[0].enabled && !a.v[2].enabled);
	CHECK_STR(a.v[2].hash, h_admin); /* without the '!' */
	CHECK(fb_rf_account_find(&a, "ops") == &a.v[1]);
	CHECK(fb_rf_account_find(&a, "nobody") == NULL);
	CHECK(!a.v[0].pw_change);
	fb_rf_accounts_free(&a);
	/* A fourth field 0: the password must change first; anything else is refused. */
	snprintf(text, sizeof(text), "fresh:Operator:%s:0\nold:ReadOnly:!%s:0", h_admin, h_admin);
	CHECK_EQ(parse(text, &a, err, sizeof(err)), 0);
	CHECK(a.v[0].pw_change && a.v[0].enabled && a.v[1].pw_change && !a.v[1].enabled);
	CHECK_STR(a.v[0].hash, h_admin);
	fb_rf_accounts_free(&a);
	snprintf(text, sizeof(text), "fresh:Operator:%s:1", h_admin);
	CHECK_EQ(parse(text, &a, err, sizeof(err)), FB_EMALFORMED);
	CHECK(strstr(err, "accts:1: user fresh: the fourth field") != NULL);
}

static void accounts_file_errors_name_the_line(void)
{
	char text[1024], err[256];
	struct fb_rf_accounts a;
	make_hashes();
	static const struct {
		const char *fmt, *want;
	} bad[] = {
		{ "admin:Administrator\n", "accts:1: expected USER:ROLE:HASH" },
		{ "#\nadmin:Root:%s\n", "accts:2: user admin: role must be" },
		{ "-x:ReadOnly:%s\n", "accts:1: bad user name" },
		{ "a b:ReadOnly:%s\n", "accts:1: bad user name" },
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:ReadOnly:%s\n", "accts:1: bad user name" },
		{ "admin:ReadOnly:secret\n", "accts:1: user admin: the password is not a crypt(3) hash" },
		{ "admin:ReadOnly:abJnggxhB/yWI\n", "not a crypt(3) hash" }, /* DES */
		{ "admin:ReadOnly:\n", "not a crypt(3) hash" },
		{ "admin:ReadOnly:%s\nadmin:Operator:%s\n", "accts:2: user admin is listed twice" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i].fmt, h_admin, h_admin);
		err[0] = '\0';
		int rc = parse(text, &a, err, sizeof(err));
		if (rc != FB_EMALFORMED || !strstr(err, bad[i].want))
			FB_TEST_FAIL_("  case %zu: rc %d err '%s', want '%s'\n", i, rc, err, bad[i].want);
		CHECK(a.v == NULL && a.n == 0);
	}
	CHECK_EQ(parse("a:ReadOnly:$6$x\0y\n", &a, err, sizeof(err)), 0); /* strlen stops at NUL */
	fb_rf_accounts_free(&a);
	CHECK_EQ(fb_rf_accounts_parse("a:ReadOnly:$6$x\0y\n", 17, "accts", &a, err, sizeof(err)),
		 FB_EMALFORMED);
	CHECK(strstr(err, "NUL") != NULL);
}

static void accounts_file_must_be_owner_only(void)
{
	char path[256], text[512], err[256];
	struct fb_rf_accounts a;
	make_hashes();
	snprintf(path, sizeof(path), "%s/accounts", fbt_dir());
	int n = snprintf(text, sizeof(text), "admin:Administrator:%s\n", h_admin);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, text, (size_t)n), n);
	close(fd);
	CHECK_EQ(chmod(path, 0644), 0);
	CHECK_EQ(fb_rf_accounts_load(path, &a, err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "mode 0644 lets group or others read or write password hashes") != NULL);
	CHECK(strstr(err, "chmod 600") != NULL);
	CHECK_EQ(chmod(path, 0640), 0);
	CHECK_EQ(fb_rf_accounts_load(path, &a, err, sizeof(err)), FB_ECONFIG);
	CHECK_EQ(chmod(path, 0600), 0);
	CHECK_EQ(fb_rf_accounts_load(path, &a, err, sizeof(err)), 0);
	CHECK_EQ(a.n, 1);
	fb_rf_accounts_free(&a);
	snprintf(path, sizeof(path), "%s/missing", fbt_dir());
	CHECK_EQ(fb_rf_accounts_load(path, &a, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "missing") != NULL);
}

static void passwords_hash_and_verify(void)
{
	char y[FB_RF_HASH_MAX + 1], s6[FB_RF_HASH_MAX + 1], s6b[FB_RF_HASH_MAX + 1];
	CHECK_EQ(fb_rf_password_hash("correct horse", "$y$", y, sizeof(y)), 0);
	CHECK(strncmp(y, "$y$", 3) == 0);
	CHECK(fb_rf_password_check(y, "correct horse"));
	CHECK(!fb_rf_password_check(y, "correct horsE"));
	CHECK_EQ(fb_rf_password_hash("correct horse", "$6$", s6, sizeof(s6)), 0);
	CHECK_EQ(fb_rf_password_hash("correct horse", "$6$", s6b, sizeof(s6b)), 0);
	CHECK(strncmp(s6, "$6$", 3) == 0);
	CHECK(strcmp(s6, s6b) != 0); /* a fresh salt each time */
	CHECK(fb_rf_password_check(s6, "correct horse"));
	CHECK(!fb_rf_password_check(s6, ""));
	CHECK(!fb_rf_password_check("$6$", "correct horse"));
	CHECK(!fb_rf_password_check("*", "correct horse"));
	CHECK_EQ(fb_rf_password_hash("short", "$y$", y, sizeof(y)), -EINVAL);
	CHECK_EQ(fb_rf_password_hash("correct horse", "$6$", y, 10), -ENOSPC);
}

static void verify_checks_user_password_and_enabled(void)
{
	char text[1024], err[256];
	struct fb_rf_accounts a;
	const struct fb_rf_account *who;
	make_hashes();
	snprintf(text, sizeof(text), "admin:Administrator:%s\nro:ReadOnly:!%s\n", h_admin, h_admin);
	CHECK_EQ(parse(text, &a, err, sizeof(err)), 0);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw1", 1000, &who), FB_RF_VERIFY_OK);
	CHECK(who == &a.v[0]);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw2", 1000, &who), FB_RF_VERIFY_BAD);
	CHECK(who == NULL);
	CHECK_EQ(fb_rf_account_verify(&a, "nobody", "secret-pw1", 1000, &who), FB_RF_VERIFY_BAD);
	CHECK_EQ(fb_rf_account_verify(&a, "ro", "secret-pw1", 1000, &who), FB_RF_VERIFY_BAD);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "", 1000, NULL), FB_RF_VERIFY_BAD);
	fb_rf_accounts_free(&a);
}

/* The digest cache answers the same password without crypt(3), and only
 * that password, and only until it expires: forge a hash that no longer
 * matches to see which path answered. */
static void verified_password_cache_is_exact_and_expires(void)
{
	char text[1024], err[256];
	struct fb_rf_accounts a;
	make_hashes();
	snprintf(text, sizeof(text), "admin:Administrator:%s\n", h_admin);
	CHECK_EQ(parse(text, &a, err, sizeof(err)), 0);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw1", 1000, NULL), FB_RF_VERIFY_OK);
	a.v[0].hash[strlen(a.v[0].hash) - 1] ^= 1; /* crypt(3) would refuse now */
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw1", 2000, NULL), FB_RF_VERIFY_OK);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw1x", 2000, NULL), FB_RF_VERIFY_BAD);
	CHECK_EQ(fb_rf_account_verify(&a, "admin", "secret-pw1", 1000 + FB_RF_VERIFIED_TTL_MS, NULL),
		 FB_RF_VERIFY_BAD);
	fb_rf_accounts_free(&a);
}

static void upsert_replaces_or_appends(void)
{
	char *out;
	size_t n;
	const char *old = "# head\nadmin:ReadOnly:$6$a$b\nops:Operator:$6$c$d";
	CHECK_EQ(fb_rf_accounts_upsert(old, strlen(old), "admin", "Administrator", "$y$x$y", 1, &out,
				       &n), 0);
	CHECK_STR(out, "# head\nadmin:Administrator:$y$x$y\nops:Operator:$6$c$d\n");
	CHECK_EQ(n, strlen(out));
	free(out);
	CHECK_EQ(fb_rf_accounts_upsert(old, strlen(old), "new", "ReadOnly", "$y$x$y", 1, &out, &n), 0);
	CHECK_STR(out, "# head\nadmin:ReadOnly:$6$a$b\nops:Operator:$6$c$d\nnew:ReadOnly:$y$x$y\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_upsert(NULL, 0, "new", "ReadOnly", "$y$x$y", 1, &out, &n), 0);
	CHECK_STR(out, "new:ReadOnly:$y$x$y\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_upsert(old, strlen(old), "ops", "ReadOnly", "$6$c$d", 0, &out, &n), 0);
	CHECK_STR(out, "# head\nadmin:ReadOnly:$6$a$b\nops:ReadOnly:!$6$c$d\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_upsert(old, strlen(old), "ops", "Operator", "$6$c$d",
				       FB_RF_ACCT_ENABLED | FB_RF_ACCT_PW_CHANGE, &out, &n), 0);
	CHECK_STR(out, "# head\nadmin:ReadOnly:$6$a$b\nops:Operator:$6$c$d:0\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_remove(old, strlen(old), "admin", &out, &n), 0);
	CHECK_STR(out, "# head\nops:Operator:$6$c$d\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_remove(old, strlen(old), "adm", &out, &n), 0); /* not a prefix match */
	CHECK_STR(out, "# head\nadmin:ReadOnly:$6$a$b\nops:Operator:$6$c$d\n");
	free(out);
	CHECK_EQ(fb_rf_accounts_upsert(NULL, 0, "new", "Root", "$y$x$y", 1, &out, &n), -EINVAL);
	CHECK_EQ(fb_rf_accounts_upsert(NULL, 0, "a:b", "ReadOnly", "$y$x$y", 1, &out, &n), -EINVAL);
	CHECK_EQ(fb_rf_accounts_upsert(NULL, 0, "new", "ReadOnly", "plain", 1, &out, &n), -EINVAL);
}

static void roles_hold_the_standard_privileges(void)
{
	unsigned adm = fb_rf_role_privs(FB_RF_ROLE_ADMINISTRATOR);
	unsigned op = fb_rf_role_privs(FB_RF_ROLE_OPERATOR);
	unsigned ro = fb_rf_role_privs(FB_RF_ROLE_READONLY);
	unsigned login = FB_RF_PRIV_BIT(FB_RF_PRIV_LOGIN), self = FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_SELF);
	unsigned comp = FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_COMPONENTS);
	unsigned users = FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_USERS);
	unsigned mgr = FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_MANAGER);
	CHECK_EQ(adm, login | self | comp | users | mgr);
	CHECK_EQ(op, login | self | comp);
	CHECK_EQ(ro, login | self);
	CHECK_EQ(fb_rf_role_privs(7), 0);
	CHECK_EQ(fb_rf_role_parse("Operator"), FB_RF_ROLE_OPERATOR);
	CHECK_EQ(fb_rf_role_parse("operator"), -1);
	CHECK_STR(fb_rf_role_name(FB_RF_ROLE_READONLY), "ReadOnly");
	CHECK_STR(fb_rf_priv_name(FB_RF_PRIV_CONFIGURE_COMPONENTS), "ConfigureComponents");
	CHECK_STR(fb_rf_priv_name(FB_RF_PRIVS), "?");
}

static void sessions_create_auth_delete(void)
{
	struct fb_rf_sessions s;
	const struct fb_rf_session *x, *y;
	char tok[FB_RF_TOKEN_LEN + 1], tok2[FB_RF_TOKEN_LEN + 1];
	CHECK_EQ(fb_rf_sessions_init(&s, 4, 60), 0);
	CHECK_EQ(fb_rf_session_create(&s, "admin", FB_RF_ROLE_ADMINISTRATOR, "127.0.0.1", 1000, tok,
				      &x), 0);
	CHECK_EQ(strlen(tok), FB_RF_TOKEN_LEN);
	CHECK_EQ(strlen(x->id), FB_RF_SESSION_ID_LEN);
	CHECK(strstr(tok, x->id) == NULL);
	/* only the digest is kept: the token's text is nowhere in the slot */
	CHECK(memmem(x, sizeof(*x), tok, 16) == NULL);
	CHECK(fb_rf_session_auth(&s, tok, 2000) == x);
	CHECK_STR(x->user, "admin");
	CHECK_EQ(x->role, FB_RF_ROLE_ADMINISTRATOR);
	CHECK_EQ(fb_rf_session_create(&s, "ro", FB_RF_ROLE_READONLY, "::1", 2000, tok2, &y), 0);
	CHECK(strcmp(tok, tok2) != 0 && strcmp(x->id, y->id) != 0);
	CHECK(fb_rf_session_auth(&s, tok2, 2000) == y);
	tok[5] ^= 1;
	CHECK(fb_rf_session_auth(&s, tok, 2000) == NULL);
	tok[5] ^= 1;
	CHECK(fb_rf_session_auth(&s, "", 2000) == NULL);
	CHECK(fb_rf_session_get(&s, x->id, 2000) == x);
	char id[FB_RF_SESSION_ID_LEN + 1];
	memcpy(id, x->id, sizeof(id));
	CHECK_EQ(fb_rf_session_delete(&s, id), 0);
	CHECK(fb_rf_session_auth(&s, tok, 2000) == NULL); /* a deleted session's token */
	CHECK(fb_rf_session_get(&s, id, 2000) == NULL);
	CHECK_EQ(fb_rf_session_delete(&s, id), -ENOENT);
	CHECK(fb_rf_session_auth(&s, tok2, 2000) == y);
	fb_rf_sessions_end_user(&s, "ro");
	CHECK(fb_rf_session_auth(&s, tok2, 2000) == NULL);
	fb_rf_sessions_free(&s);
}

static void sessions_time_out_when_idle(void)
{
	struct fb_rf_sessions s;
	const struct fb_rf_session *x;
	char tok[FB_RF_TOKEN_LEN + 1];
	CHECK_EQ(fb_rf_sessions_init(&s, 2, 30), 0);
	CHECK_EQ(fb_rf_session_create(&s, "a", 0, "p", 0, tok, &x), 0);
	CHECK(fb_rf_session_auth(&s, tok, 29999) == x); /* use moves the deadline */
	CHECK(fb_rf_session_auth(&s, tok, 59998) == x);
	CHECK_EQ(fb_rf_sessions_expire(&s, 60000), 1);
	CHECK(fb_rf_session_auth(&s, tok, 89998 + 1) == NULL);
	CHECK_EQ(fb_rf_sessions_expire(&s, 89999), 0);
	CHECK_EQ(fb_rf_sessions_set_timeout(&s, 29), -ERANGE);
	CHECK_EQ(fb_rf_sessions_set_timeout(&s, 86401), -ERANGE);
	CHECK_EQ(fb_rf_sessions_set_timeout(&s, 600), 0);
	CHECK_EQ(s.timeout_s, 600);
	fb_rf_sessions_free(&s);
}

static void sessions_are_bounded(void)
{
	struct fb_rf_sessions s;
	const struct fb_rf_session *x;
	char tok[FB_RF_TOKEN_LEN + 1];
	CHECK_EQ(fb_rf_sessions_init(&s, 2, 30), 0);
	CHECK_EQ(fb_rf_session_create(&s, "a", 0, "p", 0, tok, &x), 0);
	CHECK_EQ(fb_rf_session_create(&s, "a", 0, "p", 0, tok, &x), 0);
	CHECK_EQ(fb_rf_session_create(&s, "a", 0, "p", 1000, tok, &x), -ENOSPC);
	CHECK_EQ(fb_rf_session_create(&s, "a", 0, "p", 30000, tok, &x), 0); /* expired ones go */
	fb_rf_sessions_free(&s);
}

static void failed_logins_lock_the_pair(void)
{
	static struct fb_rf_auth_limit l;
	fb_rf_auth_limit_init(&l, 3, 60000, 30000);
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.1", "admin", 0), 1);
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.1", "admin", 1000), 2);
	CHECK_EQ(fb_rf_auth_limit_locked(&l, "10.0.0.1", "admin", 1000), 0);
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.1", "admin", 2000), 3);
	CHECK_EQ(fb_rf_auth_limit_locked(&l, "10.0.0.1", "admin", 2000), 30000);
	CHECK_EQ(fb_rf_auth_limit_locked(&l, "10.0.0.1", "ops", 2000), 0);  /* other user */
	CHECK_EQ(fb_rf_auth_limit_locked(&l, "10.0.0.2", "admin", 2000), 0); /* other peer */
	CHECK_EQ(fb_rf_auth_limit_locked(&l, "10.0.0.1", "admin", 32000), 0);
	/* a window that has passed starts again */
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.2", "admin", 0), 1);
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.2", "admin", 61000), 1);
	fb_rf_auth_limit_ok(&l, "10.0.0.2", "admin");
	CHECK_EQ(fb_rf_auth_limit_fail(&l, "10.0.0.2", "admin", 62000), 1);
	/* a full table forgets the oldest unlocked pair, never a lock */
	char peer[32];
	for (int i = 0; i < FB_RF_LIMIT_SLOTS + 10; i++) {
		snprintf(peer, sizeof(peer), "p%d", i);
		fb_rf_auth_limit_fail(&l, peer, "x", 100000 + (uint64_t)i);
	}
	fb_rf_auth_limit_fail(&l, "10.0.0.3", "admin", 200000);
	fb_rf_auth_limit_fail(&l, "10.0.0.3", "admin", 200000);
	fb_rf_auth_limit_fail(&l, "10.0.0.3", "admin", 200000);
	for (int i = 0; i < FB_RF_LIMIT_SLOTS; i++) {
		snprintf(peer, sizeof(peer), "q%d", i);
		fb_rf_auth_limit_fail(&l, peer, "x", 200001 + (uint64_t)i);
	}
	CHECK(fb_rf_auth_limit_locked(&l, "10.0.0.3", "admin", 201000) > 0);
}

/* A core with admin/ops/ro (passwords "<user>-password") from a real file. */
static int core_with_accounts(struct fb_rf_auth_core *c, int anonymous_reads)
{
	static struct fb_config cfg;
	char text[2048], err[256], h[3][FB_RF_HASH_MAX + 1];
	const char *users[3] = { "admin", "ops", "ro" };
	for (int i = 0; i < 3; i++) {
		char pw[64];
		snprintf(pw, sizeof(pw), "%s-password", users[i]);
		if (fb_rf_password_hash(pw, "$6$", h[i], sizeof(h[i])))
			return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.rf_accounts, sizeof(cfg.rf_accounts), "%s/core-accounts", fbt_dir());
	int n = snprintf(text, sizeof(text), "admin:Administrator:%s\nops:Operator:%s\nro:ReadOnly:%s\n",
			 h[0], h[1], h[2]);
	int fd = open(cfg.rf_accounts, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, (size_t)n) != n)
		return -1;
	close(fd);
	cfg.rf_anonymous_reads = anonymous_reads;
	cfg.rf_session_timeout_s = 60;
	cfg.rf_max_sessions = 8;
	cfg.rf_login_failures = 3;
	cfg.rf_login_lockout_s = 10;
	int rc = fb_rf_auth_core_init(c, &cfg, err, sizeof(err));
	if (rc)
		fprintf(stderr, "  %s\n", err);
	return rc;
}

/* "Basic " + base64("user:pass") */
static const char *basic(const char *user, const char *pass)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static char out[512];
	char in[256];
	size_t n = (size_t)snprintf(in, sizeof(in), "%s:%s", user, pass), o = 6;
	memcpy(out, "Basic ", 6);
	for (size_t i = 0; i < n; i += 3) {
		unsigned w = (unsigned char)in[i] << 16 | (i + 1 < n ? (unsigned char)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)in[i + 2] : 0);
		out[o++] = tbl[w >> 18 & 63];
		out[o++] = tbl[w >> 12 & 63];
		out[o++] = i + 1 < n ? tbl[w >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? tbl[w & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

static void basic_header_decoded_strictly(void)
{
	char u[40], p[300];
	CHECK_EQ(fb_rf_basic_decode(basic("admin", "a:b c"), u, sizeof(u), p, sizeof(p)), 0);
	CHECK_STR(u, "admin");
	CHECK_STR(p, "a:b c");
	CHECK_EQ(fb_rf_basic_decode("basic YTpi", u, sizeof(u), p, sizeof(p)), 0); /* a:b */
	CHECK_STR(p, "b");
	CHECK_EQ(fb_rf_basic_decode("Bearer YTpi", u, sizeof(u), p, sizeof(p)), -EINVAL);
	CHECK_EQ(fb_rf_basic_decode("Basic YTpi=", u, sizeof(u), p, sizeof(p)), -EINVAL);
	CHECK_EQ(fb_rf_basic_decode("Basic YWJj", u, sizeof(u), p, sizeof(p)), -EINVAL); /* no ':' */
	CHECK_EQ(fb_rf_basic_decode("Basic Y=pi", u, sizeof(u), p, sizeof(p)), -EINVAL);
	CHECK_EQ(fb_rf_basic_decode("Basic ", u, sizeof(u), p, sizeof(p)), -EINVAL);
	CHECK_EQ(fb_rf_basic_decode("Basic YQA6Yg==", u, sizeof(u), p, sizeof(p)), -EINVAL); /* NUL */
	CHECK_EQ(fb_rf_basic_decode(basic("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x"), u,
				    sizeof(u), p, sizeof(p)), -EINVAL);
}

static void policy_public_login_and_privileges(void)
{
	struct fb_rf_auth_core c;
	struct fb_rf_caller who;
	CHECK_EQ(core_with_accounts(&c, 0), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_NONE, 1, 0, &who), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who), FB_RF_AUTH_NO_SESSION);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ro", "ro-password"), NULL, "p", FB_RF_PRIV_LOGIN, 1,
				       0, &who), 0);
	CHECK(who.authenticated && who.role == FB_RF_ROLE_READONLY);
	CHECK_STR(who.user, "ro");
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ro", "ro-password"), NULL, "p",
				       FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0, &who), FB_RF_AUTH_FORBIDDEN);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), NULL, "p",
				       FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0, &who), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), NULL, "p",
				       FB_RF_PRIV_CONFIGURE_USERS, 0, 0, &who), FB_RF_AUTH_FORBIDDEN);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("admin", "admin-password"), NULL, "p",
				       FB_RF_PRIV_CONFIGURE_USERS, 0, 0, &who), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("admin", "ops-password"), NULL, "p",
				       FB_RF_PRIV_LOGIN, 1, 0, &who), FB_RF_AUTH_NO_SESSION);
	CHECK(!who.authenticated);
	CHECK_EQ(fb_rf_auth_core_check(&c, "Bearer x", NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who), FB_RF_AUTH_NO_SESSION);
	fb_rf_auth_core_free(&c);
}

static void anonymous_reads_only_when_opted_in(void)
{
	struct fb_rf_auth_core c;
	CHECK_EQ(core_with_accounts(&c, 1), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, NULL), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0,
				       NULL), FB_RF_AUTH_NO_SESSION);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_CONFIGURE_USERS, 1, 0, NULL),
		 FB_RF_AUTH_NO_SESSION); /* reading accounts is not an anonymous read */
	/* bad credentials are refused even where anonymous would pass */
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ro", "nope-nope"), NULL, "p", FB_RF_PRIV_LOGIN, 1,
				       0, NULL), FB_RF_AUTH_NO_SESSION);
	fb_rf_auth_core_free(&c);
}

static void no_accounts_file_lets_everything_through(void)
{
	static struct fb_config cfg;
	struct fb_rf_auth_core c;
	char err[256];
	memset(&cfg, 0, sizeof(cfg));
	cfg.rf_session_timeout_s = 60;
	cfg.rf_max_sessions = 1;
	cfg.rf_login_failures = 3;
	CHECK_EQ(fb_rf_auth_core_init(&c, &cfg, err, sizeof(err)), 0);
	CHECK(!c.enabled);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0,
				       NULL), 0);
	char tok[FB_RF_TOKEN_LEN + 1];
	const struct fb_rf_session *s;
	CHECK_EQ(fb_rf_auth_core_login(&c, "admin", "whatever1", "p", 0, tok, &s), FB_RF_AUTH_NO_SESSION);
	fb_rf_auth_core_free(&c);
}

static void failed_logins_lock_out_then_expire(void)
{
	struct fb_rf_auth_core c;
	CHECK_EQ(core_with_accounts(&c, 0), 0);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "wrong-one"), NULL, "10.1.1.1",
					       FB_RF_PRIV_LOGIN, 1, 1000, NULL), FB_RF_AUTH_NO_SESSION);
	/* locked: the right password is refused too, from that address */
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), NULL, "10.1.1.1",
				       FB_RF_PRIV_LOGIN, 1, 2000, NULL), FB_RF_AUTH_NO_SESSION);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), NULL, "10.1.1.2",
				       FB_RF_PRIV_LOGIN, 1, 2000, NULL), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), NULL, "10.1.1.1",
				       FB_RF_PRIV_LOGIN, 1, 11001, NULL), 0);
	fb_rf_auth_core_free(&c);
}

static void session_login_use_and_delete(void)
{
	struct fb_rf_auth_core c;
	struct fb_rf_caller who;
	char tok[FB_RF_TOKEN_LEN + 1];
	const struct fb_rf_session *s;
	CHECK_EQ(core_with_accounts(&c, 0), 0);
	CHECK_EQ(fb_rf_auth_core_login(&c, "ops", "bad-password", "p", 0, tok, &s), FB_RF_AUTH_NO_SESSION);
	CHECK_EQ(fb_rf_auth_core_login(&c, "ops", "ops-password", "p", 0, tok, &s), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, tok, "p", FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 100,
				       &who), 0);
	CHECK_STR(who.session_id, s->id);
	CHECK_STR(who.user, "ops");
	/* a token wins over Basic: a bad token is 401 even with good Basic */
	CHECK_EQ(fb_rf_auth_core_check(&c, basic("ops", "ops-password"), "00", "p",
				       FB_RF_PRIV_LOGIN, 1, 100, NULL), FB_RF_AUTH_NO_SESSION);
	char id[FB_RF_SESSION_ID_LEN + 1];
	memcpy(id, s->id, sizeof(id));
	/* a stream opened with the token answers to the session: live until
	 * the session is deleted, and the deletion is counted (the server's cue
	 * to look, ws_server.c) */
	struct fb_rf_cred cr;
	fb_rf_cred_of(&c, NULL, tok, 150, &cr);
	CHECK_EQ(cr.kind, FB_RF_CRED_USER);
	CHECK_STR(cr.session, id);
	CHECK(fb_rf_cred_live(&c, &cr));
	uint64_t ended = c.sessions.ended;
	CHECK_EQ(fb_rf_session_delete(&c.sessions, id), 0);
	CHECK_EQ(c.sessions.ended, ended + 1);
	CHECK(!fb_rf_session_exists(&c.sessions, id));
	CHECK(!fb_rf_cred_live(&c, &cr));
	cr.session[0] = '\0'; /* the account alone (Basic, or an SSE stream) is still live */
	CHECK(fb_rf_cred_live(&c, &cr));
	ended = c.sessions.ended; /* an account change with no session is a cue as well */
	fb_rf_sessions_end_user(&c.sessions, "nobody");
	CHECK_EQ(c.sessions.ended, ended + 1);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, tok, "p", FB_RF_PRIV_LOGIN, 1, 200, NULL), FB_RF_AUTH_NO_SESSION);
	/* idle past the timeout */
	CHECK_EQ(fb_rf_auth_core_login(&c, "ro", "ro-password", "p", 0, tok, &s), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, tok, "p", FB_RF_PRIV_LOGIN, 1, 59999, NULL), 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, tok, "p", FB_RF_PRIV_LOGIN, 1, 119999, NULL), FB_RF_AUTH_NO_SESSION);
	fb_rf_auth_core_free(&c);
}

/* Changes go to the file first, keep its comments, and change nothing
 * when the file cannot be read (here: someone made it group-readable). */
static void account_store_writes_the_file_then_memory(void)
{
	struct fb_rf_auth_core c;
	char err[512], h[FB_RF_HASH_MAX + 1], *text;
	size_t len;
	CHECK_EQ(core_with_accounts(&c, 0), 0);
	int fd = open(c.accounts_path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "# kept\n", 7) == 7);
	close(fd);
	CHECK_EQ(fb_rf_password_hash("newbie-password", "$6$", h, sizeof(h)), 0);
	CHECK_EQ(fb_rf_account_store_set(&c, "newbie", FB_RF_ROLE_OPERATOR, h, 1, err, sizeof(err)), 0);
	CHECK_EQ(c.accounts.n, 4);
	CHECK_EQ(fb_rf_account_verify(&c.accounts, "newbie", "newbie-password", 0, NULL), 0);
	CHECK_EQ(fb_rf_account_store_set(&c, "ro", FB_RF_ROLE_READONLY, fb_rf_account_find(&c.accounts,
				  "ro")->hash, 0, err, sizeof(err)), 0);
	CHECK(!fb_rf_account_find(&c.accounts, "ro")->enabled);
	CHECK_EQ(fb_rf_account_store_remove(&c, "ops", err, sizeof(err)), 0);
	CHECK(fb_rf_account_find(&c.accounts, "ops") == NULL);
	CHECK_EQ(fb_secret_file_read(c.accounts_path, "x", 1 << 20, &text, &len, err, sizeof(err)), 0);
	CHECK(strstr(text, "# kept\n") && strstr(text, "newbie:Operator:$6$") &&
	      strstr(text, "ro:ReadOnly:!$6$") && !strstr(text, "ops:"));
	free(text);
	struct stat st;
	CHECK(stat(c.accounts_path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_EQ(chmod(c.accounts_path, 0640), 0);
	CHECK_EQ(fb_rf_account_store_remove(&c, "admin", err, sizeof(err)), FB_ECONFIG);
	CHECK(strstr(err, "chmod 600") != NULL);
	CHECK(fb_rf_account_find(&c.accounts, "admin") != NULL);
	fb_rf_auth_core_free(&c);
}

/* HttpTokens: "NAME:ROLE:SHA256" lines; Bearer tokens found by their hash,
 * with their role's privileges; bad lines named; short or unknown tokens 401. */
static void bearer_tokens_file_and_decisions(void)
{
	static const char tok_ro[] = "4f1b3c2d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c";
	static const char tok_op[] = "operator-token-operator-token-operator-token";
	uint8_t d[FB_RF_DIGEST_LEN];
	char hex_ro[2 * FB_RF_DIGEST_LEN + 1], hex_op[2 * FB_RF_DIGEST_LEN + 1], text[512], err[256];
	CHECK_EQ(fb_rf_digest(tok_ro, strlen(tok_ro), NULL, 0, d), 0);
	fb_rf_hex(d, sizeof(d), hex_ro);
	CHECK_EQ(fb_rf_digest(tok_op, strlen(tok_op), NULL, 0, d), 0);
	fb_rf_hex(d, sizeof(d), hex_op);
	int n = snprintf(text, sizeof(text), "# tokens\n  viewer:ReadOnly:%s  # grafana\n\nslurm@h1:Operator:%s\n",
			 hex_ro, hex_op);
	struct fb_rf_bearers b;
	CHECK_EQ(fb_rf_bearers_parse(text, (size_t)n, "tok", &b, err, sizeof(err)), 0);
	CHECK_EQ(b.n, 2);
	CHECK_STR(b.v[1].name, "slurm@h1");
	CHECK(fb_rf_bearer_find(&b, tok_ro, strlen(tok_ro)) == &b.v[0]);
	CHECK(fb_rf_bearer_find(&b, tok_op, strlen(tok_op)) == &b.v[1]);
	CHECK(fb_rf_bearer_find(&b, tok_op, strlen(tok_op) - 1) == NULL);
	CHECK(fb_rf_bearer_find(&b, "short", 5) == NULL);
	fb_rf_bearers_free(&b);
	static const char *const bad[][2] = {
		{ "x:ReadOnly\n", "NAME:ROLE" },
		{ "x:Root:00\n", "unknown role" },
		{ "x:ReadOnly:1234\n", "SHA-256" },
		{ "a b:ReadOnly:1234\n", "bad name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_EQ(fb_rf_bearers_parse(bad[i][0], strlen(bad[i][0]), "tok", &b, err, sizeof(err)),
			 FB_ECONFIG);
		CHECK(strstr(err, "tok:1: ") == err && strstr(err, bad[i][1]) != NULL);
		CHECK(b.v == NULL && b.n == 0);
	}
	/* the decision: tokens alone turn logins on */
	struct fb_rf_auth_core c;
	memset(&c, 0, sizeof(c));
	CHECK_EQ(fb_rf_sessions_init(&c.sessions, 4, 60), 0);
	CHECK_EQ(fb_rf_bearers_parse(text, (size_t)n, "tok", &c.bearers, err, sizeof(err)), 0);
	c.tokens = 1;
	char hdr[128];
	struct fb_rf_caller who;
	CHECK(fb_rf_auth_core_on(&c));
	CHECK_EQ(fb_rf_auth_core_check(&c, NULL, NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who),
		 FB_RF_AUTH_NO_SESSION);
	snprintf(hdr, sizeof(hdr), "Bearer %s", tok_ro);
	CHECK_EQ(fb_rf_auth_core_check(&c, hdr, NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who), 0);
	CHECK(who.authenticated && strcmp(who.user, "viewer") == 0);
	CHECK_EQ(fb_rf_auth_core_check(&c, hdr, NULL, "p", FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0,
				       &who), FB_RF_AUTH_FORBIDDEN);
	snprintf(hdr, sizeof(hdr), "bearer  %s ", tok_op);
	CHECK_EQ(fb_rf_auth_core_check(&c, hdr, NULL, "p", FB_RF_PRIV_CONFIGURE_COMPONENTS, 0, 0,
				       &who), 0);
	snprintf(hdr, sizeof(hdr), "Bearer %s x", tok_op);
	CHECK_EQ(fb_rf_auth_core_check(&c, hdr, NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who),
		 FB_RF_AUTH_NO_SESSION);
	CHECK_EQ(fb_rf_auth_core_check(&c, "Bearer ", NULL, "p", FB_RF_PRIV_LOGIN, 1, 0, &who),
		 FB_RF_AUTH_NO_SESSION);
	fb_rf_auth_core_free(&c);
}

int main(void)
{
	RUN(accounts_file_parsed);
	RUN(accounts_file_errors_name_the_line);
	RUN(accounts_file_must_be_owner_only);
	RUN(passwords_hash_and_verify);
	RUN(verify_checks_user_password_and_enabled);
	RUN(verified_password_cache_is_exact_and_expires);
	RUN(upsert_replaces_or_appends);
	RUN(roles_hold_the_standard_privileges);
	RUN(sessions_create_auth_delete);
	RUN(sessions_time_out_when_idle);
	RUN(sessions_are_bounded);
	RUN(failed_logins_lock_the_pair);
	RUN(basic_header_decoded_strictly);
	RUN(policy_public_login_and_privileges);
	RUN(anonymous_reads_only_when_opted_in);
	RUN(no_accounts_file_lets_everything_through);
	RUN(failed_logins_lock_out_then_expire);
	RUN(session_login_use_and_delete);
	RUN(account_store_writes_the_file_then_memory);
	RUN(bearer_tokens_file_and_decisions);
	return TEST_DONE();
}
