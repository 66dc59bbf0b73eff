#include "agent_table.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

struct fb_agent_table {
	struct fb_agent **slots;
	size_t cap; /* power of two */
	size_t n;
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
	struct fb_agent_table bigger = { calloc(t->cap * 2, sizeof(*t->slots)), t->cap * 2, t->n };
	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			bigger.slots[probe(&bigger, t->slots[i]->id)] = t->slots[i];
	free(t->slots);
	*t = bigger;
	return 0;
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
	t->slots[i] = a;
	t->n++;
	return a;
}

size_t fb_agent_count(const struct fb_agent_table *t) { return t->n; }

void fb_agent_foreach(struct fb_agent_table *t, void (*fn)(void *arg, struct fb_agent *a), void *arg)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->slots[i])
			fn(arg, t->slots[i]);
}
