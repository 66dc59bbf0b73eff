/* ofmf_push.h - struct fb_ofmf_io over the push module: the OFMF agent's
 * requests go through the push engine's HTTP client (fb_hc, libcurl on the
 * loop), and its SunfishServer subscription is an ordinary EventDestination
 * in the push engine's store (persisted there, delivered there, PATCHed by
 * the core through the EventService routes).
 *
 * The core's PATCH of the Context is noticed through the push engine's
 * `changed` callback: main.c calls fb_ofmf_push_changed() from it, and a
 * Context other than the one this adapter last set is handed to the
 * registration as the core's (fb_ofmf_context_patched).
 *
 * Threads: the loop. Lifetime: made before fb_ofmf_start, freed after
 * fb_ofmf_stop and before fb_push_stop.
 */
#ifndef FB_OFMF_PUSH_H
#define FB_OFMF_PUSH_H

#include "ofmf.h"

struct fb_push;
struct fb_ofmf_push;

/* Fill io with functions bound to p. 0 and *out, or -ENOMEM. */
int fb_ofmf_push_new(struct fb_push *p, struct fb_ofmf_io *io, struct fb_ofmf_push **out);
/* From now on, Context changes made by others are reported to m. */
void fb_ofmf_push_attach(struct fb_ofmf_push *a, struct fb_ofmf *m);
/* The push engine's subscriptions changed (its `changed` callback). NULL ok. */
void fb_ofmf_push_changed(struct fb_ofmf_push *a);
void fb_ofmf_push_free(struct fb_ofmf_push *a);

#endif
