/* fb_redfish_table.c - what the Redfish registries say, and which of their
 * messages each fabric event becomes.
 *
 * Two tables: the messages (copied from the registries) and the classes
 * ((kind, link class, tech) -> message, one list of rows per kind). Beside
 * them, the registry vocabulary MessageArgs are built from: counter property
 * names and Resource.State values. docs/mapping.md is the prose form of the tables;
 * the unit test checks every message below against the registry JSON files,
 * so a typo in a template or severity fails the build's tests, not a
 * subscriber. Rendering is in fb_redfish.c.
 */
#include "fb_redfish_table.h"

/* ---- the messages we emit, copied from the registries ---------------- */

enum msg_idx {
	M_ISL_UP, M_ISL_DOWN, M_ISL_DEG, M_ISL_FLAP,
	M_DS_UP, M_DS_DOWN, M_DS_DEG, M_DS_FLAP,
	M_US_UP, M_US_DOWN, M_US_DEG, M_US_FLAP,
	M_PORT_OK, M_PORT_FAILED, M_PORT_DEG,
	M_ND_UP, M_ND_DOWN, M_ND_DEG, M_ND_FLAP,
	M_SW_FAILED, M_SW_DEGRADED, M_SW_OK,
	M_ERR_EXC, M_ERR_CLR, M_WARN_EXC, M_WARN_CLR,
	M_STATE, M_CREATED, M_CHANGED, M_TEST,
	M_STATUS_OK, M_STATUS_WARN, M_STATUS_CRIT, /* in severity order: see the classify */
	M_OEM_PORT_FLAP, M_OEM_MISSED, M_OEM_FLAP_SUPPRESSED, M_OEM_FLAP_STABLE,
	M_OEM_EVENTS_SUPPRESSED,
	M__END
};

#define OK_ FB_SEV_OK
#define WARN_ FB_SEV_WARNING
#define CRIT_ FB_SEV_CRITICAL

/* The lengths beside the strings: the renderer copies them without a strlen. */
#define MSG(id, tmpl, sev, shape) { id, tmpl, sev, shape, sizeof(id) - 1, sizeof(tmpl) - 1 }

static const struct fb_redfish_msg msgs[M__END] = {
	[M_ISL_UP] = MSG("Fabric.1.0.InterswitchLinkEstablished",
		"Switch '%1' interswitch link is established on port '%2'.", OK_, ARGS_SW_PORT),
	[M_ISL_DOWN] = MSG("Fabric.1.0.InterswitchLinkDropped",
		"Switch '%1' interswitch link has gone down on port '%2'.", WARN_, ARGS_SW_PORT),
	[M_ISL_DEG] = MSG("Fabric.1.0.DegradedInterswitchLinkEstablished",
		"Switch '%1' interswitch link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT),
	[M_ISL_FLAP] = MSG("Fabric.1.0.InterswitchLinkFlapDetected",
		"Switch '%1' interswitch link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP),
	[M_DS_UP] = MSG("Fabric.1.0.DownstreamLinkEstablished",
		"Switch '%1' downstream link is established on port '%2'.", OK_, ARGS_SW_PORT),
	[M_DS_DOWN] = MSG("Fabric.1.0.DownstreamLinkDropped",
		"Switch '%1' downstream link has gone down on port '%2'.", WARN_, ARGS_SW_PORT),
	[M_DS_DEG] = MSG("Fabric.1.0.DegradedDownstreamLinkEstablished",
		"Switch '%1' downstream link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT),
	[M_DS_FLAP] = MSG("Fabric.1.0.DownstreamLinkFlapDetected",
		"Switch '%1' downstream link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP),
	[M_US_UP] = MSG("Fabric.1.0.UpstreamLinkEstablished",
		"Switch '%1' upstream link is established on port '%2'.", OK_, ARGS_SW_PORT),
	[M_US_DOWN] = MSG("Fabric.1.0.UpstreamLinkDropped",
		"Switch '%1' upstream link has gone down on port '%2'.", WARN_, ARGS_SW_PORT),
	[M_US_DEG] = MSG("Fabric.1.0.DegradedUpstreamLinkEstablished",
		"Switch '%1' upstream link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT),
	[M_US_FLAP] = MSG("Fabric.1.0.UpstreamLinkFlapDetected",
		"Switch '%1' upstream link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP),
	[M_PORT_OK] = MSG("Fabric.1.0.PortOK",
		"Switch '%1' port '%2' has returned to a functional state.", OK_, ARGS_SW_PORT),
	[M_PORT_FAILED] = MSG("Fabric.1.0.PortFailed",
		"Switch '%1' port '%2' has failed and is inoperative.", CRIT_, ARGS_SW_PORT),
	[M_PORT_DEG] = MSG("Fabric.1.0.PortDegraded",
		"Switch '%1' port '%2' is in a degraded state.", WARN_, ARGS_SW_PORT),
	[M_ND_UP] = MSG("NetworkDevice.1.1.ConnectionEstablished",
		"A network connection was established for network adapter '%1' port '%2' function '%3'.",
		OK_, ARGS_NIC),
	[M_ND_DOWN] = MSG("NetworkDevice.1.1.ConnectionDropped",
		"The connection is no longer active for network adapter '%1' port '%2' function '%3'.",
		OK_, ARGS_NIC),
	[M_ND_DEG] = MSG("NetworkDevice.1.1.DegradedConnectionEstablished",
		"A degraded network connection was established for network adapter '%1' port '%2' function '%3'.",
		WARN_, ARGS_NIC),
	[M_ND_FLAP] = MSG("NetworkDevice.1.1.LinkFlapDetected",
		"The network connection for network adapter '%1' port '%2' function '%3' was established and dropped '%4' times in the last '%5' minutes.",
		WARN_, ARGS_NIC_FLAP),
	[M_SW_FAILED] = MSG("Fabric.1.0.SwitchFailed",
		"Switch '%1' has failed and is inoperative.", CRIT_, ARGS_SWITCH),
	[M_SW_DEGRADED] = MSG("Fabric.1.0.SwitchDegraded",
		"Switch '%1' is in a degraded state.", WARN_, ARGS_SWITCH),
	[M_SW_OK] = MSG("Fabric.1.0.SwitchOK",
		"Switch '%1' has returned to a functional state.", OK_, ARGS_SWITCH),
	[M_ERR_EXC] = MSG("ResourceEvent.1.4.ResourceErrorThresholdExceeded",
		"The resource property %1 has exceeded error threshold of value %2.", CRIT_,
		ARGS_ERR_THRESHOLD),
	[M_ERR_CLR] = MSG("ResourceEvent.1.4.ResourceErrorThresholdCleared",
		"The resource property %1 has cleared the error threshold of value %2.", OK_,
		ARGS_ERR_THRESHOLD),
	[M_WARN_EXC] = MSG("ResourceEvent.1.4.ResourceWarningThresholdExceeded",
		"The resource property %1 has exceeded its warning threshold of value %2.", WARN_,
		ARGS_XMIT_WAIT),
	[M_WARN_CLR] = MSG("ResourceEvent.1.4.ResourceWarningThresholdCleared",
		"The resource property %1 has cleared the warning threshold of value %2.", OK_,
		ARGS_XMIT_WAIT),
	[M_STATE] = MSG("ResourceEvent.1.4.ResourceStateChanged",
		"The state of resource '%1' has changed to %2.", OK_, ARGS_STATE),
	[M_CREATED] = MSG("ResourceEvent.1.4.ResourceCreated",
		"The resource was created successfully.", OK_, ARGS_NONE),
	[M_CHANGED] = MSG("ResourceEvent.1.4.ResourceChanged",
		"One or more resource properties have changed.", OK_, ARGS_NONE),
	[M_TEST] = MSG("ResourceEvent.1.4.TestMessage", "Test message.", OK_, ARGS_NONE),
	[M_STATUS_OK] = MSG("ResourceEvent.1.4.ResourceStatusChangedOK",
		"The health of resource '%1' has changed to %2.", OK_, ARGS_HEALTH),
	[M_STATUS_WARN] = MSG("ResourceEvent.1.4.ResourceStatusChangedWarning",
		"The health of resource '%1' has changed to %2.", WARN_, ARGS_HEALTH),
	[M_STATUS_CRIT] = MSG("ResourceEvent.1.4.ResourceStatusChangedCritical",
		"The health of resource '%1' has changed to %2.", CRIT_, ARGS_HEALTH),
	/* OEM: proto/redfish/registries/Fabricbus.1.0.0.json */
	[M_OEM_PORT_FLAP] = MSG("Fabricbus.1.0.PortFlapDetected",
		"Switch '%1' port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP),
	[M_OEM_FLAP_SUPPRESSED] = MSG("Fabricbus.1.0.PortFlapSuppressed",
		"Switch '%1' port '%2' kept flapping: %3 link transitions in the last %4 seconds were suppressed.",
		WARN_, ARGS_FLAP_SUMMARY),
	[M_OEM_FLAP_STABLE] = MSG("Fabricbus.1.0.PortFlapStable",
		"Switch '%1' port '%2' has been stable for %3 seconds after flapping; %4 link transitions were suppressed.",
		OK_, ARGS_FLAP_STABLE),
	[M_OEM_EVENTS_SUPPRESSED] = MSG("Fabricbus.1.0.EventsSuppressed",
		"%1 events of %2 over its rate limit in the last %3 seconds were suppressed (EventIds %4 to %5); they are journaled and delivered to subscribers that ask for quiet events.",
		WARN_, ARGS_SUPPRESSED),
	[M_OEM_MISSED] = MSG("Fabricbus.1.0.SubscriberEventsMissed",
		"%1 events were not delivered to this subscriber because it fell behind; reconnect with since=%2 to replay them from the journal.",
		WARN_, ARGS_NONE),
};

/* ---- the class table: (kind, link class, tech) -> message ------------- */

enum ev_type { ET_BY_SEV, ET_ADDED, ET_UPDATED, ET_OTHER, ET_ALERT, ET_STATUS };
/* In NUL-padded slots, as the event model's names (fb_event.h): the
 * renderer copies them whole. */
static const char ev_type_names[][FB_NAME_SLOT] = {
	[ET_ADDED] = "ResourceAdded", [ET_UPDATED] = "ResourceUpdated", [ET_OTHER] = "Other",
	[ET_ALERT] = "Alert", [ET_STATUS] = "StatusChange",
};

#define ANY 0xff

struct row {
	uint8_t cls, tech; /* key within the kind; ANY matches every value */
	uint8_t msg;       /* enum msg_idx */
	uint8_t min_sev;   /* fabricbus floor above the registry severity */
	uint8_t etype;     /* enum ev_type */
};

/* The rows of each kind, indexed by kind: classify runs once per event on
 * the fan-out path, so it goes straight to the kind's rows instead of
 * searching one list. Within a kind the first match wins, so specific rows
 * go first, and every kind's rows end with an ANY/ANY row (the search stops
 * there). Severity = max(registry, min_sev, the event's own). */
#define ROWS(...) ((const struct row[]){ __VA_ARGS__ })
#define ONLY(msg, etype) ROWS({ ANY, ANY, msg, OK_, etype })
/* A link kind: a message for each role of a switch port, one for a node's
 * own port (at least node_sev) and one for a port of unknown role. */
#define LINK_ROWS(isl, host, uplink, node, node_sev, unknown)                                      \
	ROWS({ FB_LINK_ISL, ANY, isl, OK_, ET_BY_SEV }, { FB_LINK_HOST, ANY, host, OK_, ET_BY_SEV },   \
	     { FB_LINK_UPLINK, ANY, uplink, OK_, ET_BY_SEV }, { FB_LINK_NODE, ANY, node, node_sev, ET_BY_SEV }, \
	     { ANY, ANY, unknown, OK_, ET_BY_SEV })
static const struct row *const rows[FB_KIND__END] = {
	/* NetworkDevice rates a dropped connection OK; losing a node's fabric
	 * link is what a scheduler drains on, so it is at least a Warning. */
	[FB_KIND_LINK_DOWN] = LINK_ROWS(M_ISL_DOWN, M_DS_DOWN, M_US_DOWN, M_ND_DOWN, WARN_, M_PORT_FAILED),
	[FB_KIND_LINK_UP] = LINK_ROWS(M_ISL_UP, M_DS_UP, M_US_UP, M_ND_UP, OK_, M_PORT_OK),
	[FB_KIND_LINK_DEGRADED] = LINK_ROWS(M_ISL_DEG, M_DS_DEG, M_US_DEG, M_ND_DEG, OK_, M_PORT_DEG),
	/* Fabric has no flap message for a port of unknown role. */
	[FB_KIND_FLAP] = LINK_ROWS(M_ISL_FLAP, M_DS_FLAP, M_US_FLAP, M_ND_FLAP, OK_, M_OEM_PORT_FLAP),
	[FB_KIND_COUNTER_THRESHOLD] = ONLY(M_ERR_EXC, ET_BY_SEV),
	[FB_KIND_COUNTER_CLEARED] = ONLY(M_ERR_CLR, ET_BY_SEV),
	[FB_KIND_CONGESTION] = ONLY(M_WARN_EXC, ET_BY_SEV),
	[FB_KIND_CONGESTION_CLEARED] = ONLY(M_WARN_CLR, ET_BY_SEV),
	[FB_KIND_SWITCH_UNREACHABLE] = ONLY(M_SW_FAILED, ET_BY_SEV),
	[FB_KIND_SWITCH_REACHABLE] = ONLY(M_SW_OK, ET_BY_SEV),
	/* The broker's root cause (broker/storm.c): the switch a storm of
	 * cable-down reports has in common, and its return. */
	[FB_KIND_SWITCH_FAILED] = ONLY(M_SW_FAILED, ET_BY_SEV),
	[FB_KIND_SWITCH_DEGRADED] = ONLY(M_SW_DEGRADED, ET_BY_SEV),
	[FB_KIND_SWITCH_RECOVERED] = ONLY(M_SW_OK, ET_BY_SEV),
	/* The broker's flap control on a port whose flap was detected. */
	[FB_KIND_FLAP_SUPPRESSED] = ONLY(M_OEM_FLAP_SUPPRESSED, ET_BY_SEV),
	[FB_KIND_FLAP_STABLE] = ONLY(M_OEM_FLAP_STABLE, ET_BY_SEV),
	/* The broker's rate limits: how many events it made quiet. */
	[FB_KIND_EVENTS_SUPPRESSED] = ONLY(M_OEM_EVENTS_SUPPRESSED, ET_BY_SEV),
	[FB_KIND_PORT_STATE] = ONLY(M_STATE, ET_BY_SEV),
	[FB_KIND_INVENTORY] = ONLY(M_CREATED, ET_ADDED),
	[FB_KIND_TOPOLOGY] = ONLY(M_CHANGED, ET_UPDATED),
	[FB_KIND_TEST] = ONLY(M_TEST, ET_OTHER),
	/* An adapter's drain or resume changes what the node is good for: the
	 * ComputerSystem's health, at the severity the adapter chose (Warning
	 * for a drain, OK for a resume). Who acted and why are in Oem. */
	[FB_KIND_ACTION] = ONLY(M_STATUS_OK, ET_BY_SEV),
};

/* Unknown kinds: "something changed", at the event's own severity. */
static const struct row fallback = { ANY, ANY, M_CHANGED, OK_, ET_OTHER };

/* The most rows a kind has (LINK_ROWS): the search never reads past them,
 * even if a kind's rows were to lose their closing ANY/ANY row. */
#define ROWS_MAX 5

static const struct row *lookup(const struct fb_event *ev)
{
	const struct row *r = ev->kind < FB_KIND__END ? rows[ev->kind] : NULL;
	for (unsigned i = 0; r && i < ROWS_MAX; i++, r++) {
		if ((r->cls == ANY || r->cls == ev->link_class) && (r->tech == ANY || r->tech == ev->tech))
			return r;
		if (r->cls == ANY && r->tech == ANY)
			break; /* the kind's last row */
	}
	return &fallback;
}

static uint8_t max_u8(uint8_t a, uint8_t b) { return a > b ? a : b; }

const struct fb_redfish_msg *fb_redfish_table_classify(const struct fb_event *ev,
							struct fb_redfish_class *out)
{
	const struct row *r = lookup(ev);
	uint8_t ev_sev = ev->severity < FB_SEV__END ? ev->severity : FB_SEV_CRITICAL;
	/* ResourceStatusChanged has one message per severity: a row naming
	 * the OK one gets the one of the event's severity. */
	unsigned idx = r->msg == M_STATUS_OK ? (unsigned)M_STATUS_OK + ev_sev : r->msg;
	const struct fb_redfish_msg *m = &msgs[idx];
	out->message_id = m->id;
	out->severity = max_u8(max_u8(m->sev, r->min_sev), ev_sev);
	if (r->etype != ET_BY_SEV)
		out->event_type = ev_type_names[r->etype];
	else
		out->event_type = ev_type_names[out->severity >= FB_SEV_WARNING ? ET_ALERT : ET_STATUS];
	return m;
}

void fb_redfish_classify(const struct fb_event *ev, struct fb_redfish_class *out)
{
	(void)fb_redfish_table_classify(ev, out);
}

const struct fb_redfish_msg *fb_redfish_table_missed(void)
{
	return &msgs[M_OEM_MISSED];
}

/* ---- registry vocabulary for MessageArgs -------------------------------- */

/* IBA PortCounters attribute names (what perfquery prints); the Ethernet
 * ones are PortMetrics properties. NULL: not an error/traffic counter. */
static const char *const ctr_prop[FB_CTR__END] = {
	[FB_CTR_SYMBOL_ERROR] = "SymbolErrorCounter",
	[FB_CTR_LINK_ERROR_RECOVERY] = "LinkErrorRecoveryCounter",
	[FB_CTR_LINK_DOWNED] = "LinkDownedCounter",
	[FB_CTR_RCV_ERRORS] = "PortRcvErrors",
	[FB_CTR_RCV_REMOTE_PHYS_ERRORS] = "PortRcvRemotePhysicalErrors",
	[FB_CTR_RCV_SWITCH_RELAY_ERRORS] = "PortRcvSwitchRelayErrors",
	[FB_CTR_XMIT_DISCARDS] = "PortXmitDiscards",
	[FB_CTR_XMIT_CONSTRAINT_ERRORS] = "PortXmitConstraintErrors",
	[FB_CTR_RCV_CONSTRAINT_ERRORS] = "PortRcvConstraintErrors",
	[FB_CTR_LOCAL_LINK_INTEGRITY_ERRORS] = "LocalLinkIntegrityErrors",
	[FB_CTR_EXCESSIVE_BUFFER_OVERRUN] = "ExcessiveBufferOverrunErrors",
	[FB_CTR_VL15_DROPPED] = "VL15Dropped",
	[FB_CTR_XMIT_WAIT] = "PortXmitWait",
	[FB_CTR_XMIT_DATA] = "PortXmitData",
	[FB_CTR_RCV_DATA] = "PortRcvData",
	[FB_CTR_XMIT_PKTS] = "PortXmitPkts",
	[FB_CTR_RCV_PKTS] = "PortRcvPkts",
	[FB_CTR_IF_IN_ERRORS] = "RXErrors",
	[FB_CTR_IF_OUT_ERRORS] = "TXErrors",
	[FB_CTR_IF_IN_DISCARDS] = "RXDiscards",
	[FB_CTR_IF_OUT_DISCARDS] = "TXDiscards",
};

/* The counter that crossed: the first one the event carries with a
 * property name (agents put it first; the meta counters have none). */
const char *fb_redfish_table_threshold_property(const struct fb_event *ev)
{
	for (unsigned i = 0; i < ev->n_counters && i < FB_COUNTERS_MAX; i++) {
		unsigned id = ev->counters[i].id;
		if (id < FB_CTR__END && ctr_prop[id])
			return ctr_prop[id];
	}
	return "ErrorCounters";
}

/* A Resource.State enumeration value for the port's state. */
const char *fb_redfish_table_port_state(const struct fb_event *ev)
{
	if (ev->tech == FB_TECH_ETH) { /* IF-MIB ifOperStatus */
		static const char *const eth[] = { NULL, "Enabled", "UnavailableOffline", "InTest",
			NULL, "StandbyOffline", "Absent", "UnavailableOffline" };
		if (ev->port_state < sizeof(eth) / sizeof(eth[0]) && eth[ev->port_state])
			return eth[ev->port_state];
		return "UnavailableOffline";
	}
	if (ev->phys_state == 3) /* PhysPortState Disabled: an administrative state */
		return "Disabled";
	if (ev->phys_state == 7) /* PhyTest */
		return "InTest";
	switch (ev->port_state) { /* IB PortState */
	case 1: return "UnavailableOffline"; /* Down */
	case 2: /* Init */
	case 3: return "Starting";           /* Armed */
	case 4: /* Active */
	case 5: return "Enabled";            /* ActiveDefer */
	}
	return ev->phys_state == 5 ? "Starting" : "UnavailableOffline";
}
