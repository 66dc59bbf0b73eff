/* flapctl.h - flap control behind the output seam: every committed link
 * transition on a switch port goes to fabric/flap.c, and its decisions
 * become events of the broker's own (agent "fabricbusd", emit.c):
 *   flap             (Fabric.1.0.*LinkFlapDetected) when FlapTransitions
 *                    came within FlapWindow and no agent said so already;
 *   flap_suppressed  (Fabricbus.1.0.PortFlapSuppressed) every
 *                    FlapSummaryInterval while it goes on;
 *   flap_stable      (Fabricbus.1.0.PortFlapStable) after FlapStableFor
 *                    without a transition;
 * all in one EventGroupId (docs/topology.md, "Flap control"). The
 * transitions themselves are journaled and delivered as before.
 *
 * Loop only: the output and the timer run on the loop; events are emitted
 * from the loop's own callbacks, never from inside the output call.
 */
#ifndef FB_FLAPCTL_H
#define FB_FLAPCTL_H

#include "batch.h"

#include <jansson.h>

struct fb_broker;
struct fb_flapctl;

/* With the broker's Flap* settings. NULL on ENOMEM. */
struct fb_flapctl *fb_flapctl_new(struct fb_broker *b);
void fb_flapctl_free(struct fb_flapctl *f);
/* The output (output.h); never busy. */
int fb_flapctl_committed(void *arg, struct fb_batch *batch, uint64_t last_id);
/* /status "flap": {"transitions":N,"detected":N,"agent_flaps":N,
 * "summaries":N,"stable":N,"suppressed_ports":N,"untracked":N} (new
 * reference; NULL on ENOMEM). */
json_t *fb_flapctl_json(const struct fb_flapctl *f);

#endif
