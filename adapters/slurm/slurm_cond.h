/* slurm_cond.h - what a fabric event means for a node's drain conditions.
 *
 * fbs_classify() turns one event from the broker into one observation: a
 * condition starts (link_down, flap, counter_threshold, congestion,
 * switch_unreachable, link_degraded, and the broker's root cause
 * switch_failed/switch_degraded), clears (its opposite; switch_recovered
 * for a root cause), or the event
 * concerns no drain at all. It does not know which nodes are affected: that
 * is slurm_route's job. Pure: no clock, no I/O, no libslurm.
 *
 * A condition is identified by its type and a location key:
 *   sw:<switch GUID|name|addr>/<port>   a switch port (host, node-unknown links)
 *   pg:<port GUID> or nic:<dev>/<port>   a node's own adapter port
 *   swu:<switch GUID|name|addr>          a whole switch
 *   rc:<switch GUID|name>                a root cause's incident on a switch
 * A counter condition's key adds "#<counter name>", so two error counters
 * over threshold on one port are two conditions, each cleared by its own
 * counter_cleared.
 */
#ifndef FBS_COND_H
#define FBS_COND_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

/* Condition types; the names are DrainOn's spelling and the state file's. */
enum fbs_ctype {
	FBS_C_LINK_DOWN = 0,
	FBS_C_FLAP,
	FBS_C_COUNTER,      /* "counter_threshold" */
	FBS_C_CONGESTION,
	FBS_C_SWITCH,       /* "switch_unreachable" */
	FBS_C_DEGRADED,     /* "link_degraded" */
	FBS_C_ROOT_CAUSE,   /* "root_cause": the broker's SwitchFailed/SwitchDegraded
			     * drains the hosts it left without a path */
	FBS_C__N
};
#define FBS_C_BIT(t) (1u << (t))
#define FBS_DRAIN_ON_DEFAULT                                                        \
	(FBS_C_BIT(FBS_C_LINK_DOWN) | FBS_C_BIT(FBS_C_FLAP) | FBS_C_BIT(FBS_C_COUNTER) | \
	 FBS_C_BIT(FBS_C_SWITCH) | FBS_C_BIT(FBS_C_ROOT_CAUSE))

const char *fbs_ctype_name(unsigned t); /* NULL past the end */
int fbs_ctype_parse(const char *name);  /* -1 if unknown */

/* Parse "link_down,flap" into a bit mask ("" is 0: drain on nothing).
 * 0, or FB_ECONFIG with the offending name in why. */
int fbs_drain_on_parse(const char *s, unsigned *mask, char *why, size_t whysz);
/* The mask back as a comma list. */
void fbs_drain_on_format(unsigned mask, char *out, size_t outsz);

enum fbs_op {
	FBS_OP_NONE = 0,
	FBS_OP_START,     /* condition (type, key) starts (or goes on) */
	FBS_OP_CLEAR,     /* condition (type, key) ends */
	FBS_OP_LINK_DOWN, /* link at key went down: starts link_down if enabled, and
	                   * tells a flap condition at key the link is down again */
	FBS_OP_LINK_UP,   /* link at key is up: clears link_down and link_degraded, and
	                   * a flap condition once its window is over */
};

#define FBS_KEY_MAX 96
#define FBS_CAUSE_MAX 128

struct fbs_obs {
	uint8_t op;                /* enum fbs_op */
	uint8_t type;              /* enum fbs_ctype (START, CLEAR, LINK_DOWN: link_down) */
	uint8_t drains;            /* the type is in DrainOn (LINK_DOWN only starts then) */
	uint8_t switch_wide;       /* affects every host of a switch (route by the map) */
	uint8_t root_cause;        /* the hosts are the event's own lists (NoPath) */
	uint8_t with_degraded;     /* root_cause: its Degraded hosts too (DrainDegraded) */
	char key[FBS_KEY_MAX];
	char cause[FBS_CAUSE_MAX]; /* "link down leaf1/3", for the Slurm reason */
	uint64_t event_id;         /* the broker EventId */
	uint64_t hold_ms;          /* how long it must last before it drains */
	uint64_t window_ms;        /* flap: the agent's flap window */
	uint64_t switch_guid;      /* switch_wide: which switch */
	char switch_name[FB_NAME_MAX];
};

struct fbs_classify_cfg {
	unsigned drain_on;         /* FBS_C_BIT mask */
	uint64_t hold_ms;          /* HoldDown */
	uint64_t congestion_ppm;   /* CongestionPpm */
	uint64_t congestion_for_ms;/* CongestionFor */
	int drain_degraded;        /* DrainDegraded: a root cause drains its degraded hosts too */
};

/* Classify ev (EventId event_id) into o. Returns o->op; FBS_OP_NONE with a
 * short reason in *why (for debug logs) when the event concerns no drain:
 * an ignored kind, an ISL or uplink, a type not in DrainOn. */
int fbs_classify(const struct fb_event *ev, uint64_t event_id, const struct fbs_classify_cfg *c,
		 struct fbs_obs *o, const char **why);

/* Location key and cause wording of a switch port, as classify makes them:
 * for conditions seeded from the broker's /fabric/map. name may be empty. */
void fbs_port_key(uint64_t switch_guid, const char *switch_name, unsigned port, char *key,
		  size_t keysz);
void fbs_port_label(uint64_t switch_guid, const char *switch_name, unsigned port, char *out,
		    size_t outsz);
void fbs_switch_key(uint64_t switch_guid, const char *switch_name, char *key, size_t keysz);

/* snprintf that may cut: for names and causes meant for people, where a
 * cut is better than a failure. */
void fbs_fmt(char *out, size_t outsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
