/* rf_auth_priv.h - the Redfish predefined roles and their privileges
 * (DSP0266 "Roles"; Privileges.v1 PrivilegeType):
 *
 *   Administrator  Login ConfigureManager ConfigureUsers ConfigureComponents ConfigureSelf
 *   Operator       Login ConfigureComponents ConfigureSelf
 *   ReadOnly       Login ConfigureSelf
 *
 * A route asks for one privilege (rf_route.h); a caller passes when its
 * role holds it. */
#ifndef FB_RF_AUTH_PRIV_H
#define FB_RF_AUTH_PRIV_H

enum fb_rf_role {
	FB_RF_ROLE_ADMINISTRATOR = 0,
	FB_RF_ROLE_OPERATOR = 1,
	FB_RF_ROLE_READONLY = 2,
	FB_RF_ROLES = 3,
};

/* The privileges a route can need (the router's rf_auth.h uses these). */
enum fb_rf_priv {
	FB_RF_PRIV_NONE,                 /* public: the service root, POST Sessions */
	FB_RF_PRIV_LOGIN,                /* any authenticated user: reads */
	FB_RF_PRIV_CONFIGURE_COMPONENTS, /* writes to fabric state, subscriptions, jobs */
	FB_RF_PRIV_CONFIGURE_MANAGER,    /* the service's own settings */
	FB_RF_PRIV_CONFIGURE_USERS,      /* accounts */
	FB_RF_PRIV_CONFIGURE_SELF,       /* one's own password, session */
	FB_RF_PRIVS,
};
/* A set of privileges: one bit per enum fb_rf_priv. */
#define FB_RF_PRIV_BIT(p) (1u << (unsigned)(p))

/* The role's Id ("Administrator"...), or NULL when out of range. */
const char *fb_rf_role_name(int role);
/* The role named (exactly, as Redfish RoleIds are), or -1. */
int fb_rf_role_parse(const char *name);
/* The privileges (FB_RF_PRIV_BIT set) the role holds; 0 when out of range. */
unsigned fb_rf_role_privs(int role);
/* "Login", "ConfigureComponents", ... ("NoAuth" for NONE, "?" out of range). */
const char *fb_rf_priv_name(enum fb_rf_priv p);

#endif
