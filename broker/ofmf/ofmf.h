/* ofmf.h - fabricbusd as an agent of an OFMF (Sunfish) core: the wiring of
 * the registration state machine (ofmf_reg.h) to the libevent loop, the
 * state file (ofmf_state.h), the HTTP client and the SunfishServer
 * subscription. Everything here runs on the loop thread.
 *
 * The HTTP client and the subscription store belong to the push module
 * (broker/push, broker/redfish/rf_sub*); this module reaches them only
 * through struct fb_ofmf_io, which main.c fills, so that there is one HTTP
 * client and one subscription store in the broker. The core's calls back
 * into us (GET of our ConnectionMethod, PATCH of the SunfishServer Context,
 * the crawl) are served by the Redfish service on the lws thread while our
 * POST is pending: nothing here blocks.
 */
#ifndef FB_OFMF_H
#define FB_OFMF_H

#include "batch.h"

#include <event2/event.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define FB_OFMF_SUBSCRIPTION "SunfishServer" /* hard-coded in the reference core */

/* body: the reply's body (NULL when none); status: the HTTP status, or a
 * negative errno when no reply came. Called once, on the loop. */
typedef void (*fb_ofmf_http_done_fn)(void *arg, int status, const char *body, size_t len);

struct fb_ofmf_io {
	/* Start method ("GET", "POST") on url with a JSON body (or NULL), never
	 * calling done from inside; *req identifies it for cancel. 0 or
	 * negative errno (then done is never called). */
	int (*http)(void *ctx, const char *method, const char *url, const char *body,
		    fb_ofmf_http_done_fn done, void *arg, void **req);
	/* done will not be called for req (at stop). */
	void (*cancel)(void *ctx, void *req);
	/* Create or update the SunfishServer EventDestination (destination: the
	 * core's /EventListener) with context, and deliver its events (1) or hold
	 * them at its cursor (0: the core does not know us, or not yet our
	 * resources, and would refuse them). 0 or negative errno. */
	int (*set_subscription)(void *ctx, const char *destination, const char *context,
				int deliver);
	void *ctx;
};

struct fb_ofmf_opts {
	struct event_base *base;
	const char *core;         /* "http://127.0.0.1:5000" */
	const char *base_url;     /* ours, as the core reaches it */
	const char *cm_id;        /* our ConnectionMethod id */
	const char *fabric;       /* FabricName: announced as /redfish/v1/Fabrics/<fabric> */
	const char *state_path;   /* JournalDir/ofmf.state */
	uint64_t check_ms;
	struct fb_ofmf_io io;
};

struct fb_ofmf;

/* Load the state file (a Context saved for another core, ConnectionMethod or
 * base URL is not used) and start registering. 0 or negative errno. */
int fb_ofmf_start(const struct fb_ofmf_opts *o, struct fb_ofmf **out);
/* Cancel the request in flight, free. NULL is fine. */
void fb_ofmf_stop(struct fb_ofmf *m);

/* An output (output.h): every OriginOfCondition of a committed event is
 * announced to the core once (ResourceCreated). Never busy. */
int fb_ofmf_committed(void *m, struct fb_batch *batch, uint64_t last_id);
/* The SunfishServer Context was PATCHed (by the core, inside our POST). */
void fb_ofmf_context_patched(struct fb_ofmf *m, const char *context);
/* A delivery to the core failed (the push engine's report; see
 * fb_ofmf_reg_delivery_failed). 1: the core will never take this event, drop
 * it; 0: retry it. */
int fb_ofmf_delivery_failed(struct fb_ofmf *m, uint64_t event_id, const char *origin, int refused);

/* Our ConnectionMethod's @odata.id and the Context ("" when not registered),
 * for the Redfish tree and /status. */
const char *fb_ofmf_connection_method(const struct fb_ofmf *m);
const char *fb_ofmf_context(const struct fb_ofmf *m);
/* /status's "ofmf": {"enabled":true,"state":...,"context":...,"last_error":...,
 * counters}. New reference, NULL on ENOMEM. */
json_t *fb_ofmf_status(const struct fb_ofmf *m);

#endif
