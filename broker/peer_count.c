/* peer_count.c - see peer_count.h. A fixed array of chained buckets: the
 * number of distinct addresses is bounded by the connections open. */
#include "peer_count.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 4096

struct node {
	struct node *next;
	uint64_t n;
	char addr[48];
};

struct fb_peer_count {
	struct node *b[BUCKETS];
};

static unsigned bucket(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	while (*s) {
		h ^= (uint8_t)*s++;
		h *= 16777619u;
	}
	return h % BUCKETS;
}

struct fb_peer_count *fb_peer_count_new(void) { return calloc(1, sizeof(struct fb_peer_count)); }

void fb_peer_count_free(struct fb_peer_count *pc)
{
	if (!pc)
		return;
	for (unsigned i = 0; i < BUCKETS; i++)
		while (pc->b[i]) {
			struct node *n = pc->b[i];
			pc->b[i] = n->next;
			free(n);
		}
	free(pc);
}

uint64_t fb_peer_count_add(struct fb_peer_count *pc, const char *addr)
{
	unsigned i = bucket(addr);
	for (struct node *n = pc->b[i]; n; n = n->next)
		if (strcmp(n->addr, addr) == 0)
			return ++n->n;
	struct node *n = calloc(1, sizeof(*n));
	if (!n)
		return 0;
	snprintf(n->addr, sizeof(n->addr), "%s", addr);
	n->n = 1;
	n->next = pc->b[i];
	pc->b[i] = n;
	return 1;
}

void fb_peer_count_del(struct fb_peer_count *pc, const char *addr)
{
	for (struct node **pp = &pc->b[bucket(addr)]; *pp; pp = &(*pp)->next) {
		struct node *n = *pp;
		if (strcmp(n->addr, addr) != 0)
			continue;
		if (--n->n == 0) {
			*pp = n->next;
			free(n);
		}
		return;
	}
}

void fb_peer_addr(const char *peer, char *out, size_t outsz)
{
	const char *colon = strrchr(peer, ':');
	size_t len = colon ? (size_t)(colon - peer) : strlen(peer);
	snprintf(out, outsz, "%.*s", (int)len, peer);
}
