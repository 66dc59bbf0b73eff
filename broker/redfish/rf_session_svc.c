/* rf_session_svc.c - SessionService and Sessions (see rf_session_svc.h). */
#include "rf_session_svc.h"

#include "fb_log.h"
#include "fb_time.h"
#include "rf_body.h"
#include "rf_service.h"
#include "rf_tree.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SS "/redfish/v1/SessionService"
#define SESSIONS SS "/Sessions"

/* The accounts and sessions, or NULL when none are configured. */
static struct fb_rf_auth_core *core_of(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = fb_rf_auth_core(c->svc->auth);
	return a && a->enabled ? a : NULL;
}

/* SessionTimeout as configured, with or without accounts. */
static uint64_t timeout_s(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = fb_rf_auth_core(c->svc->auth);
	return a ? a->sessions.timeout_s : 1800;
}

static uint64_t now_ms(void)
{
	return (uint64_t)fb_time_ms();
}

/* Without accounts there is nothing to log in to: the service says so
 * (ServiceEnabled false) and its writes are refused. */
static json_t *session_service(struct fb_rf_auth_core *a, uint64_t timeout)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:I,s:o,s:{s:s,s:s}}", "@odata.id", SS,
			 "@odata.type", "#SessionService.v1_2_0.SessionService", "Id",
			 "SessionService", "Name", "Session Service", "ServiceEnabled", a != NULL,
			 "SessionTimeout", (json_int_t)timeout, "Sessions", fb_rf_ref(SESSIONS),
			 "Status", "State", a ? "Enabled" : "Disabled", "Health", "OK");
}

static int reply(struct fb_rf_ctx *c, json_t *o, const char *type)
{
	return fb_rf_reply_resource_take(c->rep, c->req, o, type);
}

int fb_rf_session_service_get(struct fb_rf_ctx *c)
{
	return reply(c, session_service(core_of(c), timeout_s(c)), "SessionService");
}

static const struct fb_rf_prop ss_props[] = {
	{ "SessionTimeout", FB_RF_T_INT, 0 },
	FB_RF_PROPS_RESOURCE,
	{ "ServiceEnabled", FB_RF_T_BOOL, FB_RF_P_READONLY },
	{ "Sessions", FB_RF_T_OBJECT, FB_RF_P_READONLY },
	{ "Status", FB_RF_T_OBJECT, FB_RF_P_READONLY },
	{ NULL, 0, 0 },
};

int fb_rf_session_service_patch(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	char etag[FB_RF_ETAG_MAX], val[32];
	json_t *cur = session_service(a, timeout_s(c)), *o = NULL;
	int rc = cur ? fb_rf_auth_etag(cur, etag) : -1;
	json_decref(cur);
	if (rc)
		return -1;
	if (!fb_rf_reply_if_match(c->rep, c->req, etag))
		return 0;
	if (fb_rf_body_object(c->req, c->rep, &o), !o)
		return 0;
	if (!fb_rf_body_check(o, ss_props, 0, c->rep)) {
		json_decref(o);
		return 0;
	}
	json_t *t = json_object_get(o, "SessionTimeout");
	if (t && (!a || fb_rf_sessions_set_timeout(&a->sessions, (uint64_t)json_integer_value(t)) ||
		  json_integer_value(t) < 0)) {
		snprintf(val, sizeof(val), "%" JSON_INTEGER_FORMAT, json_integer_value(t));
		const char *args[] = { val, "SessionTimeout" };
		json_decref(o);
		fb_rf_reply_error(c->rep, FB_RF_PROPERTY_VALUE_OUT_OF_RANGE, args, 2);
		return 0;
	}
	if (t)
		fb_log_info("redfish: %s set SessionTimeout to %" JSON_INTEGER_FORMAT " s",
			    c->who.user, json_integer_value(t));
	json_decref(o);
	return fb_rf_session_service_get(c);
}

static int is_manager(const struct fb_rf_ctx *c)
{
	return (c->who.privs & FB_RF_PRIV_BIT(FB_RF_PRIV_CONFIGURE_MANAGER)) != 0;
}

/* May the caller see or end session s: its own, or ConfigureManager. */
static int may_touch(const struct fb_rf_ctx *c, const struct fb_rf_session *s)
{
	return is_manager(c) || strcmp(s->user, c->who.user) == 0;
}

static json_t *session_json(const struct fb_rf_session *s)
{
	char path[sizeof(SESSIONS) + FB_RF_SESSION_ID_LEN + 2];
	snprintf(path, sizeof(path), SESSIONS "/%s", s->id);
	return json_pack("{s:s,s:s,s:s,s:s,s:s,s:n,s:s,s:s}", "@odata.id", path, "@odata.type",
			 "#Session.v1_8_0.Session", "Id", s->id, "Name", "User Session", "UserName",
			 s->user, "Password", "SessionType", "Redfish", "ClientOriginIPAddress", s->peer);
}

int fb_rf_sessions_get(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	if (a && !c->who.user[0]) { /* anonymous reads do not extend to sessions */
		fb_rf_reply_error(c->rep, FB_RF_NO_VALID_SESSION, NULL, 0);
		return 0;
	}
	json_t *members = json_array();
	if (a) {
		fb_rf_sessions_expire(&a->sessions, now_ms());
		for (size_t i = 0; i < a->sessions.max; i++) {
			const struct fb_rf_session *s = &a->sessions.v[i];
			char path[sizeof(SESSIONS) + FB_RF_SESSION_ID_LEN + 2];
			if (!s->id[0] || !may_touch(c, s))
				continue;
			snprintf(path, sizeof(path), SESSIONS "/%s", s->id);
			json_array_append_new(members, fb_rf_ref(path));
		}
	}
	json_t *o = json_pack("{s:s,s:s,s:s,s:I,s:o}", "@odata.id", SESSIONS, "@odata.type",
			      "#SessionCollection.SessionCollection", "Name", "Session Collection",
			      "Members@odata.count", (json_int_t)json_array_size(members), "Members",
			      members);
	return reply(c, o, "SessionCollection");
}

static const struct fb_rf_prop login_props[] = {
	{ "UserName", FB_RF_T_STRING, FB_RF_P_REQUIRED },
	{ "Password", FB_RF_T_STRING, FB_RF_P_REQUIRED },
	{ "Id", FB_RF_T_STRING, FB_RF_P_READONLY },
	{ NULL, 0, 0 },
};

/* 201 with the token once, the Location, and the whole Session; when the
 * account's password must change first, the session says so (Base
 * PasswordChangeRequired in @Message.ExtendedInfo). */
static int created(struct fb_rf_ctx *c, const struct fb_rf_session *s, const char *token)
{
	json_t *o = session_json(s);
	struct fb_rf_auth_core *a = core_of(c);
	const struct fb_rf_account *acct = a ? fb_rf_account_find(&a->accounts, s->user) : NULL;
	if (o && acct && acct->pw_change) {
		char path[128];
		snprintf(path, sizeof(path), "/redfish/v1/AccountService/Accounts/%s", s->user);
		const char *args[] = { path };
		json_t *m = fb_rf_message(FB_RF_PASSWORD_CHANGE_REQUIRED, args, 1);
		if (m)
			json_object_set_new(o, "@Message.ExtendedInfo", json_pack("[o]", m));
	}
	char path[sizeof(SESSIONS) + FB_RF_SESSION_ID_LEN + 2];
	snprintf(path, sizeof(path), SESSIONS "/%s", s->id);
	int rc = !o || fb_rf_reply_header(c->rep, "X-Auth-Token", token) ||
		 fb_rf_reply_header(c->rep, "Location", path) || fb_rf_reply_json(c->rep, 201, o);
	json_decref(o);
	return rc ? -1 : 0;
}

int fb_rf_sessions_post(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	json_t *o = NULL;
	if (fb_rf_body_object(c->req, c->rep, &o), !o)
		return 0;
	if (!fb_rf_body_check(o, login_props, 1, c->rep)) {
		json_decref(o);
		return 0;
	}
	char token[FB_RF_TOKEN_LEN + 1], ip[64];
	const struct fb_rf_session *s = NULL;
	fb_rf_peer_ip(c->req->peer, ip, sizeof(ip)); /* the failed-login limit's key */
	int rc = a ? fb_rf_auth_core_login(a, json_string_value(json_object_get(o, "UserName")),
					   json_string_value(json_object_get(o, "Password")), ip,
					   now_ms(), token, &s)
		   : FB_RF_AUTH_NO_SESSION;
	json_decref(o);
	if (rc == FB_RF_AUTH_NO_SESSION) {
		fb_rf_reply_error(c->rep, FB_RF_NO_VALID_SESSION, NULL, 0);
		return 0;
	}
	if (rc) {
		fb_rf_reply_error(c->rep, rc == -ENOSPC ? FB_RF_SESSION_LIMIT_EXCEEDED
							: FB_RF_INTERNAL_ERROR, NULL, 0);
		return 0;
	}
	rc = created(c, s, token);
	memset(token, 0, sizeof(token));
	return rc;
}

/* The session {id} the caller may see, or NULL with 404 in rep (another
 * user's session is not even confirmed to exist). */
static const struct fb_rf_session *find(struct fb_rf_ctx *c)
{
	struct fb_rf_auth_core *a = core_of(c);
	const struct fb_rf_session *s = a ? fb_rf_session_get(&a->sessions, c->arg[0], now_ms())
					  : NULL;
	if (s && may_touch(c, s))
		return s;
	const char *args[] = { "Session", c->arg[0] };
	fb_rf_reply_error(c->rep, FB_RF_RESOURCE_NOT_FOUND, args, 2);
	return NULL;
}

int fb_rf_session_get_one(struct fb_rf_ctx *c)
{
	const struct fb_rf_session *s = find(c);
	return s ? reply(c, session_json(s), "Session") : 0;
}

int fb_rf_session_delete_one(struct fb_rf_ctx *c)
{
	const struct fb_rf_session *s = find(c);
	if (!s)
		return 0;
	fb_log_info("redfish: session %s of '%s' ended by '%s'", s->id, s->user, c->who.user);
	fb_rf_session_delete(&core_of(c)->sessions, c->arg[0]);
	fb_rf_reply_status(c->rep, 204);
	return 0;
}
