/* batch.c - packed batch records: see batch.h. */
#include "batch.h"

#include "fb_buf.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of data[] per record of the batch's cap: a port event packs into
 * ~150-250 bytes; a batch of larger ones is full by bytes before cap. */
#define BYTES_PER_RECORD 256

/* A packed record starts with this (8-byte aligned), then n_counters
 * struct fb_counter, then the strings of STRS in order, len[k] bytes each. */
struct packed_head {
	uint64_t event_id, seq, ts_ns, switch_guid, port_guid, peer_guid;
	uint32_t ifindex;
	uint16_t port, lid, peer_port;
	uint8_t kind, severity, link_class, tech, port_state, phys_state, n_counters;
	uint8_t len[9];
};

/* Where each string lives in struct fb_event, and its field's size. */
static const struct {
	uint16_t off, size;
} STRS[] = {
#define STR(f) { (uint16_t)offsetof(struct fb_event, f), (uint16_t)sizeof(((struct fb_event *)0)->f) }
	STR(agent_id), STR(subj.fabric), STR(subj.switch_name), STR(subj.node), STR(subj.device),
	STR(subj.addr), STR(subj.peer_name), STR(text), STR(jobs),
#undef STR
};
#define N_STRS (sizeof(STRS) / sizeof(STRS[0]))

static_assert(N_STRS == sizeof(((struct packed_head *)0)->len), "one length per string");

/* Strings shorter than STR_BLOCK (nearly all of them: agent ids, switch and
 * node names) are copied in and out as a fixed block of STR_BLOCK bytes,
 * two vector moves, instead of a strnlen and a memcpy call each: the block
 * lies within the field (every field is at least this long) and within the
 * batch (a record is packed only where FB_BATCH_RECORD_MAX bytes are free,
 * and that counts every field at its full size). */
#define STR_BLOCK 32 /* fb_nul32's */
static_assert(FB_FABRIC_MAX >= STR_BLOCK && FB_NAME_MAX >= STR_BLOCK && FB_ADDR_MAX >= STR_BLOCK &&
		      FB_AGENT_ID_MAX >= STR_BLOCK && FB_TEXT_MAX >= STR_BLOCK && FB_JOBS_MAX >= STR_BLOCK,
	      "every string field holds a whole block");

static_assert(sizeof(struct packed_head) + 7 <= 96, "FB_BATCH_RECORD_MAX's head and padding");
static_assert(FB_AGENT_ID_MAX <= 256 && FB_TEXT_MAX <= 256 && FB_JOBS_MAX <= 256 && FB_NAME_MAX <= 256,
	      "string lengths fit a byte");

/* Freed batches kept for the next fb_batch_new. A batch is ~1 MiB, which
 * glibc serves from the heap top or from mmap: freed, it often went back to
 * the kernel (heap trim, munmap) and the next batch took a page fault on
 * every 4 KiB it packed (bench_broker.sh: ~15,000 minor faults per 2M
 * events after the ring was full; on a VM a fresh page may also cost a host
 * fault). A few spares cover the batches in flight at once (the one being
 * packed, the sync job's, the WebSocket thread's). A batch is freed on
 * whichever thread drops it last: a mutex, taken once per batch. */
#define SPARES_MAX 4

static struct {
	pthread_mutex_t mu;
	size_t n;
	struct fb_batch *b[SPARES_MAX];
	size_t cap[SPARES_MAX];
} spares = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t batch_bytes(size_t cap)
{
	/* cap records of up to BYTES_PER_RECORD always fit */
	return (cap * BYTES_PER_RECORD + FB_BATCH_RECORD_MAX + 7) & ~(size_t)7;
}

static size_t alloc_bytes(size_t cap)
{
	return sizeof(struct fb_batch) + batch_bytes(cap) + cap * sizeof(uint32_t);
}

/* Under ASan a kept batch is poisoned, so that a reader still holding it
 * after its last unref is caught as if it had been freed. */
#if defined(__SANITIZE_ADDRESS__)
#define BATCH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BATCH_ASAN 1
#endif
#endif
#ifdef BATCH_ASAN
#include <sanitizer/asan_interface.h>
#define SPARE_POISON(b, cap) ASAN_POISON_MEMORY_REGION(b, alloc_bytes(cap))
#define SPARE_UNPOISON(b, cap) ASAN_UNPOISON_MEMORY_REGION(b, alloc_bytes(cap))
#else
#define SPARE_POISON(b, cap) ((void)(b), (void)(cap))
#define SPARE_UNPOISON(b, cap) ((void)(b), (void)(cap))
#endif

static struct fb_batch *spare_take(size_t cap)
{
	struct fb_batch *b = NULL;
	pthread_mutex_lock(&spares.mu);
	if (spares.n && spares.cap[spares.n - 1] == cap) {
		b = spares.b[--spares.n];
		SPARE_UNPOISON(b, cap);
	}
	pthread_mutex_unlock(&spares.mu);
	return b;
}

/* 1 if b was kept as a spare. */
static int spare_keep(struct fb_batch *b)
{
	int kept = 0;
	size_t cap = b->cap;
	pthread_mutex_lock(&spares.mu);
	if (spares.n < SPARES_MAX) {
		SPARE_POISON(b, cap);
		spares.cap[spares.n] = cap;
		spares.b[spares.n++] = b;
		kept = 1;
	}
	pthread_mutex_unlock(&spares.mu);
	return kept;
}

void fb_batch_spares_free(void)
{
	pthread_mutex_lock(&spares.mu);
	while (spares.n) {
		spares.n--;
		SPARE_UNPOISON(spares.b[spares.n], spares.cap[spares.n]);
		free(spares.b[spares.n]);
	}
	pthread_mutex_unlock(&spares.mu);
}

struct fb_batch *fb_batch_new(size_t cap)
{
	size_t size = batch_bytes(cap);
	struct fb_batch *b = spare_take(cap);
	if (!b)
		b = malloc(alloc_bytes(cap));
	if (!b)
		return NULL;
	atomic_init(&b->refs, 1);
	b->n = 0;
	b->cap = cap;
	b->used = 0;
	b->size = size;
	b->kinds = 0;
	b->off = (uint32_t *)(b->data + size);
	return b;
}

void fb_batch_ref(struct fb_batch *b) { atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed); }

void fb_batch_unref(struct fb_batch *b)
{
	if (b && atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1 && !spare_keep(b))
		free(b);
}

void fb_batch_add(struct fb_batch *b, const struct fb_record *r)
{
	assert(fb_batch_room(b));
	const struct fb_event *ev = &r->ev;
	const struct fb_subject *s = &ev->subj;
	unsigned char *start = b->data + b->used;
	struct packed_head h = {
		.event_id = r->event_id, .seq = ev->seq, .ts_ns = ev->ts_ns,
		.switch_guid = s->switch_guid, .port_guid = s->port_guid, .peer_guid = s->peer_guid,
		.ifindex = s->ifindex, .port = s->port, .lid = s->lid, .peer_port = s->peer_port,
		.kind = ev->kind, .severity = ev->severity, .link_class = ev->link_class,
		.tech = ev->tech, .port_state = ev->port_state, .phys_state = ev->phys_state,
		.n_counters = ev->n_counters > FB_COUNTERS_MAX ? FB_COUNTERS_MAX : ev->n_counters,
	};
	unsigned char *p = start + sizeof(h);
	memcpy(p, ev->counters, h.n_counters * sizeof(struct fb_counter));
	p += h.n_counters * sizeof(struct fb_counter);
	for (size_t k = 0; k < N_STRS; k++) {
		const char *str = (const char *)ev + STRS[k].off;
		if (!str[0]) {
			h.len[k] = 0; /* most of an event's strings: no call */
			continue;
		}
		size_t n = fb_nul32(str);
		if (n < STR_BLOCK) {
			memcpy(p, str, STR_BLOCK); /* the bytes after n are overwritten or unused */
		} else {
			n = strnlen(str, STRS[k].size);
			if (n == STRS[k].size)
				n--; /* no NUL in the field: cut (see batch.h) */
			memcpy(p, str, n);
		}
		h.len[k] = (uint8_t)n;
		p += n;
	}
	memcpy(start, &h, sizeof(h));
	b->off[b->n] = (uint32_t)b->used;
	b->used = ((size_t)(p - b->data) + 7) & ~(size_t)7;
	b->kinds |= fb_batch_kind_bit(h.kind);
	b->n++;
}

const struct fb_event *fb_batch_get(const struct fb_batch *b, size_t i, struct fb_record *out)
{
	const unsigned char *p = b->data + b->off[i];
	struct fb_event *ev = &out->ev;
	struct fb_subject *s = &ev->subj;
	struct packed_head h;
	memcpy(&h, p, sizeof(h));
	out->event_id = h.event_id;
	ev->seq = h.seq;
	ev->ts_ns = h.ts_ns;
	s->switch_guid = h.switch_guid;
	s->port_guid = h.port_guid;
	s->peer_guid = h.peer_guid;
	s->ifindex = h.ifindex;
	s->port = h.port;
	s->lid = h.lid;
	s->peer_port = h.peer_port;
	ev->kind = h.kind;
	ev->severity = h.severity;
	ev->link_class = h.link_class;
	ev->tech = h.tech;
	ev->port_state = h.port_state;
	ev->phys_state = h.phys_state;
	ev->n_counters = h.n_counters;
	p += sizeof(h);
	memcpy(ev->counters, p, h.n_counters * sizeof(struct fb_counter));
	p += h.n_counters * sizeof(struct fb_counter);
	for (size_t k = 0; k < N_STRS; k++) {
		char *str = (char *)ev + STRS[k].off;
		if (h.len[k] >= STR_BLOCK)
			memcpy(str, p, h.len[k]);
		else if (h.len[k])
			memcpy(str, p, STR_BLOCK); /* see STR_BLOCK; the NUL cuts it */
		str[h.len[k]] = '\0';
		p += h.len[k];
	}
	return ev;
}
