/* pmix_adapter.h - fabricbus-pmix's loop: the broker's stream in, notes out
 * to the steps on this node (Delivery=slurm) or through a PMIx tool
 * connection (Delivery=server). An event's path, one file per step:
 *
 *   from the broker            proto/client/fb_source.c (resuming WebSocket)
 *   what it says, whom it hits pmix_route.c
 *   to a Slurm step            pmix_steps.c -> spank_fabricbus_pmix.c (in slurmstepd)
 *   to a tool-friendly server  pmix_tool.c
 *   the PMIx event itself      pmix_notify.c
 */
#ifndef FBP_ADAPTER_H
#define FBP_ADAPTER_H

#include "fb_http_auth.h"
#include "pmix_conf.h"
#include "pmix_route.h"
#include "pmix_steps.h"

#include <event2/event.h>
#include <stdint.h>

struct fb_source;

struct fbp_adapter {
	const struct fbp_config *cfg;
	struct event_base *base;
	struct fb_source *src;
	struct fb_http_auth http;   /* BrokerTokenFile, BrokerTlsCa: every broker request */
	struct event *scan_timer;
	struct fbp_steps steps;     /* Delivery=slurm */
	struct fbp_view server_view;/* Delivery=server: ServerNodes and their cables */
	int tool_up;
	uint64_t position;          /* the newest EventId handled */
	uint64_t delivered, failed;
};

/* Find the steps, read the broker's head, subscribe. 0, or < 0 with err. */
int fbp_adapter_start(struct fbp_adapter *a, const struct fbp_config *cfg, struct event_base *base,
		      char *err, size_t errsz);
void fbp_adapter_stop(struct fbp_adapter *a);

#endif
