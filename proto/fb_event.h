/* fb_event.h - the one event model shared by agents, broker and adapters.
 *
 * An event is a plain value: fixed-size fields, no pointers, so it can be
 * copied into batches, queued across threads and decoded into without any
 * allocation. Strings are NUL-terminated, valid UTF-8 (the decoder enforces it).
 *
 * The wire and journal encodings are in fb_wire.h; the JSON form used by the
 * CLI is in fb_event_json.h; the Redfish form is in fb_redfish.h.
 */
#ifndef FB_EVENT_H
#define FB_EVENT_H

#include <stddef.h>
#include <stdint.h>

#define FB_AGENT_ID_MAX 64 /* including the NUL */
#define FB_FABRIC_MAX 32
#define FB_NAME_MAX 64
#define FB_ADDR_MAX 48
#define FB_TEXT_MAX 128
#define FB_COUNTERS_MAX 16
#define FB_JOBS_MAX 96 /* including the NUL: at most 95 bytes of "123,124" */

/* What happened. Values are on the wire: append, never renumber. */
enum fb_kind {
	FB_KIND_LINK_DOWN = 1,
	FB_KIND_LINK_UP = 2,
	FB_KIND_LINK_DEGRADED = 3,    /* up, but below expected speed/width */
	FB_KIND_PORT_STATE = 4,       /* other PortState/PhysState change */
	FB_KIND_COUNTER_THRESHOLD = 5,/* an error counter rate crossed its threshold */
	FB_KIND_COUNTER_CLEARED = 6,
	FB_KIND_CONGESTION = 7,       /* PortXmitWait fraction above threshold */
	FB_KIND_CONGESTION_CLEARED = 8,
	FB_KIND_FLAP = 9,
	FB_KIND_SWITCH_UNREACHABLE = 10,
	FB_KIND_SWITCH_REACHABLE = 11,
	FB_KIND_INVENTORY = 12,       /* node agent: this node owns this port */
	FB_KIND_TOPOLOGY = 13,        /* switch port <-> peer GUID/port */
	FB_KIND_TEST = 14,
	FB_KIND_ACTION = 15,          /* an adapter's own decision (drain, resume) */
	/* The broker's own (agent "fabricbusd", broker/storm.c): a root cause.
	 * subj names the switch; text holds the hosts left without a path and
	 * subj.peer_name the degraded ones (hostlists), subj.device the
	 * symptoms' EventIds (ranges); the counters say how many of each and
	 * event_group_id the incident (docs/topology.md, "Root cause"). */
	FB_KIND_SWITCH_FAILED = 16,   /* every cable of the switch down */
	FB_KIND_SWITCH_DEGRADED = 17, /* some of them: its hosts may have no path */
	FB_KIND_SWITCH_RECOVERED = 18,/* the incident's switch has every cable back */
	/* The broker's flap control (broker/fabric/flap.h) on a switch port
	 * whose flap was detected: */
	FB_KIND_FLAP_SUPPRESSED = 19, /* counter suppressed: transitions not reported one by one
				       * in the last interval_ms */
	FB_KIND_FLAP_STABLE = 20,     /* no transition for interval_ms; suppressed in all */
	/* 21: reserved for de-duplication (branch dedup). */
	/* The broker's rate limits (broker/ratelimit.c): counter suppressed
	 * events of one agent (subj empty, text "agent <id>") or one subject
	 * (subj names it) went over RateLimitAgent/RateLimitSubject within
	 * interval_ms and were made quiet (FB_QUIET_RATE_LIMITED), EventIds
	 * first_suppressed_id..last_suppressed_id; limit_lifted 1 on the last
	 * summary, when the limit no longer applies (docs/topology.md). */
	FB_KIND_EVENTS_SUPPRESSED = 22,
	FB_KIND__END
};

/* Values match Redfish MessageSeverity: OK, Warning, Critical. */
enum fb_severity { FB_SEV_OK = 0, FB_SEV_WARNING = 1, FB_SEV_CRITICAL = 2, FB_SEV__END };

/* Which side of which link: drives the choice of Redfish MessageId. */
enum fb_link_class {
	FB_LINK_UNKNOWN = 0,
	FB_LINK_HOST = 1,   /* switch port facing a host (Redfish "downstream") */
	FB_LINK_ISL = 2,    /* switch port facing another switch */
	FB_LINK_NODE = 3,   /* a node's own adapter port (NetworkDevice) */
	FB_LINK_UPLINK = 4, /* switch port facing the core/router (Redfish "upstream") */
	FB_LINK__END
};

enum fb_tech { FB_TECH_UNKNOWN = 0, FB_TECH_IB = 1, FB_TECH_ETH = 2, FB_TECH__END };

/* Counter identifiers. Append only. */
enum fb_counter_id {
	FB_CTR_SYMBOL_ERROR = 1,
	FB_CTR_LINK_ERROR_RECOVERY = 2,
	FB_CTR_LINK_DOWNED = 3,
	FB_CTR_RCV_ERRORS = 4,
	FB_CTR_RCV_REMOTE_PHYS_ERRORS = 5,
	FB_CTR_RCV_SWITCH_RELAY_ERRORS = 6,
	FB_CTR_XMIT_DISCARDS = 7,
	FB_CTR_XMIT_CONSTRAINT_ERRORS = 8,
	FB_CTR_RCV_CONSTRAINT_ERRORS = 9,
	FB_CTR_LOCAL_LINK_INTEGRITY_ERRORS = 10,
	FB_CTR_EXCESSIVE_BUFFER_OVERRUN = 11,
	FB_CTR_VL15_DROPPED = 12,
	FB_CTR_XMIT_WAIT = 13,
	FB_CTR_XMIT_DATA = 14,
	FB_CTR_RCV_DATA = 15,
	FB_CTR_XMIT_PKTS = 16,
	FB_CTR_RCV_PKTS = 17,
	FB_CTR_IF_IN_ERRORS = 18,
	FB_CTR_IF_OUT_ERRORS = 19,
	FB_CTR_FLAP_COUNT = 20,      /* transitions seen in the flap window */
	FB_CTR_FLAP_WINDOW_S = 21,
	FB_CTR_CONGESTION_PPM = 22,  /* XmitWait ticks as parts per million of the interval */
	FB_CTR_INTERVAL_MS = 23,     /* the interval a delta or rate covers */
	FB_CTR_THRESHOLD = 24,       /* the threshold that was crossed */
	FB_CTR_RATE_PER_S = 25,      /* a counter's rate, for threshold events */
	FB_CTR_LINK_SPEED_MBPS = 26,
	FB_CTR_LINK_WIDTH = 27,
	FB_CTR_CAUSE_EVENT_ID = 28,  /* broker EventId of the event that caused an adapter action */
	FB_CTR_NODE_COUNT = 29,      /* how many nodes an adapter action concerns */
	FB_CTR_NODE_LIMIT = 30,      /* the adapter's limit on that number */
	FB_CTR_IF_IN_DISCARDS = 31,  /* IF-MIB ifInDiscards */
	FB_CTR_IF_OUT_DISCARDS = 32, /* IF-MIB ifOutDiscards */
	FB_CTR_RESYNC = 33,          /* 1: found at an agent's resync, not seen live
				      * (proto/PROTOCOL.md; Redfish Oem "Resync": true) */
	FB_CTR_EVENT_GROUP_ID = 34,  /* the incident a root cause belongs to (Redfish EventGroupId) */
	FB_CTR_SYMPTOMS = 35,        /* how many symptom events the root cause explains */
	FB_CTR_FIRST_SYMPTOM_ID = 36,/* the EventId of the first of them */
	FB_CTR_LAST_SYMPTOM_ID = 37, /* and of the last */
	FB_CTR_HOSTS_NO_PATH = 38,   /* hosts left without a path */
	FB_CTR_HOSTS_DEGRADED = 39,  /* hosts with fewer paths */
	FB_CTR_CABLES = 40,          /* cables of the switch */
	FB_CTR_CABLES_DOWN = 41,     /* of them down */
	FB_CTR_INCIDENT_UPDATE = 42, /* 0: the incident's first verdict; n: its n-th update */
	FB_CTR_LISTS_CUT = 43,       /* 1: a list did not fit its field and was cut (the counts are whole) */
	FB_CTR_SUPPRESSED = 44,      /* flap control: transitions suppressed; rate limits: events */
	/* Set by the broker only (an agent's is removed at ingest), before the
	 * event is journaled: not for default subscribers; the value is why
	 * (enum fb_quiet). See fb_event_set_quiet and proto/PROTOCOL.md. */
	FB_CTR_QUIET = 45,
	FB_CTR_FIRST_SUPPRESSED_ID = 46, /* rate limits: the first EventId made quiet in the summary */
	FB_CTR_LAST_SUPPRESSED_ID = 47,  /* and the last */
	FB_CTR_RATE_LIMIT = 48,          /* the limit: events per interval_ms */
	FB_CTR_LIMIT_LIFTED = 49,        /* 1: the last summary, the limit no longer applies */
	/* De-duplication (broker/dedupctl.h), on a quiet duplicate, whose
	 * EventGroupId is the first report's EventId: */
	FB_CTR_DEDUP_SOURCES = 50,   /* distinct sources (agent, cable end) that reported it so far */
	FB_CTR_DEDUP_REPORTS = 51,   /* reports of it so far, the first included */
	/* 52-54: reserved for de-duplication. */
	FB_CTR__END
};

/* Why an event is quiet (the value of FB_CTR_QUIET). Quiet events are
 * journaled, counted, sent to Kafka and to subscribers that ask (quiet=1);
 * default WebSocket, SSE and push subscriptions skip them. On the wire: append. */
enum fb_quiet {
	FB_QUIET_NONE = 0,
	FB_QUIET_SYMPTOM = 1,      /* a symptom of a root cause the broker emits */
	FB_QUIET_DUPLICATE = 2,    /* another source reported the same thing */
	FB_QUIET_RATE_LIMITED = 3, /* over a rate limit (a summary says how many) */
	FB_QUIET_FLAP = 4,         /* a transition of a port whose flap was detected */
	FB_QUIET__END
};

/* Where it happened. Zero / empty means "not known / not applicable". */
struct fb_subject {
	char fabric[FB_FABRIC_MAX];      /* fabric id; broker default if empty */
	char switch_name[FB_NAME_MAX];   /* node description or sysName */
	uint64_t switch_guid;
	uint16_t port;                   /* switch port number (or IB CA port) */
	uint64_t port_guid;
	uint16_t lid;
	char node[FB_NAME_MAX];          /* Slurm node name */
	char device[FB_NAME_MAX];        /* CA name (mlx5_0) or interface name */
	char addr[FB_ADDR_MAX];          /* Ethernet switch address, or a MAC */
	uint32_t ifindex;                /* Ethernet ifIndex */
	uint64_t peer_guid;              /* what the port is cabled to */
	uint16_t peer_port;
	char peer_name[FB_NAME_MAX];
};

struct fb_counter {
	uint16_t id;    /* enum fb_counter_id (unknown ids are carried through) */
	uint64_t value;
};

struct fb_event {
	char agent_id[FB_AGENT_ID_MAX]; /* from the connection's HELLO, not the event bytes */
	uint64_t seq;                   /* per-agent, strictly increasing */
	uint64_t ts_ns;                 /* when the agent saw it (CLOCK_REALTIME) */
	uint8_t kind;                   /* enum fb_kind */
	uint8_t severity;               /* enum fb_severity */
	uint8_t link_class;             /* enum fb_link_class */
	uint8_t tech;                   /* enum fb_tech */
	uint8_t port_state;             /* IB PortState 1..5 / IF-MIB ifOperStatus, 0 unknown */
	uint8_t phys_state;             /* IB PhysPortState, 0 unknown */
	struct fb_subject subj;
	uint8_t n_counters;
	struct fb_counter counters[FB_COUNTERS_MAX];
	char text[FB_TEXT_MAX];         /* free text from the agent (optional) */
	/* Slurm job ids touching subj.node, comma-separated decimal ("123,124"),
	 * set by the broker from job registrations or by an adapter; empty if
	 * none. fb_event_jobs_check() says what is well formed. */
	char jobs[FB_JOBS_MAX];
};

/* 1 for the broker's root-cause kinds (switch_failed, _degraded, _recovered). */
static inline int fb_event_is_root_cause(unsigned kind)
{
	return kind == FB_KIND_SWITCH_FAILED || kind == FB_KIND_SWITCH_DEGRADED || kind == FB_KIND_SWITCH_RECOVERED;
}

/* Why ev is quiet (enum fb_quiet), 0 if it is not. */
unsigned fb_event_quiet(const struct fb_event *ev);
/* Make ev quiet for reason (1..FB_QUIET__END-1). Already quiet: the smaller
 * reason is kept (a symptom stays a symptom whatever else it is). Returns 0,
 * FB_EFULL when all FB_COUNTERS_MAX counters are taken (the event then stays
 * loud: never dropped, never stripped of an agent's counter), or
 * FB_EMALFORMED for a reason out of range. */
int fb_event_set_quiet(struct fb_event *ev, unsigned reason);
/* Remove FB_CTR_QUIET (an agent may not set it); 1 if it was there. */
int fb_event_clear_quiet(struct fb_event *ev);
/* "symptom", "duplicate", "rate_limited", "flap"; NULL for others. */
const char *fb_quiet_name(unsigned reason);

/* Names used in JSON, docs and logs ("link_down", "warning", "symbol_error").
 * Return NULL for values with no name. A name is shorter than FB_NAME_SLOT
 * bytes and starts a NUL-padded slot of FB_NAME_SLOT bytes in static
 * storage, so a renderer may copy the whole slot in two moves and take the
 * length from the padding (fb_redfish.c does, once per event). */
#define FB_NAME_SLOT 32
const char *fb_kind_name(unsigned kind);
const char *fb_severity_name(unsigned sev);     /* "OK", "Warning", "Critical" */
const char *fb_link_class_name(unsigned cls);
const char *fb_tech_name(unsigned tech);
const char *fb_counter_name(unsigned id);
/* Parse a name (case-insensitive); return the value or -1. */
int fb_kind_parse(const char *name);
int fb_severity_parse(const char *name);
int fb_link_class_parse(const char *name);
int fb_tech_parse(const char *name);
int fb_counter_parse(const char *name);

/* 0 if the event is well formed for the broker to accept, else FB_EMALFORMED
 * with *why naming the field. */
int fb_event_check(const struct fb_event *ev, const char **why);
/* fb_event_check without the jobs list: for a decoder that has checked the
 * list's bytes already (fb_wire.c). The jobs check reads ev->jobs right
 * after the decoder wrote it, and that load waited for every store of the
 * event before it to reach the cache: 15% of the broker's loop thread. */
int fb_event_check_fixed(const struct fb_event *ev, const char **why);
/* 0 if the n bytes at s are a well-formed jobs list: at most
 * FB_JOBS_MAX - 1 bytes of decimal job ids separated by single commas, with
 * no empty item and no leading or trailing comma ("" is the empty list).
 * Else FB_EMALFORMED with *why (may be NULL) naming the problem. */
int fb_event_jobs_check(const char *s, size_t n, const char **why);
/* Append a counter; FB_EFULL past FB_COUNTERS_MAX. */
int fb_event_add_counter(struct fb_event *ev, uint16_t id, uint64_t value);
/* The value of a counter, or def if absent. */
uint64_t fb_event_counter(const struct fb_event *ev, uint16_t id, uint64_t def);
/* 1 if s is a fabric name: 1..FB_FABRIC_MAX - 1 bytes, none of the
 * characters of FB_FABRIC_NAME_BAD, which would change the meaning of a
 * Redfish path (/redfish/v1/Fabrics/<name>/...). The one rule of fabricbusd's
 * FabricName key and of the agents' --fabric. */
#define FB_FABRIC_NAME_BAD "/ ?#%"
/* What a fabric name may be, for an error message (a printf argument, not a
 * format: it holds a '%'). */
#define FB_FABRIC_NAME_RULE "1..31 bytes, none of '/', ' ', '?', '#', '%'"
int fb_fabric_name_valid(const char *s);
/* Copy s into a fixed field; FB_ETOOBIG if it does not fit (dst left empty). */
int fb_strlcpy_field(char *dst, size_t dstsz, const char *s);
uint64_t fb_now_ns(void);

#endif
