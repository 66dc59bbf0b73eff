/* rf_session_svc.h - /redfish/v1/SessionService and its Sessions (rf-auth).
 *
 *   GET    SessionService            SessionTimeout, ServiceEnabled, Sessions
 *   PATCH  SessionService            SessionTimeout (30..86400 s; ConfigureManager)
 *   GET    .../Sessions              the caller's sessions (all of them for
 *                                    ConfigureManager)
 *   POST   .../Sessions              log in: {"UserName","Password"} -> 201,
 *                                    X-Auth-Token, Location, the Session
 *   GET    .../Sessions/{id}         one's own (any for ConfigureManager)
 *   DELETE .../Sessions/{id}         log out (another's: ConfigureManager)
 *
 * Lws thread; the sessions are rf_auth_core's (rf_session.h).
 */
#ifndef FB_RF_SESSION_SVC_H
#define FB_RF_SESSION_SVC_H

#include "rf_route.h"

int fb_rf_session_service_get(struct fb_rf_ctx *c);
int fb_rf_session_service_patch(struct fb_rf_ctx *c);
int fb_rf_sessions_get(struct fb_rf_ctx *c);
int fb_rf_sessions_post(struct fb_rf_ctx *c);
int fb_rf_session_get_one(struct fb_rf_ctx *c);
int fb_rf_session_delete_one(struct fb_rf_ctx *c);

#endif
