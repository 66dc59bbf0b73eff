/* rf_routes.c - THE Redfish route table: every module registers here.
 *
 * One line per route, most specific first (the first match wins; see
 * rf_route.h for the pattern syntax). Each method names its handler and the
 * privilege it needs (rf_auth.h); a method without a handler is 405 with
 * Allow. The entries marked with an owner other than rf-tree answer 501
 * (fb_rf_unimplemented) until that module replaces the handler names in
 * ITS OWN lines (and declares them in its own header, included below).
 * /work/notes/redfish-api.md explains how.
 */
#include "rf_event_service.h"
#include "rf_route.h"

#include "rf_sse.h"
#include "rf_account_svc.h"
#include "rf_session_svc.h"

#include "rf_tree.h"
#include "rf_version.h"

#define NOAUTH FB_RF_PRIV_NONE
#define LOGIN FB_RF_PRIV_LOGIN
#define COMPONENTS FB_RF_PRIV_CONFIGURE_COMPONENTS
#define MANAGER FB_RF_PRIV_CONFIGURE_MANAGER
#define USERS FB_RF_PRIV_CONFIGURE_USERS
#define SELF FB_RF_PRIV_CONFIGURE_SELF
#define TODO fb_rf_unimplemented

/* clang-format off */
const struct fb_rf_route fb_rf_routes[] = {
	/* rf-tree: the version document and the public documents */
	{ "/redfish", { [FB_RF_GET] = { fb_rf_version_get, NOAUTH } }, NULL, "rf-tree" },
	{ "/redfish/v1", { [FB_RF_GET] = { fb_rf_tree_get, NOAUTH } }, fb_rf_tree_exists, "rf-tree" },
	{ "/redfish/v1/odata", { [FB_RF_GET] = { fb_rf_tree_get, NOAUTH } }, fb_rf_tree_exists, "rf-tree" },
	{ "/redfish/v1/$metadata", { [FB_RF_GET] = { fb_rf_tree_get, NOAUTH } }, fb_rf_tree_exists, "rf-tree" },

	/* rf-auth: SessionService, Sessions (POST is how one logs in), AccountService.
	 * Finer checks in the handlers: a session or account that is not one's
	 * own needs ConfigureManager / ConfigureUsers. */
	{ "/redfish/v1/SessionService", { [FB_RF_GET] = { fb_rf_session_service_get, LOGIN },
		[FB_RF_PATCH] = { fb_rf_session_service_patch, MANAGER } }, NULL, "rf-auth" },
	{ "/redfish/v1/SessionService/Sessions", { [FB_RF_GET] = { fb_rf_sessions_get, LOGIN },
		[FB_RF_POST] = { fb_rf_sessions_post, NOAUTH } }, NULL, "rf-auth" },
	{ "/redfish/v1/SessionService/Sessions/{}", { [FB_RF_GET] = { fb_rf_session_get_one, LOGIN },
		[FB_RF_DELETE] = { fb_rf_session_delete_one, LOGIN } }, NULL, "rf-auth" },
	{ "/redfish/v1/AccountService", { [FB_RF_GET] = { fb_rf_account_service_get, LOGIN } },
		NULL, "rf-auth" },
	{ "/redfish/v1/AccountService/Accounts", { [FB_RF_GET] = { fb_rf_accounts_get, LOGIN },
		[FB_RF_POST] = { fb_rf_accounts_post, USERS } }, NULL, "rf-auth" },
	{ "/redfish/v1/AccountService/Accounts/{}", { [FB_RF_GET] = { fb_rf_account_get_one, LOGIN },
		[FB_RF_PATCH] = { fb_rf_account_patch, SELF },
		[FB_RF_DELETE] = { fb_rf_account_delete, USERS } }, NULL, "rf-auth" },
	{ "/redfish/v1/AccountService/Roles", { [FB_RF_GET] = { fb_rf_roles_get, LOGIN } }, NULL,
		"rf-auth" },
	{ "/redfish/v1/AccountService/Roles/{}", { [FB_RF_GET] = { fb_rf_role_get_one, LOGIN } },
		NULL, "rf-auth" },

	/* rf-sse: the ServerSentEventUri */
	{ "/redfish/v1/EventService/SSE", { [FB_RF_GET] = { fb_rf_sse_get, LOGIN } }, NULL, "rf-sse" },

	/* rf-push: EventService, Subscriptions, SubmitTestEvent */
	{ "/redfish/v1/EventService/Actions/EventService.SubmitTestEvent",
		{ [FB_RF_POST] = { fb_rf_submit_test_event, MANAGER } }, NULL, "rf-push" },
	{ "/redfish/v1/EventService/Subscriptions", { [FB_RF_GET] = { fb_rf_subs_get, LOGIN },
		[FB_RF_POST] = { fb_rf_subs_post, COMPONENTS } }, NULL, "rf-push" },
	{ "/redfish/v1/EventService/Subscriptions/{}", { [FB_RF_GET] = { fb_rf_sub_get, LOGIN },
		[FB_RF_PATCH] = { fb_rf_sub_patch, COMPONENTS },
		[FB_RF_DELETE] = { fb_rf_sub_delete, COMPONENTS } },
		NULL, "rf-push" },
	{ "/redfish/v1/EventService/Subscriptions/{}/Actions/EventDestination.ResumeSubscription",
		{ [FB_RF_POST] = { fb_rf_sub_resume, COMPONENTS } }, NULL, "rf-push" },
	{ "/redfish/v1/EventService/**", { [FB_RF_GET] = { fb_rf_event_service_get, LOGIN },
		[FB_RF_PATCH] = { fb_rf_event_service_patch, MANAGER } }, NULL, "rf-push" },

	/* rf-tree: everything else is the resource tree (GET only) */
	{ "/redfish/v1/**", { [FB_RF_GET] = { fb_rf_tree_get, LOGIN } }, fb_rf_tree_exists, "rf-tree" },
	{ NULL, { { 0 } }, NULL, NULL },
};
/* clang-format on */
