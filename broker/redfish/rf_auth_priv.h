/* rf_auth_priv.h - the Redfish predefined roles and their privileges
 * (DSP0266 "Roles"; Privileges.v1 PrivilegeType):
 *
 *   Administrator  Login ConfigureManager ConfigureUsers ConfigureComponents ConfigureSelf
 *   Operator       Login ConfigureComponents ConfigureSelf
 *   ReadOnly       Login ConfigureSelf
 *
 * A route asks for one privilege; a caller passes when its role holds it. */
#ifndef FB_RF_AUTH_PRIV_H
#define FB_RF_AUTH_PRIV_H

enum fb_rf_role {
	FB_RF_ROLE_ADMINISTRATOR = 0,
	FB_RF_ROLE_OPERATOR = 1,
	FB_RF_ROLE_READONLY = 2,
	FB_RF_ROLES = 3,
};

enum fb_rf_priv {
	FB_RF_PRIV_NONE = 0, /* public: the service root, $metadata, odata */
	FB_RF_PRIV_LOGIN = 1u << 0,
	FB_RF_PRIV_CONFIGURE_MANAGER = 1u << 1,
	FB_RF_PRIV_CONFIGURE_USERS = 1u << 2,
	FB_RF_PRIV_CONFIGURE_COMPONENTS = 1u << 3,
	FB_RF_PRIV_CONFIGURE_SELF = 1u << 4,
};
#define FB_RF_PRIVS 5

/* The role's Id ("Administrator"...), or NULL when out of range. */
const char *fb_rf_role_name(int role);
/* The role named (exactly, as Redfish RoleIds are), or -1. */
int fb_rf_role_parse(const char *name);
/* The privileges (enum fb_rf_priv bits) the role holds; 0 when out of range. */
unsigned fb_rf_role_privs(int role);
/* The PrivilegeType name of one bit ("ConfigureComponents"), or NULL. */
const char *fb_rf_priv_name(unsigned priv);

#endif
