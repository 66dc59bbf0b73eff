/* test_batch.c - broker/batch.h: fb_batch.kinds says which kinds a batch
 * holds, so that the root-cause output may skip the others (storm.h); the
 * last reference frees the batch (ASan would report a leak). */
#include "fb_test.h"
#include "batch.h"
#include "storm.h"

static void kinds_says_what_a_batch_holds(void)
{
	struct fb_batch *b = fb_batch_new(4);
	CHECK(b);
	CHECK_EQ(b->kinds, 0);
	b->rec[0].ev.kind = FB_KIND_TEST;
	fb_batch_add(b);
	b->rec[1].ev.kind = FB_KIND_ACTION;
	fb_batch_add(b);
	CHECK_EQ(b->n, 2);
	CHECK_EQ(b->kinds, fb_batch_kind_bit(FB_KIND_TEST) | fb_batch_kind_bit(FB_KIND_ACTION));
	CHECK(!(b->kinds & FB_STORM_KINDS));
	b->rec[2].ev.kind = FB_KIND_PORT_STATE;
	fb_batch_add(b);
	CHECK(b->kinds & FB_STORM_KINDS);
	b->rec[3].ev.kind = 200; /* not a kind today: the catch-all bit */
	fb_batch_add(b);
	CHECK(b->kinds & fb_batch_kind_bit(63));
	CHECK_EQ(fb_batch_kind_bit(200), fb_batch_kind_bit(63));
	fb_batch_ref(b); /* a sink's reference */
	fb_batch_unref(b);
	CHECK_EQ(b->n, 4); /* still there */
	fb_batch_unref(b);
}

int main(void)
{
	RUN(kinds_says_what_a_batch_holds);
	return TEST_DONE();
}
