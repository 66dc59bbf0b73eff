/* test_redfish_golden.c - the Redfish renderer's bytes do not change: every
 * event of tests/lib/fb_test_redfish_corpus.h (thousands: hand-picked edges
 * and random ones) is rendered, with what rendering reports beside the
 * document (fb_redfish_facts), and hashed in blocks of FBT_BLOCK events;
 * the hashes must equal tests/unit/redfish_golden.txt, written by the
 * renderer before it was made faster (session 13, from main at 86cceb3).
 * A subscriber, Kafka and the journal's readers see exactly these bytes.
 * Also: the same bytes in any buffer, and every name fits its slot.
 *
 *   test_redfish_golden                 compare (the unit test)
 *   test_redfish_golden --write FILE    write the golden file (only from a
 *                                       renderer whose output is meant to change)
 *   test_redfish_golden --dump FROM TO  print events FROM..TO-1 rendered, one a
 *                                       line, to diff two builds byte by byte
 */
#include "fb_test.h"
#include "fb_test_redfish_corpus.h"

#include "fb_buf.h"
#include "fb_redfish.h"

#include <stdlib.h>

#define FBT_BLOCK 16
#define N_MISSED 64 /* SubscriberEventsMissed notices, after the corpus */
#define N_BLOCKS ((FBT_CORPUS_SIZE + N_MISSED + FBT_BLOCK - 1) / FBT_BLOCK)

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* Item i rendered into out (emptied first): a corpus event's document then
 * its facts, or a missed notice. 0 or the renderer's error. */
static int render_item(unsigned i, struct fb_buf *out)
{
	out->len = 0;
	if (i >= FBT_CORPUS_SIZE) {
		uint64_t s = 0xa11ed000ull + i;
		uint64_t missed = fbt_number(&s);
		return fb_redfish_render_missed(out, missed, fbt_number(&s));
	}
	struct fb_event ev;
	const char *fabric;
	uint64_t id = fbt_corpus_event(&ev, i, &fabric);
	struct fb_redfish_facts f;
	int rc = fb_redfish_render_facts(out, &ev, id, fabric, &f);
	if (rc)
		return rc;
	char facts[FB_REDFISH_ORIGIN_MAX + 256];
	int n = snprintf(facts, sizeof(facts), "\t%d %s %s %s %u", f.origin_len, f.origin, f.cls.message_id,
			 f.cls.event_type, (unsigned)f.cls.severity);
	return fb_buf_put(out, facts, (size_t)n);
}

static int block_hashes(uint64_t *h)
{
	struct fb_buf b = FB_BUF_INIT;
	int rc = 0;
	for (unsigned k = 0; k < N_BLOCKS && !rc; k++) {
		h[k] = 0xcbf29ce484222325ull;
		for (unsigned i = k * FBT_BLOCK; i < (k + 1) * FBT_BLOCK && i < FBT_CORPUS_SIZE + N_MISSED && !rc; i++) {
			rc = render_item(i, &b);
			h[k] = fnv(h[k], b.data, b.len);
			h[k] = fnv(h[k], "\n", 1);
		}
	}
	fb_buf_free(&b);
	return rc;
}

static int write_golden(const char *path)
{
	static uint64_t h[N_BLOCKS];
	FILE *f = fopen(path, "w");
	if (!f || block_hashes(h)) {
		perror(path);
		return 1;
	}
	fprintf(f, "# FNV-1a 64 of the Redfish renderings of tests/lib/fb_test_redfish_corpus.h,\n"
		   "# %d items a block: tests/unit/test_redfish_golden.c --write\n",
		FBT_BLOCK);
	for (unsigned k = 0; k < N_BLOCKS; k++)
		fprintf(f, "%u %016llx\n", k, (unsigned long long)h[k]);
	return fclose(f) ? 1 : 0;
}

static int dump(unsigned from, unsigned to)
{
	struct fb_buf b = FB_BUF_INIT;
	for (unsigned i = from; i < to && i < FBT_CORPUS_SIZE + N_MISSED; i++) {
		if (render_item(i, &b))
			return 1;
		printf("%u\t%.*s\n", i, (int)b.len, (const char *)b.data);
	}
	fb_buf_free(&b);
	return 0;
}

static int read_golden(uint64_t *h)
{
	const char *src = getenv("FB_SRC");
	char path[1024];
	snprintf(path, sizeof(path), "%s/tests/unit/redfish_golden.txt", src ? src : ".");
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		return -1;
	}
	char line[128];
	unsigned n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned k;
		unsigned long long v;
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%u %llx", &k, &v) != 2 || k != n || n >= N_BLOCKS)
			break;
		h[n++] = v;
	}
	fclose(f);
	return n == N_BLOCKS ? 0 : -1;
}

/* The corpus renders to the golden bytes. On a difference, the first bad
 * block's items are printed: compare with `--dump` of a main build. */
static void corpus_matches_golden(void)
{
	static uint64_t want[N_BLOCKS], got[N_BLOCKS];
	CHECK(read_golden(want) == 0);
	CHECK(block_hashes(got) == 0);
	unsigned bad = 0, first = 0;
	for (unsigned k = 0; k < N_BLOCKS; k++) {
		if (want[k] != got[k] && !bad++)
			first = k;
	}
	if (bad) {
		fprintf(stderr, "  %u of %u blocks differ; the first, items %u..%u, renders as:\n", bad,
			(unsigned)N_BLOCKS, first * FBT_BLOCK, first * FBT_BLOCK + FBT_BLOCK - 1);
		dump(first * FBT_BLOCK, first * FBT_BLOCK + FBT_BLOCK);
	}
	CHECK_EQ(bad, 0);
}

/* The same bytes whatever the buffer: fresh, after other bytes with no room
 * left (every append grows it), or with plenty reserved. */
static void render_same_in_any_buffer(void)
{
	struct fb_buf ref = FB_BUF_INIT, tight = FB_BUF_INIT, roomy = FB_BUF_INIT;
	unsigned bad = FBT_CORPUS_SIZE;
	CHECK(fb_buf_reserve(&roomy, 1 << 16) == 0);
	for (unsigned i = 0; i < FBT_CORPUS_SIZE; i++) {
		struct fb_event ev;
		const char *fabric;
		uint64_t id = fbt_corpus_event(&ev, i, &fabric);
		fb_buf_free(&ref);
		fb_buf_free(&tight);
		roomy.len = 0;
		int rc = fb_redfish_render(&ref, &ev, id, fabric);
		/* a prefix that fills the buffer exactly */
		rc = rc ? rc : fb_buf_put(&tight, "data: ", 6);
		tight.cap = tight.len = 6;
		rc = rc ? rc : fb_redfish_render(&tight, &ev, id, fabric);
		rc = rc ? rc : fb_redfish_render(&roomy, &ev, id, fabric);
		if (rc || tight.len != ref.len + 6 || memcmp(tight.data + 6, ref.data, ref.len) ||
		    roomy.len != ref.len || memcmp(roomy.data, ref.data, ref.len)) {
			bad = i;
			break;
		}
	}
	fb_buf_free(&ref);
	fb_buf_free(&tight);
	fb_buf_free(&roomy);
	CHECK_EQ(bad, FBT_CORPUS_SIZE);
}

/* Every name the renderer copies as a whole slot ends inside it
 * (fb_event.h, FB_NAME_SLOT): a 32-byte name would compile, without its NUL. */
static void names_fit_their_slots(void)
{
	const char *(*const fns[])(unsigned) = { fb_kind_name, fb_severity_name, fb_link_class_name,
						 fb_tech_name, fb_counter_name, fb_quiet_name };
	unsigned bad = 0;
	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++)
		for (unsigned v = 0; v < 256; v++)
			bad += fns[f](v) && strnlen(fns[f](v), FB_NAME_SLOT) >= FB_NAME_SLOT;
	for (unsigned i = 0; i < FBT_CORPUS_CRAFTED; i++) {
		struct fb_event ev;
		const char *fabric;
		struct fb_redfish_class c;
		fbt_corpus_event(&ev, i, &fabric);
		fb_redfish_classify(&ev, &c);
		bad += strnlen(c.event_type, FB_NAME_SLOT) >= FB_NAME_SLOT;
	}
	CHECK_EQ(bad, 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_golden(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "--dump"))
		return dump((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	RUN(corpus_matches_golden);
	RUN(render_same_in_any_buffer);
	RUN(names_fit_their_slots);
	return TEST_DONE();
}
