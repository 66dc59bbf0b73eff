/* ws_fabric.h - /fabric/map and /fabric/jobs on the libwebsockets thread.
 *
 *   GET /fabric/map            the newest snapshot fabric_map.c published,
 *                              streamed from it a chunk per writeable
 *                              callback (the request holds a reference, not
 *                              a copy: a slow reader costs one chunk);
 *   GET /fabric/map?nodes=<hostlist>
 *                              the same document with only those nodes (and
 *                              "Missing"), and only their switches: members
 *                              of the snapshot found through its index
 *                              (ws_fabric_map.h), so the work is in
 *                              proportion to the request, not to the map;
 *   POST /fabric/jobs          read the body (Content-Length, at most
 *                              FB_JOB_BODY_MAX, application/json), parse it
 *                              here (fb_jobs_parse_register), hand it to the
 *                              loop (fb_fabric_map_submit) and answer once
 *                              the loop has applied it: 201 new, 200
 *                              replaced, 413 over JobNodesMax, 429 registry
 *                              full (JobsMax, JobMembersMax);
 *   DELETE /fabric/jobs/<id>   the same way; 204 whether or not it existed.
 * With Redfish accounts configured, POST and DELETE need a login whose role
 * holds ConfigureComponents (Basic or X-Auth-Token, ws_auth.h): 401 with
 * WWW-Authenticate without one, 403 for a ReadOnly account.
 * Refusals use fb_ws_http_error's shape and name the parameter. The reply
 * waits for the loop, so a client that got 201 knows that the next event
 * from those nodes carries the job.
 *
 * ws_server.c embeds one struct fb_ws_fabric_req in every connection's
 * per-session data and calls these from its lws callback. Lws thread only;
 * the loop's state is reached only through fabric_map.h's queue.
 */
#ifndef FB_WS_FABRIC_H
#define FB_WS_FABRIC_H

#include "fb_buf.h"
#include "ws_fabric_map.h"

#include <libwebsockets.h>

#include <stdint.h>

struct fb_fabric_map;
struct fb_job_op;

enum fb_ws_fabric_state {
	FB_WSF_IDLE,
	FB_WSF_BODY,    /* reading a POST body */
	FB_WSF_DISCARD, /* reading a body already refused: answer once it is read */
	FB_WSF_WAIT,    /* handed to the loop (on fb_ws_fabric.waiting) */
	FB_WSF_REPLY,   /* the loop answered: write it when writeable */
	FB_WSF_MAP,     /* GET /fabric/map: headers sent, snap[off..] to go */
};

/* One connection's request (zeroed by lws with the per-session data). */
struct fb_ws_fabric_req {
	enum fb_ws_fabric_state state;
	struct fb_buf body;
	unsigned long long expect; /* Content-Length */
	unsigned code;             /* FB_WSF_DISCARD: the refusal to send */
	const char *error, *param, *detail;
	uint64_t token;            /* FB_WSF_WAIT: matches the operation */
	struct fb_job_op *done;    /* FB_WSF_REPLY: the applied operation */
	struct fb_ws_map_body *map; /* FB_WSF_MAP: the body being sent (holds the snapshot) */
	size_t sent;               /* FB_WSF_MAP: bytes of it sent */
	int64_t deadline_ms;       /* FB_WSF_MAP: closed if not sent by then (monotonic) */
	struct lws *wsi;
	struct fb_ws_fabric_req *prev, *next;
};

struct fb_rf_auth_core;

struct fb_ws_fabric {
	struct fb_fabric_map *map; /* NULL: no /fabric/ paths (404) */
	/* Redfish accounts (RedfishAccounts): POST and DELETE of jobs need
	 * ConfigureComponents (Operator or Administrator) when it is enabled;
	 * NULL or disabled: unauthenticated, as before accounts existed. */
	struct fb_rf_auth_core *auth;
	int anonymous_reads; /* GET /fabric/map without a login (HttpAnonymousReads) */
	struct fb_ws_fabric_req *waiting; /* requests the loop has not answered */
	uint64_t next_token;
};

/* LWS_CALLBACK_HTTP: 1 if path is not a /fabric/ route (or there is no
 * map), else what the lws callback returns. */
int fb_ws_fabric_http(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r,
		      const char *path);
/* LWS_CALLBACK_HTTP_BODY and _BODY_COMPLETION. */
int fb_ws_fabric_body(struct fb_ws_fabric_req *r, const void *in, size_t len);
int fb_ws_fabric_body_done(struct fb_ws_fabric *f, struct lws *wsi, struct fb_ws_fabric_req *r);
/* LWS_CALLBACK_HTTP_WRITEABLE: 1 if r has nothing to write, else the
 * callback's result. */
int fb_ws_fabric_writeable(struct lws *wsi, struct fb_ws_fabric_req *r);
/* On LWS_CALLBACK_EVENT_WAIT_CANCELLED: answer the requests the loop has
 * applied (the operations of clients that left are freed). */
void fb_ws_fabric_take_results(struct fb_ws_fabric *f);
/* The connection closes or its per-session data is about to be freed. */
void fb_ws_fabric_release(struct fb_ws_fabric *f, struct fb_ws_fabric_req *r);

#endif
