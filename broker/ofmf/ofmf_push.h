/* ofmf_push.h - struct fb_ofmf_io over the push module: the OFMF agent's
 * requests go through the push engine's HTTP client (fb_hc, libcurl on the
 * loop), and its SunfishServer subscription is an ordinary EventDestination
 * in the push engine's store (persisted there, delivered there, PATCHed by
 * the core through the EventService routes).
 *
 * The adapter watches the push engine (fb_push_watch): a SunfishServer
 * Context other than the one it last set is the core's PATCH, handed to the
 * registration (fb_ofmf_context_patched); a failed delivery to the core
 * makes the registration check itself soon (fb_ofmf_delivery_failed).
 *
 * Threads: the loop. Lifetime: made before fb_ofmf_start; detached
 * (attach NULL) before fb_ofmf_stop; freed after fb_push_stop (the engine
 * holds it as a watcher until then).
 */
#ifndef FB_OFMF_PUSH_H
#define FB_OFMF_PUSH_H

#include "ofmf.h"

struct fb_push;
struct fb_ofmf_push;

/* Fill io with functions bound to p and watch p. 0 and *out, -ENOMEM, or
 * -ENOSPC (too many watchers). */
int fb_ofmf_push_new(struct fb_push *p, struct fb_ofmf_io *io, struct fb_ofmf_push **out);
/* From now on, Context changes made by others are reported to m (NULL: to
 * nobody). */
void fb_ofmf_push_attach(struct fb_ofmf_push *a, struct fb_ofmf *m);
void fb_ofmf_push_free(struct fb_ofmf_push *a);

#endif
