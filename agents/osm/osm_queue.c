#include "osm_queue.h"

#include "fb_err.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int osm_queue_init(struct osm_queue *q, size_t cap)
{
	memset(q, 0, sizeof(*q));
	q->ring = calloc(cap, sizeof(*q->ring));
	if (!q->ring)
		return -ENOMEM;
	q->cap = cap;
	if (pthread_mutex_init(&q->mu, NULL) != 0) {
		free(q->ring);
		q->ring = NULL;
		return -ENOMEM;
	}
	return 0;
}

void osm_queue_destroy(struct osm_queue *q)
{
	if (!q->ring)
		return;
	pthread_mutex_destroy(&q->mu);
	free(q->ring);
	q->ring = NULL;
}

int osm_queue_push(struct osm_queue *q, const struct fb_event *ev)
{
	int rc;
	pthread_mutex_lock(&q->mu);
	if (q->len == q->cap) {
		q->dropped++;
		rc = FB_EFULL;
	} else {
		q->ring[(q->head + q->len) % q->cap] = *ev;
		rc = q->len == 0;
		q->len++;
		q->pushed++;
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

size_t osm_queue_pop(struct osm_queue *q, struct fb_event *out, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&q->mu);
	while (n < max && q->len > 0) {
		out[n++] = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->len--;
	}
	pthread_mutex_unlock(&q->mu);
	return n;
}

void osm_queue_stats(struct osm_queue *q, uint64_t *pushed, uint64_t *dropped)
{
	pthread_mutex_lock(&q->mu);
	*pushed = q->pushed;
	*dropped = q->dropped;
	pthread_mutex_unlock(&q->mu);
}
