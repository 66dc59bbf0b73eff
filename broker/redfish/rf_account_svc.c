/* rf_account_svc.c - AccountService, Accounts, Roles (see rf_account_svc.h). */
#include "rf_account_svc.h"

#include "rf_service.h"
#include "rf_tree.h"

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
	if (!o)
		return -1;
	int rc = fb_rf_reply_resource(c->rep, c->req, o, type);
	json_decref(o);
	return rc ? -1 : 0;
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

static json_t *collection(const char *path, const char *type, const char *name, json_t *members)
{
	return json_pack("{s:s,s:s,s:s,s:I,s:o}", "@odata.id", path, "@odata.type", type, "Name",
			 name, "Members@odata.count", (json_int_t)json_array_size(members),
			 "Members", members);
}

int fb_rf_accounts_get(struct fb_rf_ctx *c)
{
	const struct fb_rf_accounts *acc = accounts_of(c);
	json_t *members = json_array();
	char path[sizeof(ACCOUNTS) + FB_RF_USER_MAX + 2];
	for (size_t i = 0; acc && i < acc->n; i++) {
		snprintf(path, sizeof(path), ACCOUNTS "/%s", acc->v[i].user);
		json_array_append_new(members, fb_rf_ref(path));
	}
	return reply(c, collection(ACCOUNTS, "#ManagerAccountCollection.ManagerAccountCollection",
				   "Accounts", members), "ManagerAccountCollection");
}

int fb_rf_account_get_one(struct fb_rf_ctx *c)
{
	const struct fb_rf_accounts *acc = accounts_of(c);
	const struct fb_rf_account *a = acc ? fb_rf_account_find(acc, c->arg[0]) : NULL;
	if (!a)
		return not_found(c, "ManagerAccount");
	/* ConfigureUsers reads any account; everyone else only their own */
	if (!(c->who.privs & FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_USERS)) &&
	    strcmp(c->who.user, a->user) != 0) {
		fb_rf_reply_error(c->rep, FB_RF_INSUFFICIENT_PRIVILEGE, NULL, 0);
		return 0;
	}
	char path[sizeof(ACCOUNTS) + FB_RF_USER_MAX + 2], role[sizeof(ROLES) + 32];
	snprintf(path, sizeof(path), ACCOUNTS "/%s", a->user);
	snprintf(role, sizeof(role), ROLES "/%s", fb_rf_role_name(a->role));
	json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b,s:b,s:n,s:[s],s:{s:o}}", "@odata.id",
			      path, "@odata.type", "#ManagerAccount.v1_14_1.ManagerAccount", "Id",
			      a->user, "Name", "User Account", "UserName", a->user, "RoleId",
			      fb_rf_role_name(a->role), "Enabled", a->enabled, "Locked", 0, "Password",
			      "AccountTypes", "Redfish", "Links", "Role", fb_rf_ref(role));
	return reply(c, o, "ManagerAccount");
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
