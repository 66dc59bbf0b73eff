/* test_batch.c - broker/batch.h: a packed record unpacks to the event that
 * was added (every field; the same Redfish bytes), a batch is full by bytes
 * before its records overlap, fb_batch.kinds says which kinds a batch holds
 * (so that the root-cause output may skip the others: storm.h), and the
 * last reference frees the batch (ASan would report a leak). */
#include "fb_test.h"
#include "fb_test_redfish_corpus.h"
#include "batch.h"
#include "fb_buf.h"
#include "fb_redfish.h"
#include "storm.h"

#include <stdlib.h>

static void add_kind(struct fb_batch *b, unsigned kind)
{
	struct fb_record r = { .event_id = 1 + b->n };
	r.ev.kind = (uint8_t)kind;
	fb_batch_add(b, &r);
}

static void kinds_says_what_a_batch_holds(void)
{
	struct fb_batch *b = fb_batch_new(4);
	CHECK(b);
	CHECK_EQ(b->kinds, 0);
	add_kind(b, FB_KIND_TEST);
	add_kind(b, FB_KIND_ACTION);
	CHECK_EQ(b->n, 2);
	CHECK_EQ(b->kinds, fb_batch_kind_bit(FB_KIND_TEST) | fb_batch_kind_bit(FB_KIND_ACTION));
	CHECK(!(b->kinds & FB_STORM_KINDS));
	add_kind(b, FB_KIND_PORT_STATE);
	CHECK(b->kinds & FB_STORM_KINDS);
	add_kind(b, 200); /* not a kind today: the catch-all bit */
	CHECK(b->kinds & fb_batch_kind_bit(63));
	CHECK_EQ(fb_batch_kind_bit(200), fb_batch_kind_bit(63));
	CHECK(!fb_batch_room(b)); /* cap reached */
	fb_batch_ref(b); /* a sink's reference */
	fb_batch_unref(b);
	CHECK_EQ(b->n, 4); /* still there */
	CHECK_EQ(fb_batch_id(b, 3), 4);
	fb_batch_unref(b);
}

/* s as packing keeps it: cut to its field if it has no NUL there. */
static int same_str(const char *got, const char *want, size_t field)
{
	size_t n = strnlen(want, field);
	if (n == field)
		n--;
	return strlen(got) == n && memcmp(got, want, n) == 0;
}

static int fields_terminated(const struct fb_event *e)
{
	const struct fb_subject *s = &e->subj;
#define T(f) (memchr(f, 0, sizeof(f)) != NULL)
	return T(e->agent_id) && T(s->fabric) && T(s->switch_name) && T(s->node) && T(s->device) &&
	       T(s->addr) && T(s->peer_name) && T(e->text) && T(e->jobs);
#undef T
}

/* Every field of got is what was added as want. */
static void check_same_event(const struct fb_event *got, const struct fb_event *want)
{
	const struct fb_subject *g = &got->subj, *w = &want->subj;
	CHECK_EQ(got->seq, want->seq);
	CHECK_EQ(got->ts_ns, want->ts_ns);
	CHECK_EQ(got->kind, want->kind);
	CHECK_EQ(got->severity, want->severity);
	CHECK_EQ(got->link_class, want->link_class);
	CHECK_EQ(got->tech, want->tech);
	CHECK_EQ(got->port_state, want->port_state);
	CHECK_EQ(got->phys_state, want->phys_state);
	CHECK_EQ(g->switch_guid, w->switch_guid);
	CHECK_EQ(g->port, w->port);
	CHECK_EQ(g->port_guid, w->port_guid);
	CHECK_EQ(g->lid, w->lid);
	CHECK_EQ(g->ifindex, w->ifindex);
	CHECK_EQ(g->peer_guid, w->peer_guid);
	CHECK_EQ(g->peer_port, w->peer_port);
	unsigned n = want->n_counters > FB_COUNTERS_MAX ? FB_COUNTERS_MAX : want->n_counters;
	CHECK_EQ(got->n_counters, n);
	for (unsigned i = 0; i < n; i++) {
		CHECK_EQ(got->counters[i].id, want->counters[i].id);
		CHECK_EQ(got->counters[i].value, want->counters[i].value);
	}
#define S(f) CHECK(same_str(got->f, want->f, sizeof(want->f)))
	S(agent_id); S(subj.fabric); S(subj.switch_name); S(subj.node); S(subj.device);
	S(subj.addr); S(subj.peer_name); S(text); S(jobs);
#undef S
}

static void render(struct fb_buf *out, const struct fb_event *ev, uint64_t id, const char *fabric)
{
	fb_buf_reset(out);
	CHECK_EQ(fb_redfish_render(out, ev, id, fabric), 0);
}

/* The whole renderer corpus (hostile and maximum-length strings, every
 * kind, random fields) through batches of 64: each record unpacks to its
 * event, into a reused record that held another one before, and renders
 * to the same bytes. */
static void corpus_round_trips(void)
{
	struct fb_buf a = { 0 }, b2 = { 0 };
	struct fb_record *in = calloc(64, sizeof(*in)), out;
	const char *fabric[64];
	CHECK(in);
	memset(&out, 'x', sizeof(out)); /* stale bytes after every NUL */
	unsigned checked = 0, rendered = 0;
	for (unsigned base = 0, k = 0; base < FBT_CORPUS_SIZE; base += k) {
		struct fb_batch *b = fb_batch_new(64);
		CHECK(b);
		for (k = 0; k < 64 && base + k < FBT_CORPUS_SIZE && fb_batch_room(b); k++) {
			memset(&in[k], 0, sizeof(in[k]));
			in[k].event_id = fbt_corpus_event(&in[k].ev, base + k, &fabric[k]);
			snprintf(in[k].ev.agent_id, sizeof(in[k].ev.agent_id), "agent-%u", base + k);
			fb_batch_add(b, &in[k]);
		}
		CHECK_EQ(b->n, k);
		CHECK(b->used <= b->size);
		for (unsigned j = 0; j < k; j++) {
			CHECK_EQ(fb_batch_id(b, j), in[j].event_id);
			const struct fb_event *ev = fb_batch_get(b, j, &out);
			CHECK(ev == &out.ev);
			CHECK_EQ(out.event_id, in[j].event_id);
			check_same_event(ev, &in[j].ev);
			checked++;
			if (fields_terminated(&in[j].ev)) {
				render(&a, &in[j].ev, in[j].event_id, fabric[j]);
				render(&b2, ev, out.event_id, fabric[j]);
				CHECK_EQ(a.len, b2.len);
				CHECK(memcmp(a.data, b2.data, a.len) == 0);
				rendered++;
			}
		}
		fb_batch_unref(b); /* one full by bytes: the rest go into the next */
	}
	CHECK_EQ(checked, FBT_CORPUS_SIZE);
	CHECK(rendered > FBT_CORPUS_SIZE / 2);
	fb_buf_free(&a);
	fb_buf_free(&b2);
	free(in);
}

/* Records with every string and counter at its maximum fill a batch by
 * bytes long before its cap, and none overlaps the next. */
static void full_by_bytes_without_overlap(void)
{
	struct fb_batch *b = fb_batch_new(4096);
	CHECK(b);
	struct fb_record r, out;
	memset(&r, 0, sizeof(r));
	r.ev.n_counters = FB_COUNTERS_MAX;
	size_t added = 0;
	while (fb_batch_room(b)) {
		struct fb_event *e = &r.ev;
		char c = (char)('A' + added % 26);
#define FILL(f) (memset(f, c, sizeof(f) - 1), f[sizeof(f) - 1] = '\0')
		FILL(e->agent_id); FILL(e->subj.fabric); FILL(e->subj.switch_name); FILL(e->subj.node);
		FILL(e->subj.device); FILL(e->subj.addr); FILL(e->subj.peer_name); FILL(e->text);
		FILL(e->jobs);
#undef FILL
		for (unsigned i = 0; i < FB_COUNTERS_MAX; i++)
			e->counters[i] = (struct fb_counter){ (uint16_t)(i + 1), added * 100 + i };
		r.event_id = 1000 + added++;
		fb_batch_add(b, &r);
	}
	CHECK(added < 4096);
	CHECK(added * (FB_BATCH_RECORD_MAX - 96) <= b->size);
	CHECK(b->used <= b->size);
	for (size_t i = 0; i < added; i++) {
		const struct fb_event *e = fb_batch_get(b, i, &out);
		CHECK_EQ(out.event_id, 1000 + i);
		CHECK_EQ(strlen(e->text), FB_TEXT_MAX - 1);
		CHECK_EQ(e->text[0], (char)('A' + i % 26));
		CHECK_EQ(e->jobs[FB_JOBS_MAX - 2], (char)('A' + i % 26));
		CHECK_EQ(e->counters[FB_COUNTERS_MAX - 1].value, i * 100 + FB_COUNTERS_MAX - 1);
	}
	fb_batch_unref(b);
}

/* Lengths around the 32-byte block batch.c copies short strings in; LONGEST
 * is the field's longest string, NO_NUL a field with every byte set. */
enum { LONGEST = 1000, NO_NUL = 1001 };
static const size_t lens[] = { 0, 1, 15, 16, 31, 32, 33, LONGEST, NO_NUL };
#define N_LENS (sizeof(lens) / sizeof(lens[0]))

/* field (size bytes) as a string of the k-th length of lens, of c. */
static void set_len(char *field, size_t size, size_t k, char c)
{
	size_t n = lens[k % N_LENS];
	n = n == LONGEST ? size - 1 : n == NO_NUL ? size : n;
	memset(field, c, size);
	if (n < size)
		field[n] = '\0';
}

/* Strings of every length in lens, mixed per record and field, packed until
 * the batch is full by bytes: every record unpacks to what was added (a
 * block never spills into the next record or into the index after the
 * data), into a record full of stale bytes. */
static void strings_around_the_block_size(void)
{
	struct fb_batch *b = fb_batch_new(4096);
	CHECK(b);
	struct fb_record *in = calloc(4096, sizeof(*in)), out;
	CHECK(in);
	memset(&out, 'x', sizeof(out));
	size_t n = 0;
	for (; fb_batch_room(b); n++) {
		struct fb_event *e = &in[n].ev;
		char c = (char)('a' + n % 26);
		size_t k = n * 7; /* each record starts elsewhere in lens */
#define LEN(f) set_len(f, sizeof(f), k++, c)
		LEN(e->agent_id); LEN(e->subj.fabric); LEN(e->subj.switch_name); LEN(e->subj.node);
		LEN(e->subj.device); LEN(e->subj.addr); LEN(e->subj.peer_name); LEN(e->text); LEN(e->jobs);
#undef LEN
		in[n].event_id = 7000 + n;
		fb_batch_add(b, &in[n]);
	}
	CHECK(n > 100 && n < 4096); /* full by bytes, not by count */
	CHECK(b->used <= b->size);
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ(fb_batch_id(b, i), 7000 + i);
		check_same_event(fb_batch_get(b, i, &out), &in[i].ev);
	}
	fb_batch_unref(b);
	free(in);
	fb_batch_spares_free();
}

/* A freed batch is kept and handed out again, empty, to the next batch of
 * its cap; one of another cap is a new one. */
static void freed_batch_comes_back_empty(void)
{
	struct fb_record r, out;
	memset(&r, 0, sizeof(r));
	r.ev.kind = FB_KIND_LINK_DOWN;
	snprintf(r.ev.text, sizeof(r.ev.text), "first life");
	struct fb_batch *b = fb_batch_new(64);
	CHECK(b);
	for (r.event_id = 1; fb_batch_room(b); r.event_id++)
		fb_batch_add(b, &r);
	CHECK_EQ(b->n, 64);
	fb_batch_ref(b);
	fb_batch_unref(b); /* not the last reference: still in use */
	CHECK_EQ(b->n, 64);
	fb_batch_unref(b);

	struct fb_batch *again = fb_batch_new(64);
	CHECK(again == b); /* the same memory, warm */
	CHECK_EQ(again->n, 0);
	CHECK_EQ(again->used, 0);
	CHECK_EQ(again->kinds, 0);
	CHECK_EQ(again->cap, 64);
	r.ev.kind = FB_KIND_LINK_UP;
	snprintf(r.ev.text, sizeof(r.ev.text), "second");
	r.event_id = 500;
	fb_batch_add(again, &r);
	CHECK_EQ(again->kinds, fb_batch_kind_bit(FB_KIND_LINK_UP));
	CHECK_EQ(fb_batch_id(again, 0), 500);
	CHECK_EQ(strcmp(fb_batch_get(again, 0, &out)->text, "second"), 0);

	struct fb_batch *other = fb_batch_new(32);
	CHECK(other && other != again);
	CHECK_EQ(other->cap, 32);
	CHECK_EQ(other->n, 0);
	fb_batch_unref(other);
	fb_batch_unref(again);
	fb_batch_spares_free();
}

int main(void)
{
	RUN(kinds_says_what_a_batch_holds);
	RUN(corpus_round_trips);
	RUN(full_by_bytes_without_overlap);
	RUN(strings_around_the_block_size);
	RUN(freed_batch_comes_back_empty);
	return TEST_DONE();
}
