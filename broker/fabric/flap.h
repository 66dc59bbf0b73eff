/* flap.h - flap control per port: N link transitions within T are one
 * FlapDetected, then the port is suppressed, with a summary every summary
 * interval ("suppressed N transitions") while it keeps flapping, until it
 * has been stable for stable_ns: then one "stable again" (docs/topology.md,
 * "Flap control").
 *
 * Nothing is dropped: the transitions themselves are journaled; those of
 * a suppressed port are quiet (FB_QUIET_FLAP: default subscribers skip
 * them, broker/flapctl.c), and this decides which events the broker adds. An agent that detects flaps itself (fabricbus-agent-ib
 * sends `flap`) is not repeated: its flap event starts the suppression
 * (fb_flap_agent_flap), and the broker adds only the summaries and the
 * stable event, in that event's group.
 *
 * Pure: an explicit clock in ns, no I/O. A port is (switch GUID, port), or
 * for a node-side event (port GUID, CA port). Memory: at most max_ports
 * ports are followed; past that new ports are counted (untracked), not
 * followed, and a port that has been quiet for 2 x window is forgotten
 * when its slot is needed.
 */
#ifndef FB_FLAP_H
#define FB_FLAP_H

#include <stddef.h>
#include <stdint.h>

#define FB_FLAP_MAX_TRANSITIONS 32

struct fb_flap_cfg {
	uint32_t transitions; /* N, 2..FB_FLAP_MAX_TRANSITIONS (0: 6, three down/up cycles) */
	uint64_t window_ns;   /* T (0: 60 s) */
	uint64_t summary_ns;  /* summary period while suppressed (0: 10 s) */
	uint64_t stable_ns;   /* quiet time that ends the suppression (0: 30 s) */
	size_t max_ports;     /* 0: 16384 */
};

enum fb_flap_what {
	FB_FLAP_NONE = 0,
	FB_FLAP_DETECTED,  /* the broker emits FlapDetected (transitions in window) */
	FB_FLAP_SUMMARY,   /* "suppressed n transitions" since the last summary */
	FB_FLAP_STABLE,    /* stable for stable_ns; n = transitions suppressed in all */
};

struct fb_flap_out {
	uint8_t what;        /* enum fb_flap_what */
	uint64_t guid;       /* the port's key */
	uint16_t port;
	uint64_t n;          /* see enum fb_flap_what */
	uint64_t group;      /* the FlapDetected's EventId (fb_flap_set_group) */
	uint64_t since_ns;   /* when the suppression started */
};

struct fb_flap;

/* NULL on ENOMEM. */
struct fb_flap *fb_flap_new(const struct fb_flap_cfg *cfg);
void fb_flap_free(struct fb_flap *f);
const struct fb_flap_cfg *fb_flap_cfg(const struct fb_flap *f);

/* A link transition (down or up) on a port at now_ns. Returns
 * FB_FLAP_DETECTED (out filled: n = transitions within the window) when it
 * is the N-th within T on a port not suppressed: the port is suppressed
 * from now on. Else FB_FLAP_NONE (counted as suppressed if it was). */
int fb_flap_transition(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t now_ns, struct fb_flap_out *out);
/* 1 if the port is suppressed now: its next transition is only counted. */
int fb_flap_is_suppressed(const struct fb_flap *f, uint64_t guid, uint16_t port);
/* An agent's own flap event (EventId event_id) for the port: suppressed
 * from now on in that group, no FlapDetected of the broker's. */
void fb_flap_agent_flap(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t event_id, uint64_t now_ns);
/* The EventId of the FlapDetected emitted for the port (its group). */
void fb_flap_set_group(struct fb_flap *f, uint64_t guid, uint16_t port, uint64_t group);
/* Summaries and stable events due at now_ns: up to max of them in out,
 * returns how many (call again while it returns max). */
size_t fb_flap_tick(struct fb_flap *f, uint64_t now_ns, struct fb_flap_out *out, size_t max);
/* When the next summary or stable event is due (0: none suppressed). */
uint64_t fb_flap_next_due(const struct fb_flap *f);
/* Ports suppressed now, and ports not followed for want of room. */
size_t fb_flap_suppressed(const struct fb_flap *f);
uint64_t fb_flap_untracked(const struct fb_flap *f);

#endif
