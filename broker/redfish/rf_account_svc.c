/* rf_account_svc.c - AccountService, Accounts, Roles (see rf_account_svc.h). */
#include "rf_account_svc.h"

#include "fb_log.h"
#include "rf_account_store.h"
#include "rf_body.h"
#include "rf_service.h"
#include "rf_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define AS "/redfish/v1/AccountService"
#define ACCOUNTS AS "/Accounts"
#define ROLES AS "/Roles"

static const struct fb_rf_accounts *accounts_of(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = fb_rf_auth_core(c->svc->auth);
	return a && a->enabled ? &a->accounts : NULL;
}

static int reply(struct fb_rf_ctx *c, json_t *o, const char *type)
{
	return fb_rf_reply_resource_take(c->rep, c->req, o, type);
}

static int not_found(struct fb_rf_ctx *c, const char *type)
{
	const char *args[] = { type, c->arg[0] };
	fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	return 0;
}

int fb_rf_account_service_get(struct fb_rf_ctx *c)
{
	int on = accounts_of(c) != NULL;
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:b,s:i,s:i,s:s,s:o,s:o,s:{s:s,s:s}}", "@odata.id",
			      AS, "@odata.type", "#AccountService.v1_18_1.AccountService", "Id",
			      "AccountService", "Name", "Account Service", "ServiceEnabled", on,
			      "MinPasswordLength", FB_RF_PASSWORD_MIN, "MaxPasswordLength",
			      FB_RF_PASSWORD_MAX, "LocalAccountAuth", on ? "Enabled" : "Disabled",
			      "Accounts", fb_rf_ref(ACCOUNTS), "Roles", fb_rf_ref(ROLES), "Status",
			      "State", on ? "Enabled" : "Disabled", "Health", "OK");
	return reply(c, o, "AccountService");
}

/* Anonymous reads (RedfishAnonymousReads) do not extend to who has an
 * account: 401, as without the opt-in. */
static int anonymous(struct fb_rf_ctx *c)
{
	if (c->who.user[0] || !accounts_of(c))
		return 0;
	fb_rf_reply_error(c->rep, FB_RF_NO_VALID_SESSION, NULL, 0);
	return 1;
}

static json_t *collection(const char *path, const char *type, const char *name, json_t *members)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:o}", "@odata.id", path, "@odata.type", type, "Name",
			 name, "Members@odata.count", (json_int_t)json_array_size(members),
			 "Members", members);
}

int fb_rf_accounts_get(struct fb_rf_ctx *c)
{
	const struct fb_rf_accounts *acc = accounts_of(c);
	if (anonymous(c))
		return 0;
	json_t *members = json_array();
	char path[sizeof(ACCOUNTS) + FB_RF_USER_MAX + 2];
	for (size_t i = 0; acc && i < acc->n; i++) {
		snprintf(path, sizeof(path), ACCOUNTS "/%s", acc->v[i].user);
		json_array_append_new(members, fb_rf_ref(path));
	}
	return reply(c, collection(ACCOUNTS, "#ManagerAccountCollection.ManagerAccountCollection",
				   "Accounts", members), "ManagerAccountCollection");
}

static json_t *account_json(const struct fb_rf_account *a)
{
	char path[sizeof(ACCOUNTS) + FB_RF_USER_MAX + 2], role[sizeof(ROLES) + 32];
	snprintf(path, sizeof(path), ACCOUNTS "/%s", a->user);
	snprintf(role, sizeof(role), ROLES "/%s", fb_rf_role_name(a->role));
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:b,s:n,s:[s],s:{s:o}}", "@odata.id",
			 path, "@odata.type", "#ManagerAccount.v1_14_1.ManagerAccount", "Id", a->user,
			 "Name", "User Account", "UserName", a->user, "RoleId",
			 fb_rf_role_name(a->role), "Enabled", a->enabled, "Locked", 0,
			 "PasswordChangeRequired", a->pw_change, "Password", "AccountTypes", "Redfish",
			 "Links", "Role", fb_rf_ref(role));
}

static int may_manage(const struct fb_rf_ctx *c)
{
	return (c->who.privs & FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_USERS)) != 0;
}

/* The account {user} the caller may see (its own, or any with
 * ConfigureUsers), or NULL with 404/403 in rep. */
static const struct fb_rf_account *visible(struct fb_rf_ctx *c)
{
	const struct fb_rf_accounts *acc = accounts_of(c);
	if (anonymous(c))
		return NULL;
	const struct fb_rf_account *a = acc ? fb_rf_account_find(acc, c->arg[0]) : NULL;
	if (!a) {
		not_found(c, "ManagerAccount");
		return NULL;
	}
	if (!may_manage(c) && strcmp(c->who.user, a->user) != 0) {
		fb_rf_reply_error(c->rep, FB_RF_INSUFFICIENT_PRIVILEGE, NULL, 0);
		return NULL;
	}
	return a;
}

int fb_rf_account_get_one(struct fb_rf_ctx *c)
{
	const struct fb_rf_account *a = visible(c);
	return a ? reply(c, account_json(a), "ManagerAccount") : 0;
}

static struct fb_rf_auth_core *core_of(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = fb_rf_auth_core(c->svc->auth);
	return a && a->enabled ? a : NULL;
}

/* POST requires the first three; a PATCH may give any writable one. */
static const struct fb_rf_prop account_props[] = {
	{ "UserName", FB_RF_T_STRING, FB_RF_P_REQUIRED },
	{ "Password", FB_RF_T_STRING, FB_RF_P_REQUIRED },
	{ "RoleId", FB_RF_T_STRING, FB_RF_P_REQUIRED },
	{ "Enabled", FB_RF_T_BOOL, 0 },
	{ "PasswordChangeRequired", FB_RF_T_BOOL, 0 },
	FB_RF_PROPS_RESOURCE,
	{ "Locked", FB_RF_T_BOOL, FB_RF_P_READONLY },
	{ "AccountTypes", FB_RF_T_ARRAY, FB_RF_P_READONLY },
	{ "Links", FB_RF_T_OBJECT, FB_RF_P_READONLY },
	{ NULL, 0, 0 },
};

/* A value check failed: 400 naming the property (never echoing a password). */
static int bad_value(struct fb_rf_ctx *c, enum fb_rf_msg m, const char *value, const char *prop)
{
	const char *args[] = { value, prop };
	fb_rf_reply_error(c->rep, m, args, 2);
	return 0;
}

/* Role and password from the body (either may be absent for a PATCH).
 * 1 if fine (*role -1 when absent, hash "" when no password), else 0
 * with the error in rep. */
static int new_values(struct fb_rf_ctx *c, json_t *o, int *role, char *hash, size_t hsz)
{
	json_t *r = json_object_get(o, "RoleId"), *p = json_object_get(o, "Password");
	*role = -1;
	hash[0] = '\0';
	if (r && (*role = fb_rf_role_parse(json_string_value(r))) < 0)
		return bad_value(c, FB_RF_PROPERTY_VALUE_NOT_IN_LIST, json_string_value(r), "RoleId");
	if (p) {
		int rc = fb_rf_password_hash(json_string_value(p), "$y$", hash, hsz);
		if (rc == -EINVAL)
			return bad_value(c, FB_RF_PROPERTY_VALUE_FORMAT_ERROR, "(hidden)", "Password");
		if (rc) {
			fb_rf_reply_error(c->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
			return 0;
		}
	}
	return 1;
}

/* Write the change; on failure 500 and a log line naming the file. */
static int stored(struct fb_rf_ctx *c, int rc, const char *err, const char *what)
{
	if (!rc) {
		fb_log_info("redfish: %s by '%s'", what, c->who.user);
		return 1;
	}
	fb_log_err("redfish: %s by '%s' failed: %s", what, c->who.user, err);
	fb_rf_reply_error(c->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
	return 0;
}

int fb_rf_accounts_post(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	char hash[FB_RF_HASH_MAX + 1], err[512], what[96];
	json_t *o = NULL;
	int role;
	if (!a) {
		fb_rf_reply_error(c->rep, FB_RF_SERVICE_TEMPORARILY_UNAVAILABLE,
				  (const char *[]){ "0" }, 1);
		return 0;
	}
	if (fb_rf_body_object(c->req, c->rep, &o), !o)
		return 0;
	const char *user = json_string_value(json_object_get(o, "UserName"));
	json_t *en = json_object_get(o, "Enabled");
	int flags = (!en || json_is_true(en) ? FB_RF_ACCT_ENABLED : 0) |
		    (json_is_true(json_object_get(o, "PasswordChangeRequired")) ? FB_RF_ACCT_PW_CHANGE
										: 0);
	int ok = fb_rf_body_check(o, account_props, 1, c->rep);
	if (ok && !fb_rf_user_valid(user))
		ok = bad_value(c, FB_RF_PROPERTY_VALUE_FORMAT_ERROR, user, "UserName");
	if (ok && fb_rf_account_find(&a->accounts, user)) {
		const char *args[] = { "ManagerAccount", "UserName", user };
		fb_rf_reply_error(c->rep, FB_RF_RESOURCE_ALREADY_EXISTS, args, 3);
		ok = 0;
	}
	if (ok)
		ok = new_values(c, o, &role, hash, sizeof(hash));
	snprintf(what, sizeof(what), "account '%s' created", user ? user : "");
	if (ok)
		ok = stored(c, fb_rf_account_store_set(a, user, role, hash, flags, err, sizeof(err)), err,
			    what);
	const struct fb_rf_account *made = ok ? fb_rf_account_find(&a->accounts, user) : NULL;
	json_decref(o);
	if (!made)
		return 0;
	json_t *doc = account_json(made);
	int rc = !doc || fb_rf_reply_header(c->rep, "Location", json_string_value(json_object_get(
								    doc, "@odata.id"))) ||
		 fb_rf_reply_json(c->rep, 201, doc);
	json_decref(doc);
	return rc ? -1 : 0;
}

/* 1 when the PATCH may go on: the body is valid and the caller may change
 * what it names (RoleId and Enabled need ConfigureUsers, even on one's own
 * account: ConfigureSelf is the password only). */
static int patch_allowed(struct fb_rf_ctx *c, const struct fb_rf_account *a, json_t *o)
{
	char etag[FB_RF_ETAG_MAX];
	json_t *cur = account_json(a);
	int rc = cur ? fb_rf_auth_etag(cur, etag) : -1;
	json_decref(cur);
	if (rc) {
		fb_rf_reply_error(c->rep, FB_RF_INTERNAL_ERROR, NULL, 0);
		return 0;
	}
	if (!fb_rf_reply_if_match(c->rep, c->req, etag) || !fb_rf_body_check(o, account_props, 0, c->rep))
		return 0;
	/* accounts are not renamed: the name is the file's key and the URI's */
	json_t *name = json_object_get(o, "UserName");
	if (name && strcmp(json_string_value(name), a->user) != 0) {
		const char *args[] = { "UserName" };
		fb_rf_reply_error(c->rep, FB_RF_PROPERTY_NOT_WRITABLE, args, 1);
		return 0;
	}
	/* Before its password changes, an account may PATCH its Password only. */
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		if (c->who.pw_change && strcmp(key, "Password") != 0 && key[0] != '@') {
			char acct[sizeof(ACCOUNTS) + FB_RF_USER_MAX + 2];
			snprintf(acct, sizeof(acct), ACCOUNTS "/%s", a->user);
			const char *args[] = { acct };
			fb_rf_reply_error(c->rep, FB_RF_PASSWORD_CHANGE_REQUIRED, args, 1);
			return 0;
		}
	}
	if (!may_manage(c) && (json_object_get(o, "RoleId") || json_object_get(o, "Enabled") ||
			       json_object_get(o, "PasswordChangeRequired"))) {
		fb_rf_reply_error(c->rep, FB_RF_INSUFFICIENT_PRIVILEGE, NULL, 0);
		return 0;
	}
	return 1;
}

int fb_rf_account_patch(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	const struct fb_rf_account *cur = visible(c);
	char hash[FB_RF_HASH_MAX + 1], err[512], what[96], user[FB_RF_USER_MAX + 1];
	json_t *o = NULL;
	int role;
	if (!cur)
		return 0;
	if (fb_rf_body_object(c->req, c->rep, &o), !o)
		return 0;
	if (!patch_allowed(c, cur, o) || !new_values(c, o, &role, hash, sizeof(hash))) {
		json_decref(o);
		return 0;
	}
	json_t *en = json_object_get(o, "Enabled"), *pc = json_object_get(o, "PasswordChangeRequired");
	int enabled = en ? json_is_true(en) : cur->enabled;
	/* A new password clears it, unless the same PATCH sets it (an
	 * administrator handing out an initial password). */
	int pw_change = pc ? json_is_true(pc) : hash[0] ? 0 : cur->pw_change;
	int flags = (enabled ? FB_RF_ACCT_ENABLED : 0) | (pw_change ? FB_RF_ACCT_PW_CHANGE : 0);
	role = role < 0 ? cur->role : role;
	int ends = role != cur->role || !enabled; /* sessions keep the role they logged in with */
	snprintf(user, sizeof(user), "%s", cur->user);
	snprintf(what, sizeof(what), "account '%s' changed", user);
	json_decref(o);
	if (!stored(c, fb_rf_account_store_set(a, user, role, hash[0] ? hash : cur->hash, flags,
					       err, sizeof(err)), err, what))
		return 0;
	if (ends)
		fb_rf_sessions_end_user(&a->sessions, user);
	memset(hash, 0, sizeof(hash));
	const struct fb_rf_account *now = fb_rf_account_find(&a->accounts, user);
	return now ? reply(c, account_json(now), "ManagerAccount") : not_found(c, "ManagerAccount");
}

int fb_rf_account_delete(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	const struct fb_rf_account *cur = visible(c);
	char err[512], what[96], user[FB_RF_USER_MAX + 1];
	if (!cur)
		return 0;
	snprintf(user, sizeof(user), "%s", cur->user);
	snprintf(what, sizeof(what), "account '%s' deleted", user);
	if (!stored(c, fb_rf_account_store_remove(a, user, err, sizeof(err)), err, what))
		return 0;
	fb_rf_sessions_end_user(&a->sessions, user);
	fb_rf_reply_status(c->rep, 204);
	return 0;
}

int fb_rf_roles_get(struct fb_rf_ctx *c)
{
	json_t *members = json_array();
	char path[sizeof(ROLES) + 32];
	for (int r = 0; r < FB_RF_ROLES; r++) {
		snprintf(path, sizeof(path), ROLES "/%s", fb_rf_role_name(r));
		json_array_append_new(members, fb_rf_ref(path));
	}
	return reply(c, collection(ROLES, "#RoleCollection.RoleCollection", "Roles", members),
		     "RoleCollection");
}

int fb_rf_role_get_one(struct fb_rf_ctx *c)
{
	int r = fb_rf_role_parse(c->arg[0]);
	if (r < 0)
		return not_found(c, "Role");
	json_t *privs = json_array();
	for (int p = FB_RF_PRIV_LOGIN; p < FB_RF_PRIVS; p++)
		if (fb_rf_role_privs(r) & FB_RF_PRIV_BIT(p))
			json_array_append_new(privs, json_string(fb_rf_priv_name((enum fb_rf_priv)p)));
	char path[sizeof(ROLES) + 32], name[48];
	snprintf(path, sizeof(path), ROLES "/%s", fb_rf_role_name(r));
	snprintf(name, sizeof(name), "%s Role", fb_rf_role_name(r));
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:b,s:o,s:[]}", "@odata.id", path, "@odata.type",
			      "#Role.v1_3_3.Role", "Id", fb_rf_role_name(r), "Name", name, "RoleId",
			      fb_rf_role_name(r), "IsPredefined", 1, "AssignedPrivileges", privs,
			      "OemPrivileges");
	return reply(c, o, "Role");
}
