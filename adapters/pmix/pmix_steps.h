/* pmix_steps.h - Delivery=slurm: the Slurm steps on this node that
 * spank_fabricbus_pmix.so serves, found by their sockets in
 * <StepDir>/<NodeName>/<job>.<step>.sock (pmix_note.h has the protocol).
 *
 * Every call blocks for at most FBP_STEP_TIMEOUT_MS per step: the other end
 * is a thread in slurmstepd on this host that answers at once. A step whose
 * socket closes or times out is dropped (its step ended, or slurmstepd is
 * gone); a rescan finds it again if it is still there. Loop thread only.
 */
#ifndef FBP_STEPS_H
#define FBP_STEPS_H

#include "pmix_note.h"
#include "pmix_route.h"

#include <stddef.h>
#include <stdint.h>

#define FBP_STEP_TIMEOUT_MS 3000

struct fbp_step {
	char path[108];
	int fd;
	struct fbp_hello hello;
	struct fbp_view view;   /* the step's nodes and their cables */
	uint64_t position;      /* every event up to here is handled for this step */
	uint64_t told;          /* the Position the step last acked */
	uint64_t delivered;     /* notes acked with status 0 */
	char buf[16384];         /* a hello carries a hostlist of up to 4 KiB */
	size_t have;
};

struct fbp_steps {
	char dir[280];          /* <StepDir>/<NodeName> */
	struct fbp_step **v;
	size_t n;
};

/* Open every socket under s->dir not open yet, read its hello. Each new step
 * is handed to on_new (which may set its view and position) before it joins
 * the table; on_new returning < 0 drops it. Returns the number added. */
int fbp_steps_scan(struct fbp_steps *s, int (*on_new)(void *arg, struct fbp_step *st), void *arg);

/* Send a note (n != NULL) or a bare mark, with Position st->position, and
 * wait for its ack. 0, or < 0 with the reason in err (the step is then
 * closed: st->fd == -1; drop it with fbp_steps_reap). A note the step could
 * not deliver (its ack carries an error) returns -EIO with the step's text,
 * and the step stays open. */
int fbp_step_send(struct fbp_step *st, const struct fbp_note *n, char *err, size_t errsz);

/* Free closed steps. */
void fbp_steps_reap(struct fbp_steps *s);
void fbp_steps_free(struct fbp_steps *s);

#endif
