/* agent_table.h - what the broker knows about each agent, by agent id.
 *
 * Owned by the libevent loop. Entries live for the life of the process
 * (rebuilt from the journal at start), so a reconnecting agent finds its
 * sequence state again. Open addressing, grows at 50% load.
 */
#ifndef FB_AGENT_TABLE_H
#define FB_AGENT_TABLE_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

struct fb_conn;

struct fb_agent {
	char id[FB_AGENT_ID_MAX];
	uint64_t stored_seq;  /* highest seq appended to the journal */
	uint64_t durable_seq; /* highest seq committed (acked) */
	uint64_t events;      /* accepted since start (including recovered) */
	uint64_t duplicates;  /* dropped as already stored */
	uint64_t gaps;        /* sequence numbers the agent skipped */
	uint64_t last_seen_ns;
	struct fb_conn *conn; /* live connection, or NULL */
	int dirty;            /* on the commit's ack list */
};

struct fb_agent_table;

struct fb_agent_table *fb_agent_table_new(void);
void fb_agent_table_free(struct fb_agent_table *t);
/* The entry for id, or NULL. */
struct fb_agent *fb_agent_find(struct fb_agent_table *t, const char *id);
/* The entry for id, created (zeroed) if missing. NULL on ENOMEM. */
struct fb_agent *fb_agent_get(struct fb_agent_table *t, const char *id);
size_t fb_agent_count(const struct fb_agent_table *t);
/* Visit every entry (order unspecified). */
void fb_agent_foreach(struct fb_agent_table *t, void (*fn)(void *arg, struct fb_agent *a), void *arg);

#endif
