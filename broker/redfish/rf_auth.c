/* rf_auth.c - the router's auth check over rf_auth_core (see rf_auth.h). */
#include "rf_auth.h"

#include "fb_time.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fb_rf_auth {
	struct fb_rf_auth_core *core; /* not owned */
};

int fb_rf_auth_new(const struct fb_rf_auth_opts *o, struct fb_rf_auth **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->core = o ? o->core : NULL;
	return 0;
}

void fb_rf_auth_free(struct fb_rf_auth *a)
{
	free(a);
}

struct fb_rf_auth_core *fb_rf_auth_core(struct fb_rf_auth *a)
{
	return a ? a->core : NULL;
}

/* What an account whose password must change may still do (Redfish
 * PasswordChangeRequired): read and PATCH its own account, end its own
 * session. Logging in (POST Sessions) needs no privilege: it is not checked
 * here at all. */
static int allowed_before_change(const struct fb_rf_req *req, const struct fb_rf_caller *c)
{
	char own[128];
	snprintf(own, sizeof(own), "/redfish/v1/AccountService/Accounts/%s", c->user);
	if (strcmp(req->path, own) == 0)
		return req->method == FB_RF_GET || req->method == FB_RF_HEAD ||
		       req->method == FB_RF_PATCH;
	snprintf(own, sizeof(own), "/redfish/v1/SessionService/Sessions/%s", c->session_id);
	return c->session_id[0] && strcmp(req->path, own) == 0 && req->method == FB_RF_DELETE;
}

int fb_rf_auth_check(struct fb_rf_auth *a, const struct fb_rf_req *req, enum fb_rf_priv need,
		     struct fb_rf_identity *who)
{
	struct fb_rf_caller c;
	char ip[64];
	memset(who, 0, sizeof(*who));
	if (!a || !a->core)
		return FB_RF_AUTH_OK;
	fb_rf_peer_ip(req->peer, ip, sizeof(ip));
	int is_read = req->method == FB_RF_GET || req->method == FB_RF_HEAD;
	int v = fb_rf_auth_core_check(a->core, fb_rf_req_header(req, FB_RF_H_AUTHORIZATION),
				      fb_rf_req_header(req, FB_RF_H_X_AUTH_TOKEN), ip, need, is_read,
				      (uint64_t)fb_time_ms(), &c);
	if (v == FB_RF_AUTH_PW_CHANGE && allowed_before_change(req, &c))
		v = c.privs & FB_RF_PRIV_BIT(need) ? FB_RF_AUTH_OK : FB_RF_AUTH_FORBIDDEN;
	if ((v == FB_RF_AUTH_OK || v == FB_RF_AUTH_PW_CHANGE) && c.authenticated) {
		snprintf(who->user, sizeof(who->user), "%s", c.user);
		snprintf(who->role, sizeof(who->role), "%s", fb_rf_role_name(c.role));
		snprintf(who->session, sizeof(who->session), "%s", c.session_id);
		who->privs = c.privs;
		who->pw_change = c.pw_change;
	}
	return v;
}

int fb_rf_auth_etag(json_t *obj, char out[FB_RF_ETAG_MAX])
{
	json_object_del(obj, "@odata.etag");
	char *s = json_dumps(obj, JSON_COMPACT);
	if (!s)
		return -ENOMEM;
	fb_rf_etag(s, strlen(s), out);
	free(s);
	return 0;
}
