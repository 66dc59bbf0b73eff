/* fb_redfish_table.h - private to proto/fb_redfish*.c; not for other callers.
 *
 * What fb_redfish_table.c (the registries' vocabulary and the event -> message
 * table) hands to fb_redfish.c (origin paths and rendering). The tables
 * themselves stay static in fb_redfish_table.c, so the only way to a message
 * is through a classification, and docs/mapping.md has one place to describe.
 */
#ifndef FB_REDFISH_TABLE_H
#define FB_REDFISH_TABLE_H

#include "fb_event.h"
#include "fb_redfish.h"

#include <stdint.h>

/* How MessageArgs are built from the event. */
enum fb_redfish_args {
	ARGS_NONE,          /* no args */
	ARGS_SWITCH,        /* switch */
	ARGS_SW_PORT,       /* switch, port */
	ARGS_SW_PORT_FLAP,  /* switch, port, flap count, window minutes */
	ARGS_NIC,           /* adapter, port, function */
	ARGS_NIC_FLAP,      /* adapter, port, function, flap count, window minutes */
	ARGS_ERR_THRESHOLD, /* counter property, threshold */
	ARGS_XMIT_WAIT,     /* "PortXmitWait", threshold */
	ARGS_STATE,         /* resource, Resource.State value */
	ARGS_HEALTH,        /* resource, Resource.Health value (the message's severity) */
	ARGS_FLAP_SUMMARY,  /* switch, port, suppressed, interval seconds */
	ARGS_FLAP_STABLE,   /* switch, port, interval seconds, suppressed */
	ARGS_SUPPRESSED,    /* suppressed, whose (text or the subject), interval seconds, first id, last id */
};

/* One registry message; every one lives in static storage. Neither string
 * has a byte JSON must escape, so the renderer copies them as they are. */
struct fb_redfish_msg {
	const char *id;    /* MessageId: Prefix.Major.Minor.Key */
	const char *tmpl;  /* registry Message with %1..%n */
	uint8_t sev;       /* registry MessageSeverity */
	uint8_t shape;     /* enum fb_redfish_args */
	uint16_t id_len;   /* strlen(id) */
	uint16_t tmpl_len; /* strlen(tmpl) */
};

/* Fill out for ev and return the message it maps to. The renderer needs
 * both, and one call keeps it to one walk of the class table per event. */
const struct fb_redfish_msg *fb_redfish_table_classify(const struct fb_event *ev,
							struct fb_redfish_class *out);

/* Fabricbus.1.0.SubscriberEventsMissed: no event maps to it, so it has no
 * class row and is reached by name. */
const struct fb_redfish_msg *fb_redfish_table_missed(void);

/* The PortCounters/PortMetrics property name of the counter that crossed
 * its threshold, for ResourceErrorThresholdExceeded/Cleared. */
const char *fb_redfish_table_threshold_property(const struct fb_event *ev);

/* The Resource.State value for the event's port state. */
const char *fb_redfish_table_port_state(const struct fb_event *ev);

#endif
