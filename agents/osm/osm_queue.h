/* osm_queue.h - a bounded, lock-protected FIFO of fb_events.
 *
 * opensm calls the plugin's report() from several threads at once (its
 * dispatchers and the state manager); they push here and never wait for
 * anything but this short mutex. The plugin's own libevent thread pops.
 * When full, a push drops the event and counts it: opensm never waits on
 * the broker.
 */
#ifndef OSM_QUEUE_H
#define OSM_QUEUE_H

#include "fb_event.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct osm_queue {
	pthread_mutex_t mu;
	struct fb_event *ring; /* owned: cap slots */
	size_t cap, head, len;
	uint64_t pushed, dropped;
};

/* 0, or -ENOMEM. */
int osm_queue_init(struct osm_queue *q, size_t cap);
void osm_queue_destroy(struct osm_queue *q);
/* Copy ev in. Returns 1 if the queue was empty before (the caller wakes the
 * consumer), 0 if not, FB_EFULL if dropped. */
int osm_queue_push(struct osm_queue *q, const struct fb_event *ev);
/* Copy up to max events out, oldest first; returns how many. */
size_t osm_queue_pop(struct osm_queue *q, struct fb_event *out, size_t max);
void osm_queue_stats(struct osm_queue *q, uint64_t *pushed, uint64_t *dropped);

#endif
