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
 *   POST   .../Accounts            {"UserName","Password","RoleId"[,"Enabled"]}
 *                                   -> 201 + Location (ConfigureUsers)
 *   PATCH  .../Accounts/{user}      Password (one's own with ConfigureSelf;
 *                                   anyone's with ConfigureUsers), RoleId and
 *                                   Enabled (ConfigureUsers); If-Match honoured
 *   DELETE .../Accounts/{user}      (ConfigureUsers)
 *
 * Changes go through the accounts file (rf_account_store.h), so they
 * survive a restart and `fabricbus passwd` sees them; a changed role, a
 * disabled or a deleted account ends that user's sessions.
 */
#ifndef FB_RF_ACCOUNT_SVC_H
#define FB_RF_ACCOUNT_SVC_H

#include "rf_route.h"

int fb_rf_account_service_get(struct fb_rf_ctx *c);
int fb_rf_accounts_get(struct fb_rf_ctx *c);
int fb_rf_account_get_one(struct fb_rf_ctx *c);
int fb_rf_accounts_post(struct fb_rf_ctx *c);
int fb_rf_account_patch(struct fb_rf_ctx *c);
int fb_rf_account_delete(struct fb_rf_ctx *c);
int fb_rf_roles_get(struct fb_rf_ctx *c);
int fb_rf_role_get_one(struct fb_rf_ctx *c);

#endif
