/* rf_auth.c - STUB by rf-tree: allows every request, so that the tree and
 * the other modules can be built and tested before authentication exists.
 * REPLACED BY rf-auth (accounts, roles, Basic, X-Auth-Token sessions); see
 * rf_auth.h for the contract the router relies on. */
#include "rf_auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fb_rf_auth {
	int anonymous_read;
};

const char *fb_rf_priv_name(enum fb_rf_priv p)
{
	static const char *const names[FB_RF_PRIVS] = { "NoAuth", "Login", "ConfigureComponents",
							 "ConfigureManager", "ConfigureUsers",
							 "ConfigureSelf" };
	return p < FB_RF_PRIVS ? names[p] : "?";
}

int fb_rf_auth_new(const struct fb_rf_auth_opts *o, struct fb_rf_auth **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->anonymous_read = o ? o->anonymous_read : 0;
	return 0;
}

void fb_rf_auth_free(struct fb_rf_auth *a)
{
	free(a);
}

int fb_rf_auth_check(struct fb_rf_auth *a, const struct fb_rf_req *req, enum fb_rf_priv need,
		     struct fb_rf_identity *who)
{
	(void)a;
	(void)req;
	(void)need;
	memset(who, 0, sizeof(*who));
	return FB_RF_AUTH_OK;
}
