/* slurm_source_ws.c - Source=websocket: ws://Broker/ws/events, resuming
 * after LastEventId (adapters/lib/fb_ws_client.c does the resuming). */
#include "slurm_adapter.h"
#include "slurm_source.h"

#include "fb_log.h"
#include "fb_ws_client.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct ws_source {
	struct fbs_source base;  /* first: the adapter holds a pointer to it */
	struct fb_wsc *wsc;
};

static void on_ws_state(void *arg, int connected, const char *why)
{
	struct fbs_adapter *a = arg;
	if (connected)
		fb_log_info("events: subscribed to ws://%s:%d/ws/events", a->cfg->broker_host,
			    a->cfg->broker_port);
	else
		fb_log_warn("events: connection to ws://%s:%d/ws/events lost: %s (reconnecting from "
			    "EventId %" PRIu64 ")", a->cfg->broker_host, a->cfg->broker_port,
			    why ? why : "?", a->seen_id);
}

static void ws_stop(struct fbs_source *s)
{
	struct ws_source *w = (struct ws_source *)s;
	fb_wsc_stop(w->wsc);
	free(w);
}

struct fbs_source *fbs_source_ws_start(struct fbs_adapter *a)
{
	struct ws_source *w = calloc(1, sizeof(*w));
	if (!w) {
		fb_log_err("out of memory starting the WebSocket client");
		return NULL;
	}
	w->base.name = "websocket";
	w->base.ordered = 1;
	w->base.stop = ws_stop;
	struct fb_wsc_opts o;
	memset(&o, 0, sizeof(o));
	o.host = a->cfg->broker_host;
	o.port = (uint16_t)a->cfg->broker_port;
	o.auth = &a->http;
	o.base = a->base;
	o.on_message = fbs_adapter_on_message;
	o.on_state = on_ws_state;
	o.arg = a;
	o.since = a->seen_id;
	/* Quiet events too (proto/PROTOCOL.md): a host's link_down over a rate
	 * limit, or the last transition of a flapping port, is still what a
	 * drain or a resume hangs on; the policy decides (DrainOn). */
	o.query = "quiet=1";
	o.from_now = a->seen_id == 0; /* a first start whose map named no EventId */
	char err[256];
	if (!(w->wsc = fb_wsc_start(&o, err, sizeof(err)))) {
		fb_log_err("cannot start the WebSocket client: %s", err);
		free(w);
		return NULL;
	}
	if (o.from_now)
		fb_log_info("events: first start, reading from the broker's newest event on");
	else
		fb_log_info("events: reading from EventId %" PRIu64 " on", o.since + 1);
	return &w->base;
}
