/* rf_sub_match.h - does an event go to a subscription? The EventDestination
 * filter properties, compiled once per subscription, against facts computed
 * once per event.
 *
 *   RegistryPrefixes / ExcludeRegistryPrefixes  the MessageId part before the first '.'
 *   MessageIds / ExcludeMessageIds  "Prefix.Major.Minor.Key" exactly, or
 *                                   "Prefix.Key" for every version
 *   OriginResources (+ SubordinateResources)  the OriginOfCondition, exactly
 *                                   (or it and everything below it, by path segment)
 *   Severities                      OK, Warning, Critical (MessageSeverity)
 *   ResourceTypes                   the schema name of the origin ("Port", "Switch")
 *   EventTypes (deprecated)         Alert, StatusChange, ...
 * Each present list must match (an empty list is absent); excludes win.
 *
 * Why not broker/filter.c: fb_filter is the WebSocket query's fixed-size
 * value (MessageId prefixes, one origin prefix), matched on the lws thread
 * without allocation. Subscriptions need lists of exact ids, exclusions,
 * several origins and resource types; the severity mask is the same idea
 * and uses the same fb_severity_parse. The resource type comes from
 * rf_filter's fb_rf_origin_type, the one origin -> schema mapping.
 */
#ifndef FB_RF_SUB_MATCH_H
#define FB_RF_SUB_MATCH_H

#include <stddef.h>

struct fb_rf_strv {
	const char **v; /* owned array; the strings belong to the subscription's doc */
	size_t n;
};

struct fb_rf_match {
	struct fb_rf_strv prefixes, x_prefixes, ids, x_ids, origins, types, event_types;
	int subordinate;
	unsigned sev_mask; /* bit (1 << enum fb_severity); 0 = any */
};

/* What one event is, for matching. */
struct fb_rf_facts {
	const char *message_id;
	size_t prefix_len;       /* of the RegistryPrefix within message_id */
	unsigned severity;       /* enum fb_severity */
	const char *event_type;  /* "Alert", ... */
	const char *origin;      /* OriginOfCondition path, "" when none */
	const char *resource_type; /* "Port", ... or "" */
};

void fb_rf_facts_init(struct fb_rf_facts *f, const char *message_id, unsigned severity,
		      const char *event_type, const char *origin);
int fb_rf_match(const struct fb_rf_match *m, const struct fb_rf_facts *f);
void fb_rf_match_free(struct fb_rf_match *m);

#endif
