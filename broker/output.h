/* output.h - the seam between the commit and whatever consumes committed
 * events (the WebSocket server and the Kafka sink today; SSE, push and OFMF
 * register the same way).
 *
 * commit.c calls every registered output, in registration order, once per
 * committed batch and only after that batch is durable. An output takes a
 * reference to the batch if it keeps it (fb_batch_ref); the batch is
 * immutable. The call runs on the libevent loop and must not block.
 *
 * An output that cannot keep up returns FB_OUTPUT_BUSY: the batch is taken
 * all the same, but the broker stops reading its agents (their unacked
 * events wait in the agents) until the output calls the `ready` function it
 * was given at start (from any thread). That is how a slow consumer inside
 * the broker turns into backpressure instead of a dropped subscriber.
 */
#ifndef FB_OUTPUT_H
#define FB_OUTPUT_H

#include "batch.h"

#include <stdint.h>

#define FB_OUTPUTS_MAX 8
#define FB_OUTPUT_BUSY 1

/* batch: the committed records (n >= 1); last_id: its last EventId. Returns
 * 0, or FB_OUTPUT_BUSY (see above). */
typedef int (*fb_output_committed_fn)(void *arg, struct fb_batch *batch, uint64_t last_id);

struct fb_output {
	const char *name; /* for logs: "websocket", "kafka" */
	fb_output_committed_fn committed;
	void *arg;
};

struct fb_outputs {
	struct fb_output v[FB_OUTPUTS_MAX];
	unsigned n;
};

/* Add an output. Returns 0, or -ENOSPC past FB_OUTPUTS_MAX. */
int fb_outputs_add(struct fb_outputs *o, const char *name, fb_output_committed_fn fn, void *arg);
/* Hand one durable batch to every output. Returns FB_OUTPUT_BUSY if any
 * output asked the broker to slow down, else 0. */
int fb_outputs_committed(const struct fb_outputs *o, struct fb_batch *batch);

#endif
