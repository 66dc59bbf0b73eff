/* slurm_policy.h - when to drain and undrain which node: the adapter's
 * decisions, as a pure module with an explicit clock.
 *
 * Per node the policy keeps the active conditions (slurm_cond.h) and
 * whether the adapter holds the node drained. It never calls Slurm: the
 * caller feeds observations in (fbs_policy_observe), asks for decisions
 * (fbs_policy_decide), hands them to the actuator, and reports outcomes
 * back (fbs_policy_drained, ..._released, ..._undrained). Everything runs
 * on the caller's thread; times are the caller's clock in ms (the adapter
 * passes CLOCK_REALTIME, so that times in the state file survive a restart).
 *
 * Rules:
 *  - a condition drains its node once it has lasted its hold time (HoldDown;
 *    CongestionFor for congestion; 0 = at once); a clear before that
 *    cancels it;
 *  - a node held drained is undrained once it has had no condition for
 *    StableFor; a new condition resets that window;
 *  - nodes drained by the adapter plus drains in flight never exceed the
 *    cap, min(MaxDrainNodes, ceil(MaxDrainPercent% of the cap base));
 *    past it the policy drains no more and reports ONE cap event per
 *    episode (an episode ends when the count falls below the cap);
 *  - only nodes slurmctld knows are drained, or counted against the cap, or
 *    named by a cap event (fbs_policy_set_slurm_nodes): the hosts behind a
 *    failed switch include storage and login nodes, which must not use up
 *    the cap nor make it refuse real nodes;
 *  - a node Slurm refused to us (a foreign reason, not a Slurm node) or
 *    that an admin took back is not drained again until a NEW condition
 *    starts on it.
 */
#ifndef FBS_POLICY_H
#define FBS_POLICY_H

#include "slurm_cond.h"

#include <stddef.h>
#include <stdint.h>

#define FBS_REASON_MAX 256

struct fbs_policy_cfg {
	uint64_t stable_ms;            /* StableFor */
	uint64_t max_nodes;            /* MaxDrainNodes, 0 = no node cap */
	uint64_t max_percent;          /* MaxDrainPercent, 0 = no percentage cap */
	char reason_prefix[64];        /* ReasonPrefix, e.g. "fabric:" */
};

struct fbs_cond {
	uint8_t type;                  /* enum fbs_ctype */
	uint8_t up_seen;               /* flap: the link came up within the window */
	char key[FBS_KEY_MAX];
	char cause[FBS_CAUSE_MAX];
	uint64_t event_id;             /* the EventId that started it */
	uint64_t since_ms;
	uint64_t hold_ms;
	uint64_t until_ms;             /* flap: end of the flap window */
};

enum fbs_hold {
	FBS_H_NONE = 0,                /* not drained by us */
	FBS_H_DRAINING,                /* drain decided, in flight */
	FBS_H_DRAINED,                 /* drained by us, confirmed by Slurm */
	FBS_H_UNDRAINING,              /* undrain decided, in flight */
};

struct fbs_node {
	char name[FB_NAME_MAX];
	uint8_t hold;                  /* enum fbs_hold */
	uint8_t dry_run;               /* DRAINED in a dry run only (Slurm untouched) */
	uint8_t suppressed;            /* no drain until a new condition starts */
	uint8_t refused;               /* refused by the cap (logged once) */
	uint8_t not_slurm;             /* due, but slurmctld knows no such node (logged once) */
	char reason[FBS_REASON_MAX];   /* the Slurm reason we set or will set */
	char cause[FBS_CAUSE_MAX];     /* the condition that drained it */
	uint64_t cause_event_id;
	uint64_t drained_at_s;         /* wall clock, when Slurm confirmed */
	uint64_t clear_since_ms;       /* held and no condition since then */
	size_t n_conds, cap_conds;
	struct fbs_cond *conds;
};

/* One node of a batch. */
struct fbs_target {
	char node[FB_NAME_MAX];
	char cause[FBS_CAUSE_MAX];
	uint64_t event_id;
};

enum fbs_action { FBS_A_DRAIN = 1, FBS_A_UNDRAIN = 2 };

/* One Slurm call's worth: drains share one reason; undrains are all in one. */
struct fbs_batch {
	uint64_t id;                   /* given by the caller (the adapter numbers them) */
	uint8_t action;                /* enum fbs_action */
	char reason[FBS_REASON_MAX];   /* drain: the reason for every node of it */
	uint64_t event_id;             /* drain: the cause EventId in that reason */
	size_t n;
	struct fbs_target *t;          /* owned: fbs_batch_free */
};
void fbs_batch_free(struct fbs_batch *b);

struct fbs_decision {
	size_t n_batches;
	struct fbs_batch *batches;     /* drains first, then one undrain batch */
	int cap_event;                 /* 1: publish the cap event (once per episode) */
	unsigned cap_count, cap_limit; /* held + in flight, and the limit */
	size_t n_refused;              /* nodes the cap kept from draining now */
	char (*refused)[FB_NAME_MAX];
	size_t n_newly_refused;        /* of those, refused for the first time (log them) */
	size_t n_not_slurm;            /* due, not drained: slurmctld knows no such node; */
	char (*not_slurm)[FB_NAME_MAX];/* only those found so the first time (log them) */
};
void fbs_decision_free(struct fbs_decision *d);

struct fbs_policy;

int fbs_policy_new(const struct fbs_policy_cfg *cfg, struct fbs_policy **out);
void fbs_policy_free(struct fbs_policy *p);

/* The cap base: nodes in CapPartition (or in the cluster). Until set the
 * percentage cap allows nothing. */
void fbs_policy_set_cap_base(struct fbs_policy *p, unsigned nodes);
/* The nodes slurmctld knows (names[0..n), any order; copied). Until the
 * first call every node counts as known. 0 or -ENOMEM (the old set stays). */
int fbs_policy_set_slurm_nodes(struct fbs_policy *p, const char *const *names, size_t n);
/* The limit now: UINT32_MAX when no cap is set. */
unsigned fbs_policy_limit(const struct fbs_policy *p);
/* Nodes drained by us plus in flight. */
unsigned fbs_policy_held(const struct fbs_policy *p);

/* Apply an observation to one node. Returns 1 if anything changed (the
 * state needs saving), 0 if not, -ENOMEM. */
int fbs_policy_observe(struct fbs_policy *p, const char *node, const struct fbs_obs *o,
		       uint64_t now_ms);
/* Apply a CLEAR or LINK_UP to every node that has the condition (a
 * switch_reachable whose hosts the map does not know). Returns 1 if any changed. */
int fbs_policy_observe_all(struct fbs_policy *p, const struct fbs_obs *o, uint64_t now_ms);

/* Timers: flap windows that ended, then the decisions due at now. Drain
 * decisions move their nodes to DRAINING, undrains to UNDRAINING. Batches
 * get id 0: the caller numbers them. 0 or -ENOMEM. */
int fbs_policy_decide(struct fbs_policy *p, uint64_t now_ms, struct fbs_decision *d);
/* When fbs_policy_decide next has something to do (UINT64_MAX: nothing). */
uint64_t fbs_policy_next_due(const struct fbs_policy *p, uint64_t now_ms);

/* Outcomes. Slurm holds node drained with our reason (a drain done, or
 * adopted at start). Creates the node if needed. */
int fbs_policy_drained(struct fbs_policy *p, const char *node, const char *reason,
		       uint64_t event_id, uint64_t wall_s, int dry_run, uint64_t now_ms);
/* We do not (or no longer) hold node: Slurm refused the drain (foreign
 * reason, unknown node), or an admin resumed it or replaced the reason.
 * Not drained again until a new condition starts. */
void fbs_policy_released(struct fbs_policy *p, const char *node, uint64_t now_ms);
/* The undrain went through: forget the node's drain. */
void fbs_policy_undrained(struct fbs_policy *p, const char *node, uint64_t now_ms);
/* A decision that never reached Slurm is taken back: a drain in flight is
 * decided again later, an undrain in flight leaves the node drained. */
void fbs_policy_undo(struct fbs_policy *p, const char *node);

/* Read access, for logs, the state file and tests. */
const struct fbs_node *fbs_policy_node(const struct fbs_policy *p, const char *node);
size_t fbs_policy_count(const struct fbs_policy *p);
const struct fbs_node *fbs_policy_at(const struct fbs_policy *p, size_t i); /* by name */
int fbs_policy_cap_episode(const struct fbs_policy *p);

/* For the state loader: a node as it was saved (conditions copied). */
int fbs_policy_restore(struct fbs_policy *p, const struct fbs_node *n);
void fbs_policy_set_cap_episode(struct fbs_policy *p, int on);

/* "<prefix> <cause> (EventId <id>)": the Slurm reason for a condition. */
void fbs_policy_reason(const struct fbs_policy *p, const char *cause, uint64_t event_id,
		       char *out, size_t outsz);
/* 1 if a Slurm reason is ours (starts with ReasonPrefix). */
int fbs_policy_reason_is_ours(const struct fbs_policy *p, const char *reason);
/* The same rule for a holder of the prefix alone (the actuator thread, which
 * has no policy): an empty prefix claims nothing. */
int fbs_reason_is_ours(const char *prefix, const char *reason);

#endif
