/* rf_ctr.h - the newest counter values each switch port reported (error
 * and congestion counters, speed, width), for Ports/{id}/Metrics and the
 * Port's speed and width; and the fabric each switch's events name. Learned on the loop from the IB and SNMP agents'
 * events (any event that carries counters); keyed by (switch GUID, port).
 * At most FB_RF_CTRS_MAX ports (more are not kept). Loop thread only
 * (a clone belongs to whoever made it). */
#ifndef FB_RF_CTR_H
#define FB_RF_CTR_H

#include "fb_event.h"

#include <stdint.h>

#define FB_RF_CTRS_MAX (1u << 20)

struct fb_rf_port_ctrs {
	uint64_t v[FB_CTR__END];
	uint64_t have; /* bit per counter id (ids < 64) */
	uint64_t ts_ns;
};

struct fb_rf_ctrs;

struct fb_rf_ctrs *fb_rf_ctrs_new(void);
void fb_rf_ctrs_free(struct fb_rf_ctrs *c);
/* A copy another thread may read (the tree's builder). NULL on ENOMEM. */
struct fb_rf_ctrs *fb_rf_ctrs_clone(const struct fb_rf_ctrs *c);
void fb_rf_ctrs_learn(struct fb_rf_ctrs *c, const struct fb_event *ev);
/* The port's counters, or NULL. */
const struct fb_rf_port_ctrs *fb_rf_ctrs_get(const struct fb_rf_ctrs *c, uint64_t switch_guid,
					     uint16_t port);
/* The fabric the events about a switch named last (subj.fabric), or NULL:
 * its Fabrics/{id} in OriginOfCondition. */
const char *fb_rf_ctrs_fabric(const struct fb_rf_ctrs *c, uint64_t switch_guid);
/* Something was learned since fb_rf_ctrs_clean. */
int fb_rf_ctrs_dirty(const struct fb_rf_ctrs *c);
void fb_rf_ctrs_clean(struct fb_rf_ctrs *c);

#endif
