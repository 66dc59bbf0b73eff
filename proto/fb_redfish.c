/* fb_redfish.c - fabric event -> DMTF Redfish Event (Event.v1_13_0).
 *
 * Three parts: the message table (what the registries say), the class table
 * (which message an event becomes), and the renderer. The renderer runs once
 * per event on the fan-out path, so it writes JSON by hand into an fb_buf,
 * formats numbers and timestamps itself and allocates nothing but buffer
 * growth. docs/mapping.md is the prose form of the two tables; the unit test
 * checks every message below against the registry JSON files, so a typo in a
 * template or severity fails the build's tests, not a subscriber.
 *
 * Precondition for rendering: the event's strings are NUL-terminated UTF-8
 * (true for anything that came through fb_wire or fb_event_from_json). A
 * field without a NUL is rendered as "?" instead of being over-read.
 */
#include "fb_redfish.h"

#include "fb_err.h"

#include <string.h>

/* ---- the messages we emit, copied from the registries ---------------- */

/* How MessageArgs are built from the event. */
enum args_shape {
	ARGS_NONE,          /* no args */
	ARGS_SWITCH,        /* switch */
	ARGS_SW_PORT,       /* switch, port */
	ARGS_SW_PORT_FLAP,  /* switch, port, flap count, window minutes */
	ARGS_NIC,           /* adapter, port, function */
	ARGS_NIC_FLAP,      /* adapter, port, function, flap count, window minutes */
	ARGS_ERR_THRESHOLD, /* counter property, threshold */
	ARGS_XMIT_WAIT,     /* "PortXmitWait", threshold */
	ARGS_STATE,         /* resource, Resource.State value */
	ARGS_ACTION,        /* adapter (agent id), action text, resource */
};

struct msg {
	const char *id;   /* MessageId: Prefix.Major.Minor.Key */
	const char *tmpl; /* registry Message with %1..%n */
	uint8_t sev;      /* registry MessageSeverity */
	uint8_t shape;    /* enum args_shape */
};

enum msg_idx {
	M_ISL_UP, M_ISL_DOWN, M_ISL_DEG, M_ISL_FLAP,
	M_DS_UP, M_DS_DOWN, M_DS_DEG, M_DS_FLAP,
	M_US_UP, M_US_DOWN, M_US_DEG, M_US_FLAP,
	M_PORT_OK, M_PORT_FAILED, M_PORT_DEG,
	M_ND_UP, M_ND_DOWN, M_ND_DEG, M_ND_FLAP,
	M_SW_FAILED, M_SW_OK,
	M_ERR_EXC, M_ERR_CLR, M_WARN_EXC, M_WARN_CLR,
	M_STATE, M_CREATED, M_CHANGED, M_TEST,
	M_OEM_ACTION, M_OEM_PORT_FLAP, M_OEM_MISSED,
	M__END
};

#define OK_ FB_SEV_OK
#define WARN_ FB_SEV_WARNING
#define CRIT_ FB_SEV_CRITICAL

static const struct msg msgs[M__END] = {
	[M_ISL_UP] = { "Fabric.1.0.InterswitchLinkEstablished",
		"Switch '%1' interswitch link is established on port '%2'.", OK_, ARGS_SW_PORT },
	[M_ISL_DOWN] = { "Fabric.1.0.InterswitchLinkDropped",
		"Switch '%1' interswitch link has gone down on port '%2'.", WARN_, ARGS_SW_PORT },
	[M_ISL_DEG] = { "Fabric.1.0.DegradedInterswitchLinkEstablished",
		"Switch '%1' interswitch link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT },
	[M_ISL_FLAP] = { "Fabric.1.0.InterswitchLinkFlapDetected",
		"Switch '%1' interswitch link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP },
	[M_DS_UP] = { "Fabric.1.0.DownstreamLinkEstablished",
		"Switch '%1' downstream link is established on port '%2'.", OK_, ARGS_SW_PORT },
	[M_DS_DOWN] = { "Fabric.1.0.DownstreamLinkDropped",
		"Switch '%1' downstream link has gone down on port '%2'.", WARN_, ARGS_SW_PORT },
	[M_DS_DEG] = { "Fabric.1.0.DegradedDownstreamLinkEstablished",
		"Switch '%1' downstream link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT },
	[M_DS_FLAP] = { "Fabric.1.0.DownstreamLinkFlapDetected",
		"Switch '%1' downstream link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP },
	[M_US_UP] = { "Fabric.1.0.UpstreamLinkEstablished",
		"Switch '%1' upstream link is established on port '%2'.", OK_, ARGS_SW_PORT },
	[M_US_DOWN] = { "Fabric.1.0.UpstreamLinkDropped",
		"Switch '%1' upstream link has gone down on port '%2'.", WARN_, ARGS_SW_PORT },
	[M_US_DEG] = { "Fabric.1.0.DegradedUpstreamLinkEstablished",
		"Switch '%1' upstream link is established on port '%2', but is running in a degraded state.",
		WARN_, ARGS_SW_PORT },
	[M_US_FLAP] = { "Fabric.1.0.UpstreamLinkFlapDetected",
		"Switch '%1' upstream link on port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP },
	[M_PORT_OK] = { "Fabric.1.0.PortOK",
		"Switch '%1' port '%2' has returned to a functional state.", OK_, ARGS_SW_PORT },
	[M_PORT_FAILED] = { "Fabric.1.0.PortFailed",
		"Switch '%1' port '%2' has failed and is inoperative.", CRIT_, ARGS_SW_PORT },
	[M_PORT_DEG] = { "Fabric.1.0.PortDegraded",
		"Switch '%1' port '%2' is in a degraded state.", WARN_, ARGS_SW_PORT },
	[M_ND_UP] = { "NetworkDevice.1.1.ConnectionEstablished",
		"A network connection was established for network adapter '%1' port '%2' function '%3'.",
		OK_, ARGS_NIC },
	[M_ND_DOWN] = { "NetworkDevice.1.1.ConnectionDropped",
		"The connection is no longer active for network adapter '%1' port '%2' function '%3'.",
		OK_, ARGS_NIC },
	[M_ND_DEG] = { "NetworkDevice.1.1.DegradedConnectionEstablished",
		"A degraded network connection was established for network adapter '%1' port '%2' function '%3'.",
		WARN_, ARGS_NIC },
	[M_ND_FLAP] = { "NetworkDevice.1.1.LinkFlapDetected",
		"The network connection for network adapter '%1' port '%2' function '%3' was established and dropped '%4' times in the last '%5' minutes.",
		WARN_, ARGS_NIC_FLAP },
	[M_SW_FAILED] = { "Fabric.1.0.SwitchFailed",
		"Switch '%1' has failed and is inoperative.", CRIT_, ARGS_SWITCH },
	[M_SW_OK] = { "Fabric.1.0.SwitchOK",
		"Switch '%1' has returned to a functional state.", OK_, ARGS_SWITCH },
	[M_ERR_EXC] = { "ResourceEvent.1.4.ResourceErrorThresholdExceeded",
		"The resource property %1 has exceeded error threshold of value %2.", CRIT_,
		ARGS_ERR_THRESHOLD },
	[M_ERR_CLR] = { "ResourceEvent.1.4.ResourceErrorThresholdCleared",
		"The resource property %1 has cleared the error threshold of value %2.", OK_,
		ARGS_ERR_THRESHOLD },
	[M_WARN_EXC] = { "ResourceEvent.1.4.ResourceWarningThresholdExceeded",
		"The resource property %1 has exceeded its warning threshold of value %2.", WARN_,
		ARGS_XMIT_WAIT },
	[M_WARN_CLR] = { "ResourceEvent.1.4.ResourceWarningThresholdCleared",
		"The resource property %1 has cleared the warning threshold of value %2.", OK_,
		ARGS_XMIT_WAIT },
	[M_STATE] = { "ResourceEvent.1.4.ResourceStateChanged",
		"The state of resource '%1' has changed to %2.", OK_, ARGS_STATE },
	[M_CREATED] = { "ResourceEvent.1.4.ResourceCreated",
		"The resource was created successfully.", OK_, ARGS_NONE },
	[M_CHANGED] = { "ResourceEvent.1.4.ResourceChanged",
		"One or more resource properties have changed.", OK_, ARGS_NONE },
	[M_TEST] = { "ResourceEvent.1.4.TestMessage", "Test message.", OK_, ARGS_NONE },
	/* OEM: broker/redfish/registries/Fabricbus.1.0.0.json */
	[M_OEM_ACTION] = { "Fabricbus.1.0.AdapterActionTaken",
		"Adapter '%1' took action '%2' on resource '%3'.", OK_, ARGS_ACTION },
	[M_OEM_PORT_FLAP] = { "Fabricbus.1.0.PortFlapDetected",
		"Switch '%1' port '%2' was established and dropped %3 times in the last %4 minutes.",
		WARN_, ARGS_SW_PORT_FLAP },
	[M_OEM_MISSED] = { "Fabricbus.1.0.SubscriberEventsMissed",
		"%1 events were not delivered to this subscriber because it fell behind; reconnect with since=%2 to replay them from the journal.",
		WARN_, ARGS_NONE },
};

/* ---- the class table: (kind, link class, tech) -> message ------------- */

enum ev_type { ET_BY_SEV, ET_ADDED, ET_UPDATED, ET_OTHER };
static const char *const ev_type_names[] = {
	[ET_ADDED] = "ResourceAdded", [ET_UPDATED] = "ResourceUpdated", [ET_OTHER] = "Other",
};

#define ANY 0xff

struct row {
	uint8_t kind, cls, tech; /* key; cls/tech may be ANY */
	uint8_t msg;             /* enum msg_idx */
	uint8_t min_sev;         /* fabricbus floor above the registry severity */
	uint8_t etype;           /* enum ev_type */
};

/* First match wins, so specific rows go before ANY rows of the same kind.
 * Severity = max(registry, min_sev, the event's own). */
static const struct row rows[] = {
	{ FB_KIND_LINK_DOWN, FB_LINK_ISL, ANY, M_ISL_DOWN, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DOWN, FB_LINK_HOST, ANY, M_DS_DOWN, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DOWN, FB_LINK_UPLINK, ANY, M_US_DOWN, OK_, ET_BY_SEV },
	/* NetworkDevice rates a dropped connection OK; losing a node's fabric
	 * link is what a scheduler drains on, so it is at least a Warning. */
	{ FB_KIND_LINK_DOWN, FB_LINK_NODE, ANY, M_ND_DOWN, WARN_, ET_BY_SEV },
	{ FB_KIND_LINK_DOWN, ANY, ANY, M_PORT_FAILED, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_UP, FB_LINK_ISL, ANY, M_ISL_UP, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_UP, FB_LINK_HOST, ANY, M_DS_UP, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_UP, FB_LINK_UPLINK, ANY, M_US_UP, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_UP, FB_LINK_NODE, ANY, M_ND_UP, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_UP, ANY, ANY, M_PORT_OK, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_ISL, ANY, M_ISL_DEG, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_HOST, ANY, M_DS_DEG, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_UPLINK, ANY, M_US_DEG, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DEGRADED, FB_LINK_NODE, ANY, M_ND_DEG, OK_, ET_BY_SEV },
	{ FB_KIND_LINK_DEGRADED, ANY, ANY, M_PORT_DEG, OK_, ET_BY_SEV },
	{ FB_KIND_FLAP, FB_LINK_ISL, ANY, M_ISL_FLAP, OK_, ET_BY_SEV },
	{ FB_KIND_FLAP, FB_LINK_HOST, ANY, M_DS_FLAP, OK_, ET_BY_SEV },
	{ FB_KIND_FLAP, FB_LINK_UPLINK, ANY, M_US_FLAP, OK_, ET_BY_SEV },
	{ FB_KIND_FLAP, FB_LINK_NODE, ANY, M_ND_FLAP, OK_, ET_BY_SEV },
	/* Fabric has no flap message for a port of unknown role. */
	{ FB_KIND_FLAP, ANY, ANY, M_OEM_PORT_FLAP, OK_, ET_BY_SEV },
	{ FB_KIND_COUNTER_THRESHOLD, ANY, ANY, M_ERR_EXC, OK_, ET_BY_SEV },
	{ FB_KIND_COUNTER_CLEARED, ANY, ANY, M_ERR_CLR, OK_, ET_BY_SEV },
	{ FB_KIND_CONGESTION, ANY, ANY, M_WARN_EXC, OK_, ET_BY_SEV },
	{ FB_KIND_CONGESTION_CLEARED, ANY, ANY, M_WARN_CLR, OK_, ET_BY_SEV },
	{ FB_KIND_SWITCH_UNREACHABLE, ANY, ANY, M_SW_FAILED, OK_, ET_BY_SEV },
	{ FB_KIND_SWITCH_REACHABLE, ANY, ANY, M_SW_OK, OK_, ET_BY_SEV },
	{ FB_KIND_PORT_STATE, ANY, ANY, M_STATE, OK_, ET_BY_SEV },
	{ FB_KIND_INVENTORY, ANY, ANY, M_CREATED, OK_, ET_ADDED },
	{ FB_KIND_TOPOLOGY, ANY, ANY, M_CHANGED, OK_, ET_UPDATED },
	{ FB_KIND_TEST, ANY, ANY, M_TEST, OK_, ET_OTHER },
	/* Reads better than ResourceStatusChanged*: a drain is not a health. */
	{ FB_KIND_ACTION, ANY, ANY, M_OEM_ACTION, OK_, ET_BY_SEV },
};

/* Unknown kinds: "something changed", at the event's own severity. */
static const struct row fallback = { 0, ANY, ANY, M_CHANGED, OK_, ET_OTHER };

static const struct row *lookup(const struct fb_event *ev)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		if (r->kind == ev->kind && (r->cls == ANY || r->cls == ev->link_class) &&
		    (r->tech == ANY || r->tech == ev->tech))
			return r;
	}
	return &fallback;
}

static uint8_t max_u8(uint8_t a, uint8_t b) { return a > b ? a : b; }

static void classify_row(const struct fb_event *ev, const struct row *r,
			 struct fb_redfish_class *out)
{
	const struct msg *m = &msgs[r->msg];
	uint8_t ev_sev = ev->severity < FB_SEV__END ? ev->severity : FB_SEV_CRITICAL;
	out->message_id = m->id;
	out->severity = max_u8(max_u8(m->sev, r->min_sev), ev_sev);
	if (r->etype != ET_BY_SEV)
		out->event_type = ev_type_names[r->etype];
	else
		out->event_type = out->severity >= FB_SEV_WARNING ? "Alert" : "StatusChange";
}

void fb_redfish_classify(const struct fb_event *ev, struct fb_redfish_class *out)
{
	classify_row(ev, lookup(ev), out);
}

/* ---- small bounded text helpers (no snprintf on the hot path) ---------- */

static const char hexdig[] = "0123456789abcdef";

/* A string field of a fixed-size array, or "?" if it lacks its NUL. */
#define FLD(a) (memchr((a), 0, sizeof(a)) ? (const char *)(a) : "?")

/* "0x" and 16 lower-case hex digits, NUL-terminated; out has 19 bytes. */
static void fmt_guid(char *out, uint64_t v)
{
	out[0] = '0';
	out[1] = 'x';
	for (int i = 0; i < 16; i++)
		out[2 + i] = hexdig[(v >> (60 - 4 * i)) & 15];
	out[18] = '\0';
}

/* Decimal, NUL-terminated; out has at least 21 bytes. */
static void fmt_u64(char *out, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	out[n] = '\0';
}

/* A bounded string builder: err is set once anything did not fit. */
struct sb {
	char *p;
	size_t len, cap; /* cap includes the NUL */
	int err;
};

static void sb_init(struct sb *s, char *p, size_t cap)
{
	s->p = p;
	s->len = 0;
	s->cap = cap;
	s->err = cap == 0;
	if (cap)
		p[0] = '\0';
}

static void sb_putn(struct sb *s, const char *str, size_t n)
{
	if (s->err || n >= s->cap - s->len) {
		s->err = 1;
		return;
	}
	memcpy(s->p + s->len, str, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void sb_puts(struct sb *s, const char *str) { sb_putn(s, str, strlen(str)); }

static void sb_putu(struct sb *s, uint64_t v)
{
	char tmp[24];
	fmt_u64(tmp, v);
	sb_puts(s, tmp);
}

/* One path segment, percent-encoding every byte outside RFC 3986's
 * unreserved set, so names with '/', '?', '%' or spaces stay one segment. */
static void sb_seg(struct sb *s, const char *seg)
{
	for (const uint8_t *c = (const uint8_t *)seg; *c && !s->err; c++) {
		uint8_t ch = *c;
		if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		    ch == '.' || ch == '_' || ch == '~' || ch == '-') {
			sb_putn(s, (const char *)c, 1);
		} else {
			char e[3] = { '%', "0123456789ABCDEF"[ch >> 4], "0123456789ABCDEF"[ch & 15] };
			sb_putn(s, e, 3);
		}
	}
}

/* ---- naming the subject ------------------------------------------------ */

/* The switch's Redfish Id: its name, else its GUID, else (Ethernet) its
 * address. NULL when the event names no switch. */
static const char *switch_id(const struct fb_event *ev, char guid[19])
{
	const char *name = FLD(ev->subj.switch_name);
	if (name[0])
		return name;
	if (ev->subj.switch_guid) {
		fmt_guid(guid, ev->subj.switch_guid);
		return guid;
	}
	const char *addr = FLD(ev->subj.addr);
	if (ev->tech == FB_TECH_ETH && addr[0] && ev->link_class != FB_LINK_NODE)
		return addr;
	return NULL;
}

/* The port's Redfish Id: the ifIndex on Ethernet, else the port number.
 * NULL when unknown (port 0 means "not known" in the event model). */
static const char *port_id(const struct fb_event *ev, char num[24])
{
	if (ev->tech == FB_TECH_ETH && ev->subj.ifindex) {
		fmt_u64(num, ev->subj.ifindex);
		return num;
	}
	if (ev->subj.port) {
		fmt_u64(num, ev->subj.port);
		return num;
	}
	return NULL;
}

static int is_switch_kind(unsigned kind)
{
	return kind == FB_KIND_SWITCH_UNREACHABLE || kind == FB_KIND_SWITCH_REACHABLE;
}

/* Node-side events point at the node's interface, not at a switch. */
static int is_node_side(const struct fb_event *ev)
{
	return ev->link_class == FB_LINK_NODE || ev->kind == FB_KIND_INVENTORY;
}

/* An adapter's action (a drain) is about the node even when the event
 * also names the switch port that caused it. */
static int prefers_node(const struct fb_event *ev)
{
	return is_node_side(ev) || ev->kind == FB_KIND_ACTION;
}

int fb_redfish_origin(const struct fb_event *ev, const char *default_fabric, char *out, size_t outsz)
{
	char guid[19], num[24];
	const char *sw = switch_id(ev, guid);
	const char *port = port_id(ev, num);
	const char *node = FLD(ev->subj.node);
	const char *dev = FLD(ev->subj.device);
	const char *fabric = FLD(ev->subj.fabric);
	if (!fabric[0])
		fabric = default_fabric && default_fabric[0] ? default_fabric : FB_REDFISH_DEFAULT_FABRIC;

	struct sb s;
	sb_init(&s, out, outsz);
	if (!is_switch_kind(ev->kind) && node[0] && (prefers_node(ev) || !sw)) {
		sb_puts(&s, "/redfish/v1/Systems/");
		sb_seg(&s, node);
		if (dev[0] && is_node_side(ev)) {
			sb_puts(&s, "/NetworkInterfaces/");
			sb_seg(&s, dev);
		}
	} else {
		sb_puts(&s, "/redfish/v1/Fabrics/");
		sb_seg(&s, fabric);
		if (sw) {
			sb_puts(&s, "/Switches/");
			sb_seg(&s, sw);
			if (port && !is_switch_kind(ev->kind)) {
				sb_puts(&s, "/Ports/");
				sb_seg(&s, port);
			}
		}
	}
	if (s.err) {
		if (outsz)
			out[0] = '\0';
		return FB_ETOOBIG;
	}
	return (int)s.len;
}

/* ---- MessageArgs -------------------------------------------------------- */

#define ARG_MAX 5
#define ARG_SZ 192

struct args {
	unsigned n;
	char v[ARG_MAX][ARG_SZ];
};

static struct sb arg_next(struct args *a)
{
	struct sb s;
	sb_init(&s, a->v[a->n++], ARG_SZ); /* overlong args are cut, never overrun */
	return s;
}

static void arg_str(struct args *a, const char *v)
{
	struct sb s = arg_next(a);
	sb_puts(&s, v && v[0] ? v : "unknown");
}

static void arg_u64(struct args *a, uint64_t v)
{
	struct sb s = arg_next(a);
	sb_putu(&s, v);
}

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
};

/* The counter that crossed: the first one the event carries with a
 * property name (agents put it first; the meta counters have none). */
static const char *threshold_property(const struct fb_event *ev)
{
	for (unsigned i = 0; i < ev->n_counters && i < FB_COUNTERS_MAX; i++) {
		unsigned id = ev->counters[i].id;
		if (id < FB_CTR__END && ctr_prop[id])
			return ctr_prop[id];
	}
	return "ErrorCounters";
}

/* A Resource.State enumeration value for the port's state. */
static const char *port_state_name(const struct fb_event *ev)
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

/* A readable name for the resource, for ResourceStateChanged and actions. */
static void resource_label(const struct fb_event *ev, struct sb *s)
{
	char guid[19], num[24];
	const char *sw = switch_id(ev, guid);
	const char *port = port_id(ev, num);
	const char *node = FLD(ev->subj.node), *dev = FLD(ev->subj.device);
	if (node[0] && (prefers_node(ev) || !sw)) {
		sb_puts(s, node);
		if (dev[0]) {
			sb_puts(s, " ");
			sb_puts(s, dev);
		}
		if (!is_node_side(ev))
			port = NULL; /* the port number is the switch's, not the node's */
	} else if (sw) {
		sb_puts(s, sw);
	} else {
		sb_puts(s, "fabric ");
		sb_puts(s, FLD(ev->subj.fabric)[0] ? FLD(ev->subj.fabric) : FB_REDFISH_DEFAULT_FABRIC);
		return;
	}
	if (port) {
		sb_puts(s, " port ");
		sb_puts(s, port);
	}
}

static void build_args(const struct fb_event *ev, unsigned shape, struct args *a)
{
	char guid[19], num[24];
	a->n = 0;
	switch (shape) {
	case ARGS_SWITCH:
		arg_str(a, switch_id(ev, guid));
		break;
	case ARGS_SW_PORT:
	case ARGS_SW_PORT_FLAP:
		arg_str(a, switch_id(ev, guid));
		arg_str(a, port_id(ev, num));
		break;
	case ARGS_NIC:
	case ARGS_NIC_FLAP: {
		/* adapter "node:device"; fabricbus does not track PCI functions,
		 * and an mlx5_N / netdev is one function: "0". */
		const char *node = FLD(ev->subj.node), *dev = FLD(ev->subj.device);
		struct sb s = arg_next(a);
		sb_puts(&s, node);
		if (node[0] && dev[0])
			sb_puts(&s, ":");
		sb_puts(&s, dev);
		if (!s.len)
			sb_puts(&s, "unknown");
		arg_str(a, port_id(ev, num));
		arg_str(a, "0");
		break;
	}
	case ARGS_ERR_THRESHOLD:
		arg_str(a, threshold_property(ev));
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_XMIT_WAIT:
		arg_str(a, "PortXmitWait");
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_STATE: {
		struct sb s = arg_next(a);
		resource_label(ev, &s);
		arg_str(a, port_state_name(ev));
		break;
	}
	case ARGS_ACTION: {
		arg_str(a, FLD(ev->agent_id));
		arg_str(a, FLD(ev->text)[0] ? FLD(ev->text) : "unspecified");
		struct sb s = arg_next(a);
		resource_label(ev, &s);
		break;
	}
	}
	if (shape == ARGS_SW_PORT_FLAP || shape == ARGS_NIC_FLAP) {
		uint64_t win_s = fb_event_counter(ev, FB_CTR_FLAP_WINDOW_S, 0);
		arg_u64(a, fb_event_counter(ev, FB_CTR_FLAP_COUNT, 0));
		arg_u64(a, win_s / 60 + (win_s % 60 != 0)); /* minutes, rounded up */
	}
}

/* The registry template with %1..%9 replaced by the args. */
static void fill_template(const char *t, const struct args *a, struct sb *s)
{
	while (*t) {
		const char *pct = strchr(t, '%');
		if (!pct) {
			sb_puts(s, t);
			return;
		}
		sb_putn(s, t, (size_t)(pct - t));
		unsigned k = (unsigned)(pct[1] - '1');
		if (pct[1] >= '1' && pct[1] <= '9' && k < a->n) {
			sb_puts(s, a->v[k]);
			t = pct + 2;
		} else {
			sb_putn(s, "%", 1);
			t = pct + 1;
		}
	}
}

/* ---- JSON writer with a sticky error ----------------------------------- */

struct jw {
	struct fb_buf *b;
	int err;
};

#define JW_LIT(w, lit) jw_put((w), (lit), sizeof(lit) - 1)

/* Inline fast path: most appends fit the capacity reserved up front, and
 * with a literal's constant length the memcpy becomes a few moves. */
static inline void jw_put(struct jw *w, const char *p, size_t n)
{
	struct fb_buf *b = w->b;
	if (!w->err && b->cap - b->len >= n) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
	} else if (!w->err) {
		w->err = fb_buf_put(b, p, n);
	}
}

static void jw_str(struct jw *w, const char *s)
{
	if (!w->err)
		w->err = fb_buf_put_json_str(w->b, s);
}

static void jw_uint(struct jw *w, uint64_t v)
{
	if (!w->err)
		w->err = fb_buf_put_uint(w->b, v);
}

/* "2026-11-22T09:52:21.123456Z": UTC, microseconds. Calendar from days
 * since the epoch with the proleptic-Gregorian era arithmetic (H. Hinnant's
 * civil_from_days), so no gmtime_r and no locale or TZ lookups. */
static void fmt_iso8601(char out[28], uint64_t ts_ns)
{
	uint64_t secs = ts_ns / 1000000000u;
	uint32_t usec = (uint32_t)(ts_ns % 1000000000u / 1000u);
	uint64_t days = secs / 86400u;
	uint32_t sod = (uint32_t)(secs % 86400u);

	uint64_t z = days + 719468u; /* days since 0000-03-01 */
	uint64_t era = z / 146097u;
	uint32_t doe = (uint32_t)(z - era * 146097u);                          /* [0, 146096] */
	uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* [0, 365] */
	uint32_t mp = (5 * doy + 2) / 153;                                    /* Mar = 0 */
	uint32_t day = doy - (153 * mp + 2) / 5 + 1;
	uint32_t mon = mp < 10 ? mp + 3 : mp - 9;
	uint64_t year = yoe + era * 400 + (mon <= 2);

	uint32_t y = (uint32_t)(year % 10000u); /* u64 ns ends in 2554 */
	uint32_t hh = sod / 3600, mm = sod / 60 % 60, ss = sod % 60;
	out[0] = (char)('0' + y / 1000);
	out[1] = (char)('0' + y / 100 % 10);
	out[2] = (char)('0' + y / 10 % 10);
	out[3] = (char)('0' + y % 10);
	out[4] = '-';
	out[5] = (char)('0' + mon / 10);
	out[6] = (char)('0' + mon % 10);
	out[7] = '-';
	out[8] = (char)('0' + day / 10);
	out[9] = (char)('0' + day % 10);
	out[10] = 'T';
	out[11] = (char)('0' + hh / 10);
	out[12] = (char)('0' + hh % 10);
	out[13] = ':';
	out[14] = (char)('0' + mm / 10);
	out[15] = (char)('0' + mm % 10);
	out[16] = ':';
	out[17] = (char)('0' + ss / 10);
	out[18] = (char)('0' + ss % 10);
	out[19] = '.';
	for (int i = 25; i >= 20; i--) {
		out[i] = (char)('0' + usec % 10);
		usec /= 10;
	}
	out[26] = 'Z';
	out[27] = '\0';
}

static void jw_message(struct jw *w, const struct msg *m, const struct args *a)
{
	char text[ARG_MAX * ARG_SZ + 256]; /* templates are < 256 B */
	struct sb s;
	sb_init(&s, text, sizeof(text));
	fill_template(m->tmpl, a, &s);
	JW_LIT(w, ",\"MessageId\":");
	jw_str(w, m->id);
	JW_LIT(w, ",\"Message\":");
	jw_str(w, text);
	JW_LIT(w, ",\"MessageArgs\":[");
	for (unsigned i = 0; i < a->n; i++) {
		if (i)
			JW_LIT(w, ",");
		jw_str(w, a->v[i]);
	}
	JW_LIT(w, "]");
}

static void jw_key_str(struct jw *w, const char *key_lit_comma, size_t n, const char *v)
{
	jw_put(w, key_lit_comma, n);
	jw_str(w, v);
}

#define KEY_STR(w, lit, v) jw_key_str((w), (lit), sizeof(lit) - 1, (v))
#define KEY_UINT(w, lit, v) (JW_LIT((w), lit), jw_uint((w), (v)))

static void jw_guid(struct jw *w, const char *key_lit, size_t n, uint64_t v)
{
	char g[19];
	fmt_guid(g, v);
	jw_key_str(w, key_lit, n, g);
}
#define KEY_GUID(w, lit, v) jw_guid((w), (lit), sizeof(lit) - 1, (v))

static const char *or_unknown(const char *s) { return s ? s : "unknown"; }

/* Oem.Fabricbus: everything the event carries that the record above does
 * not, so adapters never need the binary event. */
static void jw_oem(struct jw *w, const struct fb_event *ev)
{
	const struct fb_subject *sj = &ev->subj;
	KEY_STR(w, ",\"Oem\":{\"Fabricbus\":{\"AgentId\":", FLD(ev->agent_id));
	KEY_UINT(w, ",\"Sequence\":", ev->seq);
	KEY_STR(w, ",\"Kind\":", or_unknown(fb_kind_name(ev->kind)));
	KEY_STR(w, ",\"LinkClass\":", or_unknown(fb_link_class_name(ev->link_class)));
	KEY_STR(w, ",\"Technology\":", or_unknown(fb_tech_name(ev->tech)));
	if (FLD(sj->node)[0])
		KEY_STR(w, ",\"Node\":", FLD(sj->node));
	if (FLD(sj->device)[0])
		KEY_STR(w, ",\"Device\":", FLD(sj->device));
	if (FLD(sj->addr)[0])
		KEY_STR(w, ",\"Address\":", FLD(sj->addr));
	if (sj->ifindex)
		KEY_UINT(w, ",\"IfIndex\":", sj->ifindex);
	if (sj->switch_guid)
		KEY_GUID(w, ",\"SwitchGUID\":", sj->switch_guid);
	if (sj->port_guid)
		KEY_GUID(w, ",\"PortGUID\":", sj->port_guid);
	if (sj->lid)
		KEY_UINT(w, ",\"LID\":", sj->lid);
	if (sj->peer_guid)
		KEY_GUID(w, ",\"PeerGUID\":", sj->peer_guid);
	if (sj->peer_port)
		KEY_UINT(w, ",\"PeerPort\":", sj->peer_port);
	if (FLD(sj->peer_name)[0])
		KEY_STR(w, ",\"PeerName\":", FLD(sj->peer_name));
	if (ev->port_state)
		KEY_UINT(w, ",\"PortState\":", ev->port_state);
	if (ev->phys_state)
		KEY_UINT(w, ",\"PhysState\":", ev->phys_state);
	unsigned nc = ev->n_counters < FB_COUNTERS_MAX ? ev->n_counters : FB_COUNTERS_MAX;
	if (nc) {
		JW_LIT(w, ",\"Counters\":{");
		for (unsigned i = 0; i < nc; i++) {
			const char *name = fb_counter_name(ev->counters[i].id);
			char tmp[32];
			if (!name) { /* carried through: "counter_<id>" */
				memcpy(tmp, "counter_", 8);
				fmt_u64(tmp + 8, ev->counters[i].id);
				name = tmp;
			}
			if (i)
				JW_LIT(w, ",");
			jw_str(w, name);
			JW_LIT(w, ":");
			jw_uint(w, ev->counters[i].value);
		}
		JW_LIT(w, "}");
	}
	if (FLD(ev->text)[0])
		KEY_STR(w, ",\"Text\":", FLD(ev->text));
	JW_LIT(w, "}}");
}

int fb_redfish_render(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		      const char *default_fabric)
{
	const struct row *r = lookup(ev);
	const struct msg *m = &msgs[r->msg];
	struct fb_redfish_class cls;
	classify_row(ev, r, &cls);

	char id[24], ts[28], origin[FB_REDFISH_ORIGIN_MAX];
	fmt_u64(id, event_id);
	fmt_iso8601(ts, ev->ts_ns);
	if (fb_redfish_origin(ev, default_fabric, origin, sizeof(origin)) < 0)
		memcpy(origin, "/redfish/v1/Fabrics", sizeof("/redfish/v1/Fabrics")); /* unreachable: max fits */
	struct args a;
	build_args(ev, m->shape, &a);

	size_t start = out->len;
	struct jw w = { out, fb_buf_reserve(out, 1536) };
	KEY_STR(&w, "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":", id);
	JW_LIT(&w, ",\"Name\":\"Fabric Event\",\"Events@odata.count\":1,\"Events\":[{");
	KEY_STR(&w, "\"EventType\":", cls.event_type);
	KEY_STR(&w, ",\"EventId\":", id);
	KEY_STR(&w, ",\"EventTimestamp\":", ts);
	JW_LIT(&w, ",\"MemberId\":\"0\"");
	KEY_STR(&w, ",\"MessageSeverity\":", fb_severity_name(cls.severity));
	jw_message(&w, m, &a);
	KEY_STR(&w, ",\"OriginOfCondition\":{\"@odata.id\":", origin);
	JW_LIT(&w, "}");
	jw_oem(&w, ev);
	JW_LIT(&w, "}]}");
	if (w.err)
		out->len = start; /* never leave half a document */
	return w.err;
}

int fb_redfish_render_missed(struct fb_buf *out, uint64_t missed, uint64_t resume_since)
{
	const struct msg *m = &msgs[M_OEM_MISSED];
	struct args a = { 0 };
	arg_u64(&a, missed);
	arg_u64(&a, resume_since);

	size_t start = out->len;
	struct jw w = { out, 0 };
	JW_LIT(&w, "{\"@odata.type\":\"#Event.v1_13_0.Event\",\"Id\":\"missed-");
	jw_uint(&w, resume_since);
	JW_LIT(&w, "\",\"Name\":\"Fabric Event\",\"Events@odata.count\":1,\"Events\":[{");
	JW_LIT(&w, "\"EventType\":\"Other\",\"MemberId\":\"0\",\"MessageSeverity\":");
	jw_str(&w, fb_severity_name(m->sev));
	jw_message(&w, m, &a);
	JW_LIT(&w, ",\"OriginOfCondition\":{\"@odata.id\":\"/redfish/v1/EventService\"}");
	KEY_UINT(&w, ",\"Oem\":{\"Fabricbus\":{\"Missed\":", missed);
	KEY_UINT(&w, ",\"ResumeSince\":", resume_since);
	JW_LIT(&w, "}}}]}");
	if (w.err)
		out->len = start;
	return w.err;
}
