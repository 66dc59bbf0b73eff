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
	b->kinds = 0;
	return b;
}

void fb_batch_ref(struct fb_batch *b) { atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed); }

void fb_batch_unref(struct fb_batch *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1)
		free(b);
}
