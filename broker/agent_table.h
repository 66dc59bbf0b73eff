/* agent_table.h - what the broker knows about each agent, by agent id.
 *
 * Owned by the libevent loop. Entries are rebuilt from the journal at start.
 * An entry with no connection and nothing owed that stays silent for
 * AgentIdleExpiry is expired: the entry is freed and only its stored seq is
 * kept, under a 64-bit hash of the id (16 bytes an id instead of the entry,
 * its /status line and its share of every scan), so that a HELLO for it
 * resumes the sequence. Open addressing, grows at 50% load.
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
	uint64_t last_ts_ns;  /* the newest accepted event's own time (agent's CLOCK_REALTIME) */
	int64_t lag_ns;       /* its age when its frame arrived (the page's agent lag) */
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
/* Expire entries without a connection, not owed an ack (dirty == 0,
 * durable_seq == stored_seq) and not seen for idle_ns (an entry never seen
 * counts from since_ns, the broker's start). Returns how many. */
size_t fb_agent_expire(struct fb_agent_table *t, uint64_t now_ns, uint64_t idle_ns, uint64_t since_ns);
/* Ids expired and not back since (their seqs are kept). */
size_t fb_agent_expired_count(const struct fb_agent_table *t);
/* Visit every entry (order unspecified). */
void fb_agent_foreach(struct fb_agent_table *t, void (*fn)(void *arg, struct fb_agent *a), void *arg);

#endif
