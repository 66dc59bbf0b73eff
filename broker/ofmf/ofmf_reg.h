/* ofmf_reg.h - the registration of fabricbusd with an OFMF (Sunfish) core,
 * as a pure state machine: no I/O, no clock of its own.
 *
 * The caller (ofmf.c, on the libevent loop) feeds it inputs: the results of
 * the HTTP requests it asked for, the core's PATCH of our SunfishServer
 * Context, origins that appeared, failed deliveries to the core, and the
 * time. It pulls actions with fb_ofmf_reg_next() until FB_OFMF_NONE, and
 * arms a timer for fb_ofmf_reg_wake(). At most one request is in flight;
 * the caller reports its result with fb_ofmf_reg_done() before the machine
 * asks for another.
 *
 * What it does (docs/ofmf.md has the exchange and why):
 *   no Context            -> DISCOVER (POST AggregationSourceDiscovered); the
 *                            core PATCHes the Context while that POST is
 *                            pending; 200 -> registered
 *   409 to DISCOVER        -> the core still holds our ConnectionMethod: list
 *                            its AggregationSources and adopt the one with our
 *                            ConnectionMethod and HostName; none -> conflict
 *                            (someone else uses the id), retried slowly
 *   saved Context at start -> GET our AggregationSource: 200 and ours ->
 *                            registered without a new discovery; 404 -> the
 *                            core forgot (restarted): DISCOVER again
 *   registered             -> ANNOUNCE (ResourceCreated) the fabric; once the
 *                            core has crawled it, deliver events (held until
 *                            then), and announce each new origin (unless the
 *                            crawl reached it); GET our AggregationSource every
 *                            check interval and after a failed delivery; 404
 *                            or a 400 to ANNOUNCE -> the core forgot: DISCOVER
 *   core unreachable       -> keep the Context, retry with back-off
 */
#ifndef FB_OFMF_REG_H
#define FB_OFMF_REG_H

#include <stddef.h>
#include <stdint.h>

struct fb_ofmf_reg_opts {
	const char *base;              /* our base URL, "http://127.0.0.1:7412" */
	const char *connection_method; /* our ConnectionMethod's @odata.id */
	const char *fabric;            /* announced at each registration: "/redfish/v1/Fabrics/IB" */
	uint64_t check_ns;             /* GET our AggregationSource this often when registered */
	uint64_t retry_min_ns, retry_max_ns; /* back-off while the core is unreachable */
	uint64_t conflict_ns;          /* retry after a 409 for a ConnectionMethod not ours */
	uint64_t context_wait_ns;      /* how long the PATCH may lag our discovery's 200 */
	unsigned queue_max;            /* origins waiting to be announced */
	uint64_t announce_delay_ns;    /* a new origin waits this long (our tree's refresh) */
	uint64_t refuse_min_ns;        /* an event refused is dropped no sooner than this after
					  its first refusal (the core also fails transiently while
					  it crawls); 0: 10 s */
};

enum fb_ofmf_act {
	FB_OFMF_NONE = 0,
	FB_OFMF_DISCOVER,     /* POST <core>/EventListener AggregationSourceDiscovered */
	FB_OFMF_GET_SOURCE,   /* GET <core><path> (an AggregationSource) */
	FB_OFMF_LIST_SOURCES, /* GET <core><path> (the AggregationSources collection) */
	FB_OFMF_ANNOUNCE,     /* POST <core>/EventListener ResourceCreated, origin path, Context */
	FB_OFMF_SAVE,         /* persist the Context (ofmf_state.h); not a request */
	FB_OFMF_SET_CONTEXT,  /* put context on the SunfishServer subscription, and deliver
				 its events or hold them (deliver). Not a request */
};

struct fb_ofmf_action {
	enum fb_ofmf_act kind;
	const char *path;    /* GET_SOURCE, LIST_SOURCES, ANNOUNCE; valid until the next call */
	const char *context; /* ANNOUNCE, SAVE, SET_CONTEXT */
	int deliver;         /* SET_CONTEXT: registered and the fabric crawled */
};

enum fb_ofmf_state_id {
	FB_OFMF_ST_DISCOVER,      /* (about to) POST the discovery */
	FB_OFMF_ST_AWAIT_CONTEXT, /* the core said 200 but its PATCH has not come yet */
	FB_OFMF_ST_CHECK,         /* verifying a Context we hold (start, PATCH) */
	FB_OFMF_ST_ADOPT_LIST,    /* after a 409: listing the core's AggregationSources */
	FB_OFMF_ST_ADOPT_MEMBER,  /* ... and reading them one by one */
	FB_OFMF_ST_REGISTERED,
	FB_OFMF_ST_CONFLICT,      /* 409 and no AggregationSource of ours: waiting */
};

struct fb_ofmf_reg_stats {
	uint64_t registrations; /* discoveries that gave a Context */
	uint64_t adoptions;     /* Contexts found on the core after a 409 */
	uint64_t resumed;       /* saved Contexts the core still knew */
	uint64_t forgotten;     /* times the core had forgotten us */
	uint64_t conflicts;
	uint64_t announced, announce_dropped;
	uint64_t undeliverable; /* events the core kept refusing, dropped */
	uint64_t requests, request_failures;
};

struct fb_ofmf_reg;

/* opts' strings are copied. saved_context: from the state file, or NULL/"".
 * Returns NULL on ENOMEM or an opts string over FB_OFMF_URL_MAX. */
struct fb_ofmf_reg *fb_ofmf_reg_new(const struct fb_ofmf_reg_opts *opts, const char *saved_context,
				    uint64_t now);
void fb_ofmf_reg_free(struct fb_ofmf_reg *r);

/* The next action, or FB_OFMF_NONE (then wait for a result or the wake time). */
void fb_ofmf_reg_next(struct fb_ofmf_reg *r, uint64_t now, struct fb_ofmf_action *out);
/* When next() may have something new without any input; UINT64_MAX: only
 * after an input. */
uint64_t fb_ofmf_reg_wake(const struct fb_ofmf_reg *r);

/* The result of the request in flight: status is the HTTP status, or a
 * negative errno when no reply came (refused, reset, timed out). body may be
 * NULL. Ignored when no request is in flight. */
void fb_ofmf_reg_done(struct fb_ofmf_reg *r, uint64_t now, int status, const char *body,
		      size_t len);
/* The core (or anyone) PATCHed the SunfishServer Context. */
void fb_ofmf_reg_context_patched(struct fb_ofmf_reg *r, uint64_t now, const char *context);
/* An OriginOfCondition seen in a committed event: announced once, when new. */
void fb_ofmf_reg_origin(struct fb_ofmf_reg *r, uint64_t now, const char *path);
/* A delivery of EventId event_id (0: not a journal event) about origin ("":
 * none) to the core failed; refused: the core was reached and answered an
 * error or closed without a reply (the reference core's answer to an origin
 * it does not hold), else it is down. The registration is checked soon. A
 * refused event's origin is announced at once (ahead of the queue); when,
 * after that announcement was made (or dropped) and a check found us still
 * registered, the core refuses the same event again, it never will take it:
 * returns 1 (drop it, the events behind it must flow), else 0 (retry). */
int fb_ofmf_reg_delivery_failed(struct fb_ofmf_reg *r, uint64_t now, uint64_t event_id,
				const char *origin, int refused);

enum fb_ofmf_state_id fb_ofmf_reg_state(const struct fb_ofmf_reg *r);
const char *fb_ofmf_reg_state_name(enum fb_ofmf_state_id st);
const char *fb_ofmf_reg_context(const struct fb_ofmf_reg *r); /* "" when none */
const char *fb_ofmf_reg_last_error(const struct fb_ofmf_reg *r); /* "" when none */
void fb_ofmf_reg_get_stats(const struct fb_ofmf_reg *r, struct fb_ofmf_reg_stats *out);

#define FB_OFMF_SOURCES "/redfish/v1/AggregationService/AggregationSources"

#endif
