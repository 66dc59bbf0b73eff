#include "agent_table.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* An expired id: the hash of its id (never 0) and its stored seq. */
struct retired {
	uint64_t key;
	uint64_t seq;
};

struct fb_agent_table {
	struct fb_agent **slots;
	size_t cap; /* power of two */
	size_t n;
	struct retired *old; /* expired ids, open addressing */
	size_t old_cap, old_n;
};

static uint64_t hash_id(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

struct fb_agent_table *fb_agent_table_new(void)
{
	struct fb_agent_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->cap = 64;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void fb_agent_table_free(struct fb_agent_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	free(t->old);
	free(t);
}

static size_t probe(const struct fb_agent_table *t, const char *id)
{
	size_t mask = t->cap - 1, i = (size_t)hash_id(id) & mask;
	while (t->slots[i] && strcmp(t->slots[i]->id, id) != 0)
		i = (i + 1) & mask;
	return i;
}

struct fb_agent *fb_agent_find(struct fb_agent_table *t, const char *id)
{
	return t->slots[probe(t, id)];
}

static int grow(struct fb_agent_table *t)
{
	struct fb_agent **bigger = calloc(t->cap * 2, sizeof(*t->slots));
	if (!bigger)
		return -1;
	struct fb_agent **old = t->slots;
	size_t old_cap = t->cap;
	t->slots = bigger;
	t->cap *= 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			t->slots[probe(t, old[i]->id)] = old[i];
	free(old);
	return 0;
}

static uint64_t retired_key(const char *id)
{
	uint64_t k = hash_id(id);
	return k ? k : 1;
}

static size_t retired_probe(const struct fb_agent_table *t, uint64_t key)
{
	size_t mask = t->old_cap - 1, i = (size_t)key & mask;
	while (t->old[i].key && t->old[i].key != key)
		i = (i + 1) & mask;
	return i;
}

static int retired_grow(struct fb_agent_table *t)
{
	size_t cap = t->old_cap ? t->old_cap * 2 : 64;
	struct retired *bigger = calloc(cap, sizeof(*bigger));
	if (!bigger)
		return -1;
	struct retired *old = t->old;
	size_t old_cap = t->old_cap;
	t->old = bigger;
	t->old_cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			t->old[retired_probe(t, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* Linear probing: deleting slot i moves later members of its run back, so
 * that every probe still finds them (no tombstones). */
static void retired_delete(struct fb_agent_table *t, size_t i)
{
	size_t mask = t->old_cap - 1;
	t->old[i].key = 0;
	t->old_n--;
	for (size_t j = (i + 1) & mask; t->old[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)t->old[j].key & mask;
		/* j's entry may move to i if i lies cyclically in [home, j). */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->old[i] = t->old[j];
			t->old[j].key = 0;
			i = j;
		}
	}
}

static void table_delete(struct fb_agent_table *t, size_t i)
{
	size_t mask = t->cap - 1;
	free(t->slots[i]);
	t->slots[i] = NULL;
	t->n--;
	for (size_t j = (i + 1) & mask; t->slots[j]; j = (j + 1) & mask) {
		size_t home = (size_t)hash_id(t->slots[j]->id) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->slots[i] = t->slots[j];
			t->slots[j] = NULL;
			i = j;
		}
	}
}

struct fb_agent *fb_agent_get(struct fb_agent_table *t, const char *id)
{
	size_t i = probe(t, id);
	if (t->slots[i])
		return t->slots[i];
	if ((t->n + 1) * 2 > t->cap) {
		if (grow(t))
			return NULL;
		i = probe(t, id);
	}
	struct fb_agent *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	snprintf(a->id, sizeof(a->id), "%s", id);
	if (t->old_n) {
		size_t r = retired_probe(t, retired_key(id));
		if (t->old[r].key) {
			a->stored_seq = a->durable_seq = t->old[r].seq;
			retired_delete(t, r);
		}
	}
	t->slots[i] = a;
	t->n++;
	return a;
}

size_t fb_agent_count(const struct fb_agent_table *t) { return t->n; }
size_t fb_agent_expired_count(const struct fb_agent_table *t) { return t->old_n; }

size_t fb_agent_expire(struct fb_agent_table *t, uint64_t now_ns, uint64_t idle_ns, uint64_t since_ns)
{
	size_t done = 0;
	for (size_t i = 0; i < t->cap;) {
		struct fb_agent *a = t->slots[i];
		uint64_t seen = a && a->last_seen_ns ? a->last_seen_ns : since_ns;
		if (!a || a->conn || a->dirty || a->durable_seq != a->stored_seq || now_ns < seen ||
		    now_ns - seen < idle_ns) {
			i++;
			continue;
		}
		if ((t->old_n + 1) * 2 > t->old_cap && retired_grow(t))
			break; /* out of memory: keep the entries, try at the next tick */
		uint64_t key = retired_key(a->id);
		size_t r = retired_probe(t, key);
		if (!t->old[r].key)
			t->old_n++;
		t->old[r].key = key;
		t->old[r].seq = a->stored_seq;
		/* Deleting may move a later entry into slot i: look at i again. */
		table_delete(t, i);
		done++;
	}
	return done;
}

void fb_agent_foreach(struct fb_agent_table *t, void (*fn)(void *arg, struct fb_agent *a), void *arg)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			fn(arg, t->slots[i]);
}
