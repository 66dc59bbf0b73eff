/* loopq.h - hand work from another thread to the libevent loop and get it
 * back answered: the mechanism behind every HTTP write that changes broker
 * state (POST /fabric/jobs's shape, generalized for the Redfish service).
 *
 * A submitter (the lws thread) embeds struct fb_loop_call first in its own
 * work item, sets run (what the loop does with it) and submits it. The
 * loop runs it in one pass of its own (event_active at priority 0, like the
 * agent sockets), puts it on the done list and calls the waker (the lws
 * thread's lws_cancel_service). The submitter takes it back with
 * fb_loopq_take_done() and answers; token is the submitter's, returned
 * unchanged, to find whom the answer is for. A call whose submitter has
 * gone meanwhile is still run, then freed by the taker through ->free.
 *
 * The base must have been created after evthread_use_pthreads().
 * Threads: fb_loopq_new/free on the loop (before and after the other
 * thread); the rest from any thread; run() only on the loop.
 */
#ifndef FB_LOOPQ_H
#define FB_LOOPQ_H

#include <event2/event.h>
#include <stddef.h>
#include <stdint.h>

struct fb_loop_call {
	struct fb_loop_call *next;
	void (*run)(struct fb_loop_call *c);  /* on the loop: do it, set the result */
	void (*free)(struct fb_loop_call *c); /* frees the whole item */
	uint64_t token;                       /* the submitter's */
};

struct fb_loopq;

/* max_in_flight: calls submitted and not yet taken back, at most. NULL on
 * ENOMEM. base NULL: no loop (tests); submit then says -ENOTSUP. */
struct fb_loopq *fb_loopq_new(struct event_base *base, size_t max_in_flight);
/* Frees the calls still queued (through ->free). */
void fb_loopq_free(struct fb_loopq *q);
/* 0 (the queue owns c now), FB_EFULL (too many in flight; answer 503) or
 * -ENOTSUP (no loop); c stays the caller's on failure. */
int fb_loopq_submit(struct fb_loopq *q, struct fb_loop_call *c);
/* One call the loop has run (the caller owns it), or NULL. */
struct fb_loop_call *fb_loopq_take_done(struct fb_loopq *q);
/* Called on the loop after calls were run (NULL: no one to wake). */
void fb_loopq_set_waker(struct fb_loopq *q, void (*wake)(void *), void *arg);

#endif
