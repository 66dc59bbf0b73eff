/* rf_auth_priv.c - predefined roles -> privileges (see rf_auth_priv.h). */
#include "rf_auth_priv.h"

#include <string.h>

#define B(p) FB_RF_PRIV_BIT(FB_RF_PRIV_##p)

static const char *const role_names[FB_RF_ROLES] = { "Administrator", "Operator", "ReadOnly" };

static const unsigned role_privs[FB_RF_ROLES] = {
	B(LOGIN) | B(CONFIGURE_MANAGER) | B(CONFIGURE_USERS) | B(CONFIGURE_COMPONENTS) |
		B(CONFIGURE_SELF),
	B(LOGIN) | B(CONFIGURE_COMPONENTS) | B(CONFIGURE_SELF),
	B(LOGIN) | B(CONFIGURE_SELF),
};

const char *fb_rf_role_name(int role)
{
	return role >= 0 && role < FB_RF_ROLES ? role_names[role] : NULL;
}

int fb_rf_role_parse(const char *name)
{
	for (int i = 0; i < FB_RF_ROLES; i++)
		if (strcmp(name, role_names[i]) == 0)
			return i;
	return -1;
}

unsigned fb_rf_role_privs(int role)
{
	return role >= 0 && role < FB_RF_ROLES ? role_privs[role] : 0;
}

const char *fb_rf_priv_name(enum fb_rf_priv p)
{
	static const char *const names[FB_RF_PRIVS] = { "NoAuth", "Login", "ConfigureComponents",
							 "ConfigureManager", "ConfigureUsers",
							 "ConfigureSelf" };
	return (unsigned)p < FB_RF_PRIVS ? names[p] : "?";
}
