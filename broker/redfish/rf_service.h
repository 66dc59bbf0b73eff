/* rf_service.h - the Redfish service: its identity (UUID, ConnectionMethod
 * id), its parts (auth, the resource tree, the other modules' state) and
 * the hook that puts it on the HTTP port (struct fb_ws_http_module).
 *
 * main.c creates it on the loop before the lws thread starts
 * (fb_rf_service_new), passes fb_rf_service_module() in fb_ws_opts, and
 * frees it after fb_ws_stop. Requests are served on the lws thread
 * (rf_conn.c); writes reach the loop through svc->loopq (rf_route.h,
 * fb_rf_defer).
 */
#ifndef FB_RF_SERVICE_H
#define FB_RF_SERVICE_H

#include "loopq.h"
#include "rf_auth.h"
#include "ws_server.h"

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

struct fb_fabric_map;
struct fb_rf_tree;
struct fb_rf_conn;
struct lws_context;
/* Other modules' state (declared by them; NULL until they plug in). */
struct fb_rf_events; /* rf-push: EventService, subscriptions */
struct fb_rf_sse;    /* rf-sse: SSE streams */
struct fb_ofmf;      /* ofmf: registration */

#define FB_RF_UUID_FILE "redfish-uuid"
#define FB_RF_WAKE_MAX 8
#define FB_RF_LOOP_MAX_CALLS 256 /* writes in flight to the loop; past it 503 */

struct fb_rf_service_opts {
	struct event_base *base;         /* the loop's (NULL: no writes, as in tests) */
	struct fb_fabric_map *map;       /* topology, inventory, jobs */
	const char *state_dir;           /* where the UUID is kept (the journal dir) */
	const char *fabric_name;         /* FabricName: the default fabric's Id */
	const char *connection_method_id;/* "" or NULL: derived from the UUID */
	struct fb_rf_auth_opts auth;
};

struct fb_rf_service {
	/* read-only after fb_rf_service_new */
	char uuid[37];
	char cm_id[64];
	char fabric[32];
	struct fb_fabric_map *map;
	struct fb_loopq *loopq;
	struct fb_rf_tree *tree;       /* rf-tree: the resource snapshot */
	/* lws thread */
	struct fb_rf_auth *auth;       /* rf-auth */
	struct fb_rf_events *events;   /* rf-push */
	struct fb_rf_sse *sse;         /* rf-sse */
	struct fb_ofmf *ofmf;          /* ofmf */
	struct lws_context *ctx;
	struct fb_rf_conn *waiting;    /* requests handed to the loop */
	uint64_t next_token;
	struct {
		void (*fn)(void *arg);
		void *arg;
	} wake[FB_RF_WAKE_MAX];
	size_t n_wake;
	struct fb_ws_http_module module;
};

/* 0 or a negative error after logging why. */
int fb_rf_service_new(const struct fb_rf_service_opts *o, struct fb_rf_service **out);
/* After fb_ws_stop. */
void fb_rf_service_free(struct fb_rf_service *svc);
/* The hook for fb_ws_opts.module. */
const struct fb_ws_http_module *fb_rf_service_module(struct fb_rf_service *svc);
/* Before the lws thread starts: fn(arg) runs on the lws thread at every
 * wakeup (a module's own queue from the loop). 0 or FB_EFULL. */
int fb_rf_service_on_wake(struct fb_rf_service *svc, void (*fn)(void *), void *arg);
/* Any thread, once attached: wake the lws thread. */
void fb_rf_service_wake(struct fb_rf_service *svc);

/* Load the UUID from dir/FB_RF_UUID_FILE, or make and save one. Pure file
 * work (unit-tested). 0 or a negative error. */
int fb_rf_uuid_load(const char *dir, char out[37]);

#endif
