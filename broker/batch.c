#include "batch.h"

#include <stdlib.h>

struct fb_batch *fb_batch_new(size_t cap)
{
	struct fb_batch *b = malloc(sizeof(*b) + cap * sizeof(struct fb_record));
	if (!b)
		return NULL;
	atomic_init(&b->refs, 1);
	b->n = 0;
	b->cap = cap;
	b->pool = NULL;
	return b;
}

void fb_batch_ref(struct fb_batch *b) { atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed); }

/* The last reference: back to its pool if there is room, else freed. */
static void batch_release(struct fb_batch *b)
{
	struct fb_batch_pool *p = b->pool;
	if (p) {
		pthread_mutex_lock(&p->mu);
		int kept = p->n < FB_BATCH_POOL_MAX;
		if (kept)
			p->free[p->n++] = b;
		pthread_mutex_unlock(&p->mu);
		if (kept)
			return;
	}
	free(b);
}

void fb_batch_unref(struct fb_batch *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		batch_release(b);
}

int fb_batch_pool_init(struct fb_batch_pool *p, size_t cap)
{
	p->n = 0;
	p->cap = cap;
	return -pthread_mutex_init(&p->mu, NULL);
}

struct fb_batch *fb_batch_get(struct fb_batch_pool *p)
{
	struct fb_batch *b = NULL;
	pthread_mutex_lock(&p->mu);
	if (p->n)
		b = p->free[--p->n];
	pthread_mutex_unlock(&p->mu);
	if (!b) {
		b = fb_batch_new(p->cap);
		if (!b)
			return NULL;
		b->pool = p;
	}
	atomic_store_explicit(&b->refs, 1, memory_order_relaxed);
	b->n = 0;
	return b;
}

void fb_batch_pool_fini(struct fb_batch_pool *p)
{
	for (unsigned i = 0; i < p->n; i++)
		free(p->free[i]);
	p->n = 0;
	pthread_mutex_destroy(&p->mu);
}
