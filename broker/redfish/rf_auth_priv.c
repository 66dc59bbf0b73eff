/* rf_auth_priv.c - predefined roles -> privileges (see rf_auth_priv.h). */
#include "rf_auth_priv.h"

#include <string.h>

static const char *const role_names[FB_RF_ROLES] = { "Administrator", "Operator", "ReadOnly" };

static const unsigned role_privs[FB_RF_ROLES] = {
	FB_RF_PRIV_LOGIN | FB_RF_PRIV_CONFIGURE_MANAGER | FB_RF_PRIV_CONFIGURE_USERS |
		FB_RF_PRIV_CONFIGURE_COMPONENTS | FB_RF_PRIV_CONFIGURE_SELF,
	FB_RF_PRIV_LOGIN | FB_RF_PRIV_CONFIGURE_COMPONENTS | FB_RF_PRIV_CONFIGURE_SELF,
	FB_RF_PRIV_LOGIN | FB_RF_PRIV_CONFIGURE_SELF,
};

static const char *const priv_names[FB_RF_PRIVS] = {
	"Login", "ConfigureManager", "ConfigureUsers", "ConfigureComponents", "ConfigureSelf",
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

const char *fb_rf_priv_name(unsigned priv)
{
	for (int i = 0; i < FB_RF_PRIVS; i++)
		if (priv == 1u << i)
			return priv_names[i];
	return NULL;
}
