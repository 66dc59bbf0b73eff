/* rf_conn.h - the lws side of the Redfish service: one connection's
 * request from headers to reply (rf_conn.c). rf_service.c wires these into
 * struct fb_ws_http_module; nothing else calls them. Lws thread only. */
#ifndef FB_RF_CONN_H
#define FB_RF_CONN_H

#include "rf_route.h"

#include <stddef.h>

struct fb_rf_service;
struct fb_rf_conn;
struct lws;

/* LWS_CALLBACK_HTTP for a /redfish path; *slot is the connection's. */
int fb_rf_conn_http(struct fb_rf_service *svc, struct lws *wsi, struct fb_rf_conn **slot,
		    const char *path);
/* 1 if the connection is not reading a Redfish body. */
int fb_rf_conn_body(struct fb_rf_conn *c, const void *in, size_t len);
int fb_rf_conn_body_done(struct fb_rf_service *svc, struct fb_rf_conn *c);
/* 1 if nothing to write. */
int fb_rf_conn_writeable(struct fb_rf_service *svc, struct fb_rf_conn *c);
void fb_rf_conn_closed(struct fb_rf_service *svc, struct fb_rf_conn *c);
/* Answer the requests whose calls the loop has run. */
void fb_rf_conn_wake(struct fb_rf_service *svc);

#endif
