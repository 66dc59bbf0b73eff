/* rf_account_svc.h - /redfish/v1/AccountService, its Accounts and Roles
 * (rf-auth), read from the accounts file (rf_account.h):
 *
 *   GET AccountService              password length bounds, LocalAccountAuth
 *   GET .../Accounts                every account (Login)
 *   GET .../Accounts/{user}         ManagerAccount: one's own, or any with
 *                                   ConfigureUsers
 *   GET .../Roles, .../Roles/{id}   Administrator, Operator, ReadOnly with
 *                                   their AssignedPrivileges
 *
 * Accounts are made and changed with `fabricbus passwd` in the file, not
 * over HTTP: POST, PATCH and DELETE answer 405 with Allow: GET, HEAD.
 */
#ifndef FB_RF_ACCOUNT_SVC_H
#define FB_RF_ACCOUNT_SVC_H

#include "rf_route.h"

int fb_rf_account_service_get(struct fb_rf_ctx *c);
int fb_rf_accounts_get(struct fb_rf_ctx *c);
int fb_rf_account_get_one(struct fb_rf_ctx *c);
int fb_rf_roles_get(struct fb_rf_ctx *c);
int fb_rf_role_get_one(struct fb_rf_ctx *c);

#endif
