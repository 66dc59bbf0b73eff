/* fb_test_redfish_corpus.h - a fixed, broad corpus of events for the Redfish
 * renderer: test_redfish_golden compares every rendering with the bytes the
 * renderer produced when the golden file was made, and bench_render times
 * the renderer on it. Event i is a pure function of i (its own splitmix64
 * stream, no libc rand), so the corpus is the same on every machine.
 *
 * The first FBT_CORPUS_CRAFTED events are chosen by hand: the benchmark's
 * generated event, full port events, every kind x link class x technology x
 * severity, hostile strings (escapes, control bytes, UTF-8, raw high bytes),
 * fields at their maximum length and without a NUL, numbers at every power
 * of ten and around INT64_MAX, calendar edges, quiet reasons, EventGroupId.
 * The rest draw every field at random from distributions that favour those
 * edges. */
#ifndef FB_TEST_REDFISH_CORPUS_H
#define FB_TEST_REDFISH_CORPUS_H

#include "fb_event.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FBT_CORPUS_KIND_MAX 24 /* kinds 0..24: every one, the gap (21) and unknown ones */
#define FBT_CORPUS_COMBOS ((FBT_CORPUS_KIND_MAX + 1) * 6 * 4 * 4)
#define FBT_CORPUS_CRAFTED (16 + FBT_CORPUS_COMBOS)
#define FBT_CORPUS_SIZE (FBT_CORPUS_CRAFTED + 4000)

static inline uint64_t fbt_rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline unsigned fbt_below(uint64_t *s, unsigned n) { return (unsigned)(fbt_rng(s) % n); }

/* A number that is often an edge: 0, 10^k and 10^k - 1 (digit counts), a
 * power of two and its neighbours (INT64_MAX, UINT64_MAX), or anything. */
static inline uint64_t fbt_number(uint64_t *s)
{
	uint64_t p10 = 1;
	switch (fbt_below(s, 6)) {
	case 0:
		return 0;
	case 1:
		for (unsigned k = fbt_below(s, 20); k; k--)
			p10 *= 10;
		return p10 - fbt_below(s, 2);
	case 2:
		return (1ull << fbt_below(s, 64)) + fbt_below(s, 3) - 1;
	case 3:
		return fbt_below(s, 1000);
	default:
		return fbt_rng(s) >> fbt_below(s, 64);
	}
}

/* One byte for a random string: mostly plain ASCII, else something a JSON
 * or URL writer must escape, or a piece of UTF-8 / a raw high byte. */
static inline size_t fbt_piece(uint64_t *s, char *out)
{
	static const char special[] = "\"\\/%?# ;:,{}<>'&";
	static const char *const utf8[] = { "\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x8e\x89", "\xff", "\x80" };
	unsigned r = fbt_below(s, 100);
	if (r < 70) {
		out[0] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."[fbt_below(s, 65)];
		return 1;
	}
	if (r < 82) {
		out[0] = special[fbt_below(s, sizeof(special) - 1)];
		return 1;
	}
	if (r < 90) {
		out[0] = (char)(fbt_below(s, 2) ? 1 + fbt_below(s, 31) : 0x7f);
		return 1;
	}
	const char *u = utf8[fbt_below(s, 5)];
	size_t n = strlen(u);
	memcpy(out, u, n);
	return n;
}

/* Fill the field of size sz: empty, a realistic name, random bytes of any
 * length up to the maximum, or (rarely) without its NUL. */
static inline void fbt_field(uint64_t *s, char *f, size_t sz)
{
	static const char *const names[] = { "leaf-01", "node0001", "mlx5_0", "MF0;leaf3", "10.0.0.2",
		"02:00:00:00:00:03", "spine 2/3", "sw?x%y", "ib0", "eth-fabric", "loadgen", "bench1" };
	memset(f, 0, sz);
	unsigned r = fbt_below(s, 100);
	if (r < 35)
		return;
	if (r < 65) {
		strncpy(f, names[fbt_below(s, sizeof(names) / sizeof(names[0]))], sz - 1);
		return;
	}
	if (r < 67) {
		memset(f, 'x', sz); /* no NUL: rendered as "?" */
		return;
	}
	size_t want = r < 75 ? sz - 1 : 1 + fbt_below(s, (unsigned)sz - 1);
	size_t n = 0;
	char p[4];
	while (n < want) {
		size_t k = fbt_piece(s, p);
		if (n + k > sz - 1)
			break;
		memcpy(f + n, p, k);
		n += k;
	}
}

/* A jobs list: mostly well formed ("1234,1235"), sometimes any bytes. */
static inline void fbt_jobs(uint64_t *s, char *f)
{
	memset(f, 0, FB_JOBS_MAX);
	unsigned r = fbt_below(s, 10);
	if (r < 5)
		return;
	if (r < 8) {
		size_t n = 0;
		for (unsigned k = 1 + fbt_below(s, 12); k; k--) {
			char id[24];
			int m = snprintf(id, sizeof(id), "%s%llu", n ? "," : "",
					 (unsigned long long)(fbt_rng(s) % 10000000));
			if (n + (size_t)m > FB_JOBS_MAX - 1)
				break;
			memcpy(f + n, id, (size_t)m);
			n += (size_t)m;
		}
		return;
	}
	fbt_field(s, f, FB_JOBS_MAX);
}

static inline uint64_t fbt_timestamp(uint64_t *s)
{
	static const uint64_t edges[] = {
		0, 999, 951868799999999999ull /* 2000-02-29T23:59:59.999999999 */,
		951868800000000000ull /* 2000-03-01 */, 4107542400000000000ull /* 2100-03-01 */,
		1795000000123456789ull, UINT64_MAX, 946684799999999000ull /* 1999-12-31T23:59:59.999999 */,
	};
	switch (fbt_below(s, 4)) {
	case 0:
		return edges[fbt_below(s, sizeof(edges) / sizeof(edges[0]))] + fbt_below(s, 2) * 1000;
	case 1:
		return fbt_rng(s);
	default: /* 2020..2040, with microseconds and the odd same second */
		return 1577836800000000000ull + fbt_rng(s) % 631152000000000000ull;
	}
}

/* The subject, state and counters at random. */
static inline void fbt_random_event(struct fb_event *ev, uint64_t *s)
{
	memset(ev, 0, sizeof(*ev));
	fbt_field(s, ev->agent_id, sizeof(ev->agent_id));
	ev->seq = fbt_number(s);
	ev->ts_ns = fbt_timestamp(s);
	ev->kind = (uint8_t)fbt_below(s, FBT_CORPUS_KIND_MAX + 1);
	ev->severity = (uint8_t)(fbt_below(s, 10) ? fbt_below(s, 3) : fbt_rng(s));
	ev->link_class = (uint8_t)(fbt_below(s, 10) ? fbt_below(s, FB_LINK__END) : fbt_rng(s));
	ev->tech = (uint8_t)(fbt_below(s, 10) ? fbt_below(s, FB_TECH__END) : fbt_rng(s));
	ev->port_state = (uint8_t)fbt_below(s, 9);
	ev->phys_state = (uint8_t)fbt_below(s, 9);
	struct fb_subject *j = &ev->subj;
	fbt_field(s, j->fabric, sizeof(j->fabric));
	fbt_field(s, j->switch_name, sizeof(j->switch_name));
	fbt_field(s, j->node, sizeof(j->node));
	fbt_field(s, j->device, sizeof(j->device));
	fbt_field(s, j->addr, sizeof(j->addr));
	fbt_field(s, j->peer_name, sizeof(j->peer_name));
	j->switch_guid = fbt_below(s, 2) ? fbt_rng(s) : 0;
	j->port_guid = fbt_below(s, 2) ? fbt_rng(s) : 0;
	j->peer_guid = fbt_below(s, 3) ? 0 : fbt_rng(s);
	j->port = (uint16_t)(fbt_below(s, 3) ? fbt_number(s) : 0);
	j->lid = (uint16_t)(fbt_below(s, 2) ? fbt_number(s) : 0);
	j->peer_port = (uint16_t)(fbt_below(s, 3) ? 0 : fbt_number(s));
	j->ifindex = (uint32_t)(fbt_below(s, 2) ? fbt_number(s) : 0);
	ev->n_counters = (uint8_t)(fbt_below(s, 20) ? fbt_below(s, FB_COUNTERS_MAX + 1) : fbt_rng(s));
	for (unsigned i = 0; i < FB_COUNTERS_MAX; i++) {
		unsigned r = fbt_below(s, 20);
		ev->counters[i].id = (uint16_t)(r ? 1 + fbt_below(s, FB_CTR__END + 2) : fbt_rng(s));
		ev->counters[i].value = fbt_below(s, 4) ? fbt_number(s) : fbt_below(s, 8);
	}
	fbt_field(s, ev->text, sizeof(ev->text));
	fbt_jobs(s, ev->jobs);
}

/* The hand-picked events before the random ones (i < 16). */
static inline void fbt_crafted_event(struct fb_event *ev, unsigned i)
{
	memset(ev, 0, sizeof(*ev));
	strcpy(ev->agent_id, "bench1");
	ev->seq = 1 + i;
	ev->ts_ns = 1795000000123456789ull + i * 1000ull;
	ev->tech = FB_TECH_IB;
	if (i == 0) { /* `fabricbus publish --generate` (cli_publish_input.c) */
		ev->kind = FB_KIND_TEST;
		strcpy(ev->subj.switch_name, "loadgen");
		strcpy(ev->text, "generated by fabricbus publish");
		return;
	}
	/* a host port down with every common field, jobs and counters */
	ev->kind = FB_KIND_LINK_DOWN;
	ev->severity = FB_SEV_CRITICAL;
	ev->link_class = FB_LINK_HOST;
	strcpy(ev->subj.switch_name, "leaf-01");
	strcpy(ev->subj.node, "node0001");
	strcpy(ev->subj.device, "mlx5_0");
	ev->subj.port = 2;
	ev->subj.switch_guid = 0xe41d2d0300a1b2c3ull;
	ev->subj.port_guid = 0x0002c90300001234ull;
	ev->subj.lid = 17;
	ev->port_state = 1;
	ev->phys_state = 3;
	fb_event_add_counter(ev, FB_CTR_SYMBOL_ERROR, 42);
	fb_event_add_counter(ev, FB_CTR_LINK_ERROR_RECOVERY, 7);
	strcpy(ev->jobs, "1234,1235");
	switch (i) {
	case 2: /* every name at its maximum length, every byte needing \u00XX */
		memset(ev->agent_id, 0x1f, sizeof(ev->agent_id) - 1);
		memset(ev->subj.switch_name, '"', sizeof(ev->subj.switch_name) - 1);
		memset(ev->subj.node, '\\', sizeof(ev->subj.node) - 1);
		memset(ev->subj.device, 0x01, sizeof(ev->subj.device) - 1);
		memset(ev->subj.peer_name, '\n', sizeof(ev->subj.peer_name) - 1);
		memset(ev->text, 0x7f, sizeof(ev->text) - 1);
		memset(ev->subj.fabric, '%', sizeof(ev->subj.fabric) - 1);
		break;
	case 3: /* maximum length, nothing to escape */
		memset(ev->agent_id, 'a', sizeof(ev->agent_id) - 1);
		memset(ev->subj.switch_name, 'b', sizeof(ev->subj.switch_name) - 1);
		memset(ev->subj.node, 'c', sizeof(ev->subj.node) - 1);
		memset(ev->subj.device, 'd', sizeof(ev->subj.device) - 1);
		memset(ev->subj.addr, 'e', sizeof(ev->subj.addr) - 1);
		memset(ev->subj.peer_name, 'f', sizeof(ev->subj.peer_name) - 1);
		memset(ev->text, 'g', sizeof(ev->text) - 1);
		memset(ev->jobs, '9', sizeof(ev->jobs) - 1);
		break;
	case 4: /* no NUL anywhere: "?" */
		memset(ev->agent_id, 'a', sizeof(ev->agent_id));
		memset(ev->subj.switch_name, 'b', sizeof(ev->subj.switch_name));
		memset(ev->subj.fabric, 'c', sizeof(ev->subj.fabric));
		memset(ev->text, 'g', sizeof(ev->text));
		memset(ev->jobs, '9', sizeof(ev->jobs));
		break;
	case 5: /* u64 above INT64_MAX wherever one can be */
		ev->seq = UINT64_MAX;
		ev->ts_ns = UINT64_MAX;
		ev->n_counters = 0;
		fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, (uint64_t)INT64_MAX + 1);
		fb_event_add_counter(ev, FB_CTR_XMIT_DATA, UINT64_MAX);
		fb_event_add_counter(ev, 999, (uint64_t)INT64_MAX);
		break;
	case 6: /* a root cause with its lists, group and cut flag */
		ev->kind = FB_KIND_SWITCH_DEGRADED;
		strcpy(ev->agent_id, "fabricbusd");
		strcpy(ev->text, "node[001-016,020]");
		strcpy(ev->subj.peer_name, "node[017-019]");
		strcpy(ev->subj.device, "100-140,150");
		fb_event_add_counter(ev, FB_CTR_EVENT_GROUP_ID, 12345);
		fb_event_add_counter(ev, FB_CTR_LISTS_CUT, 1);
		break;
	case 7: case 8: case 9: case 10: case 11: /* quiet: none, each reason, unknown */
		fb_event_add_counter(ev, FB_CTR_QUIET, i == 11 ? 300 : i - 7);
		fb_event_add_counter(ev, FB_CTR_RESYNC, 1);
		break;
	case 12: /* rate-limit summary, limit lifted, no text: the subject's label */
		ev->kind = FB_KIND_EVENTS_SUPPRESSED;
		ev->jobs[0] = '\0';
		fb_event_add_counter(ev, FB_CTR_SUPPRESSED, 1000);
		fb_event_add_counter(ev, FB_CTR_INTERVAL_MS, 10999);
		fb_event_add_counter(ev, FB_CTR_FIRST_SUPPRESSED_ID, 99);
		fb_event_add_counter(ev, FB_CTR_LAST_SUPPRESSED_ID, 1099);
		fb_event_add_counter(ev, FB_CTR_LIMIT_LIFTED, 1);
		break;
	case 13: /* Ethernet: ifIndex port, address switch, node-side interface */
		ev->tech = FB_TECH_ETH;
		ev->link_class = FB_LINK_NODE;
		ev->subj.switch_name[0] = '\0';
		ev->subj.switch_guid = 0;
		strcpy(ev->subj.addr, "10.0.0.2");
		strcpy(ev->subj.device, "eth 0/1?");
		ev->subj.ifindex = UINT32_MAX;
		break;
	case 14: /* a flap: count and window in minutes, rounded up */
		ev->kind = FB_KIND_FLAP;
		fb_event_add_counter(ev, FB_CTR_FLAP_COUNT, 6);
		fb_event_add_counter(ev, FB_CTR_FLAP_WINDOW_S, 301);
		break;
	case 15: /* the same-second neighbour of 14: one microsecond later */
		ev->ts_ns = 1795000000123456789ull + 14 * 1000ull + 1000;
		ev->kind = FB_KIND_COUNTER_THRESHOLD;
		fb_event_add_counter(ev, FB_CTR_THRESHOLD, 10);
		break;
	}
}

/* Every kind x link class x technology x severity (out-of-range ones too)
 * on the full port event. */
static inline void fbt_combo_event(struct fb_event *ev, unsigned c)
{
	fbt_crafted_event(ev, 1);
	ev->severity = (uint8_t)(c % 4);
	ev->tech = (uint8_t)(c / 4 % 4);
	ev->link_class = (uint8_t)(c / 16 % 6);
	ev->kind = (uint8_t)(c / 96);
	ev->subj.ifindex = 7;
	strcpy(ev->subj.addr, "10.0.0.2");
	strcpy(ev->subj.peer_name, "spine-02");
	ev->subj.peer_guid = 0x0008f10400411a08ull;
	ev->subj.peer_port = 31;
}

/* Event i of the corpus; returns the EventId to render it with and sets
 * *fabric to the broker's default fabric for it. */
static inline uint64_t fbt_corpus_event(struct fb_event *ev, unsigned i, const char **fabric)
{
	static const char *const fabrics[] = { NULL, "", "IB", "eth fab/1" };
	uint64_t s = 0x5eed0000ull + i;
	if (i < 16)
		fbt_crafted_event(ev, i);
	else if (i < FBT_CORPUS_CRAFTED)
		fbt_combo_event(ev, i - 16);
	else
		fbt_random_event(ev, &s);
	*fabric = i < FBT_CORPUS_CRAFTED ? "IB" : fabrics[fbt_below(&s, 4)];
	return i < FBT_CORPUS_CRAFTED ? 1000000 + i : fbt_number(&s);
}

#endif
