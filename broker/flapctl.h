/* flapctl.h - flap control as a quiet stage (quiet.h): every link
 * transition on a switch port goes to fabric/flap.c before it is
 * journaled, and its decisions
 * become events of the broker's own (agent "fabricbusd", emit.c):
 *   flap             (Fabric.1.0.*LinkFlapDetected) when FlapTransitions
 *                    came within FlapWindow and no agent said so already;
 *   flap_suppressed  (Fabricbus.1.0.PortFlapSuppressed) every
 *                    FlapSummaryInterval while it goes on;
 *   flap_stable      (Fabricbus.1.0.PortFlapStable) after FlapStableFor
 *                    without a transition;
 * all in one EventGroupId (docs/topology.md, "Flap control"). The
 * transitions themselves are journaled; those that come once the port is
 * suppressed are quiet (FB_QUIET_FLAP): default subscribers get the
 * FlapDetected and the summaries, a quiet=1 subscriber every transition.
 *
 * Loop only: the stage and the timer run on the loop; events are emitted
 * from the loop's own callbacks, never from inside the stage's call.
 */
#ifndef FB_FLAPCTL_H
#define FB_FLAPCTL_H

#include "fb_event.h"

#include <stdint.h>

#include <jansson.h>

struct fb_broker;
struct fb_flapctl;

/* With the broker's Flap* settings. NULL on ENOMEM. */
struct fb_flapctl *fb_flapctl_new(struct fb_broker *b);
void fb_flapctl_free(struct fb_flapctl *f);
/* The quiet stage (quiet.h, fb_quiet_fn): FB_QUIET_FLAP for a transition
 * of a port whose flap was detected, else 0. */
unsigned fb_flapctl_quiet(void *arg, struct fb_event *ev, uint64_t event_id, unsigned quiet, uint64_t now_ns);
/* /status "flap": {"transitions":N,"detected":N,"agent_flaps":N,
 * "summaries":N,"stable":N,"suppressed_ports":N,"untracked":N} (new
 * reference; NULL on ENOMEM). */
json_t *fb_flapctl_json(const struct fb_flapctl *f);

#endif
