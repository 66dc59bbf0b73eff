/* fb_redfish.c - fabric event -> DMTF Redfish Event (Event.v1_13_0).
 *
 * Two parts: the OriginOfCondition path and the renderer. Which message an
 * event becomes, and the registries' wording, are in fb_redfish_table.c.
 * The renderer runs once per event on the fan-out path, so it writes JSON
 * by hand into an fb_buf, formats numbers and timestamps itself and
 * allocates nothing but buffer growth.
 *
 * Precondition for rendering: the event's strings are NUL-terminated UTF-8
 * (true for anything that came through fb_wire or fb_event_from_json). A
 * field without a NUL is rendered as "?" instead of being over-read.
 */
#include "fb_redfish.h"

#include "fb_err.h"
#include "fb_redfish_table.h"

#include <string.h>

/* ---- small bounded text helpers (no snprintf on the hot path) ---------- */

static const char hexdig[] = "0123456789abcdef";

/* A string field of a fixed-size array, or "?" if it lacks its NUL. A NUL
 * in the last byte (the usual case) answers without a scan. */
#define FLD(a) ((a)[sizeof(a) - 1] == 0 || memchr((a), 0, sizeof(a)) ? (const char *)(a) : "?")

/* "0x" and 16 lower-case hex digits, NUL-terminated; out has 19 bytes. */
static void fmt_guid(char *out, uint64_t v)
{
	out[0] = '0';
	out[1] = 'x';
	for (int i = 0; i < 16; i++)
		out[2 + i] = hexdig[(v >> (60 - 4 * i)) & 15];
	out[18] = '\0';
}

/* Decimal, NUL-terminated; out has at least 21 bytes. Returns the length. */
static size_t fmt_u64(char *out, uint64_t v)
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
	return (size_t)n;
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

static int unreserved(uint8_t ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
	       ch == '.' || ch == '_' || ch == '~' || ch == '-';
}

/* One path segment, percent-encoding every byte outside RFC 3986's
 * unreserved set, so names with '/', '?', '%' or spaces stay one segment.
 * Runs of unreserved bytes (nearly every name) are copied whole. */
static void sb_seg(struct sb *s, const char *seg)
{
	const uint8_t *c = (const uint8_t *)seg;
	while (*c && !s->err) {
		size_t n = 0;
		while (c[n] && unreserved(c[n]))
			n++;
		sb_putn(s, (const char *)c, n);
		c += n;
		if (*c) {
			char e[3] = { '%', "0123456789ABCDEF"[*c >> 4], "0123456789ABCDEF"[*c & 15] };
			sb_putn(s, e, 3);
			c++;
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
	return kind == FB_KIND_SWITCH_UNREACHABLE || kind == FB_KIND_SWITCH_REACHABLE || fb_event_is_root_cause(kind);
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

/* A readable name for the resource, for ResourceStateChanged and actions. */
static void resource_label(const struct fb_event *ev, struct sb *s)
{
	char guid[19], num[24];
	const char *sw = switch_id(ev, guid);
	const char *port = port_id(ev, num);
	const char *node = FLD(ev->subj.node), *dev = FLD(ev->subj.device);
	if (node[0] && (prefers_node(ev) || !sw)) {
		sb_puts(s, node);
		/* An action is about the node (its origin is the ComputerSystem),
		 * not about one of its adapters. */
		if (dev[0] && ev->kind != FB_KIND_ACTION) {
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

static void build_args(const struct fb_event *ev, const struct fb_redfish_msg *m, struct args *a)
{
	char guid[19], num[24];
	unsigned shape = m->shape;
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
	case ARGS_FLAP_SUMMARY:
	case ARGS_FLAP_STABLE: {
		uint64_t sup = fb_event_counter(ev, FB_CTR_SUPPRESSED, 0);
		uint64_t secs = fb_event_counter(ev, FB_CTR_INTERVAL_MS, 0) / 1000;
		arg_str(a, switch_id(ev, guid));
		arg_str(a, port_id(ev, num));
		arg_u64(a, shape == ARGS_FLAP_SUMMARY ? sup : secs);
		arg_u64(a, shape == ARGS_FLAP_SUMMARY ? secs : sup);
		break;
	}
	case ARGS_SUPPRESSED: {
		arg_u64(a, fb_event_counter(ev, FB_CTR_SUPPRESSED, 0));
		struct sb s = arg_next(a);
		if (FLD(ev->text)[0])
			sb_puts(&s, FLD(ev->text));
		else
			resource_label(ev, &s);
		arg_u64(a, fb_event_counter(ev, FB_CTR_INTERVAL_MS, 0) / 1000);
		arg_u64(a, fb_event_counter(ev, FB_CTR_FIRST_SUPPRESSED_ID, 0));
		arg_u64(a, fb_event_counter(ev, FB_CTR_LAST_SUPPRESSED_ID, 0));
		break;
	}
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
		arg_str(a, fb_redfish_table_threshold_property(ev));
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_XMIT_WAIT:
		arg_str(a, "PortXmitWait");
		arg_u64(a, fb_event_counter(ev, FB_CTR_THRESHOLD, 0));
		break;
	case ARGS_STATE: {
		struct sb s = arg_next(a);
		resource_label(ev, &s);
		arg_str(a, fb_redfish_table_port_state(ev));
		break;
	}
	case ARGS_HEALTH: {
		struct sb s = arg_next(a);
		resource_label(ev, &s);
		/* Resource.Health has the same three values as MessageSeverity,
		 * and the message was picked by it. */
		arg_str(a, fb_severity_name(m->sev));
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

static inline void jw_str(struct jw *w, const char *s)
{
	if (!w->err)
		w->err = fb_buf_put_json_str(w->b, s);
}

static void jw_uint(struct jw *w, uint64_t v)
{
	struct fb_buf *b = w->b;
	if (!w->err && b->cap - b->len >= 20) { /* UINT64_MAX has 20 digits */
		char tmp[21];
		size_t n = fmt_u64(tmp, v);
		memcpy(b->data + b->len, tmp, n);
		b->len += n;
	} else if (!w->err) {
		w->err = fb_buf_put_uint(b, v);
	}
}

/* A u64 for JSON readers with signed 64-bit integers (jansson, and so
 * fb_redfish_parse): above INT64_MAX it is a decimal string, the form
 * fb_event_json uses too. */
static void jw_u64(struct jw *w, uint64_t v)
{
	if (v <= INT64_MAX) {
		jw_uint(w, v);
		return;
	}
	JW_LIT(w, "\"");
	jw_uint(w, v);
	JW_LIT(w, "\"");
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

static void jw_message(struct jw *w, const struct fb_redfish_msg *m, const struct args *a)
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

static inline void jw_key_str(struct jw *w, const char *key_lit_comma, size_t n, const char *v)
{
	jw_put(w, key_lit_comma, n);
	jw_str(w, v);
}

#define KEY_STR(w, lit, v) jw_key_str((w), (lit), sizeof(lit) - 1, (v))
#define KEY_UINT(w, lit, v) (JW_LIT((w), lit), jw_uint((w), (v)))
#define KEY_U64(w, lit, v) (JW_LIT((w), lit), jw_u64((w), (v)))

static void jw_guid(struct jw *w, const char *key_lit, size_t n, uint64_t v)
{
	char g[19];
	fmt_guid(g, v);
	jw_key_str(w, key_lit, n, g);
}
#define KEY_GUID(w, lit, v) jw_guid((w), (lit), sizeof(lit) - 1, (v))

static const char *or_unknown(const char *s) { return s ? s : "unknown"; }

/* "Jobs":["123","124"] from "123,124": one string per job id, as in the
 * JSON form, so no reader has to split. */
static void jw_jobs(struct jw *w, const char *jobs)
{
	JW_LIT(w, ",\"Jobs\":[");
	for (const char *p = jobs; *p;) {
		size_t n = strcspn(p, ",");
		char id[FB_JOBS_MAX];
		memcpy(id, p, n); /* n < FB_JOBS_MAX: p lies within one NUL-terminated field */
		id[n] = '\0';
		if (p != jobs)
			JW_LIT(w, ",");
		jw_str(w, id);
		p += n + (p[n] == ',');
	}
	JW_LIT(w, "]");
}

/* A root cause's lists under their own names (the fields that store them
 * are rendered above as well, so fb_redfish_parse reads the event back):
 * "NoPath" and "Degraded" hostlists, "Symptoms" EventId ranges. */
static void jw_root_cause(struct jw *w, const struct fb_event *ev)
{
	if (ev->kind == FB_KIND_SWITCH_RECOVERED)
		return;
	KEY_STR(w, ",\"NoPath\":", FLD(ev->text));
	KEY_STR(w, ",\"Degraded\":", FLD(ev->subj.peer_name));
	KEY_STR(w, ",\"Symptoms\":", FLD(ev->subj.device));
	if (fb_event_counter(ev, FB_CTR_LISTS_CUT, 0))
		JW_LIT(w, ",\"ListsCut\":true");
}

/* Oem.Fabricbus: everything the event carries that the record above does
 * not, so adapters never need the binary event. */
static void jw_oem(struct jw *w, const struct fb_event *ev)
{
	const struct fb_subject *sj = &ev->subj;
	KEY_STR(w, ",\"Oem\":{\"Fabricbus\":{\"AgentId\":", FLD(ev->agent_id));
	KEY_U64(w, ",\"Sequence\":", ev->seq);
	KEY_STR(w, ",\"Kind\":", or_unknown(fb_kind_name(ev->kind)));
	KEY_STR(w, ",\"LinkClass\":", or_unknown(fb_link_class_name(ev->link_class)));
	KEY_STR(w, ",\"Technology\":", or_unknown(fb_tech_name(ev->tech)));
	if (FLD(sj->switch_name)[0])
		KEY_STR(w, ",\"SwitchName\":", FLD(sj->switch_name));
	if (sj->port)
		KEY_UINT(w, ",\"Port\":", sj->port);
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
			jw_u64(w, ev->counters[i].value);
		}
		JW_LIT(w, "}");
	}
	if (fb_event_counter(ev, FB_CTR_RESYNC, 0))
		JW_LIT(w, ",\"Resync\":true"); /* found at an agent's resync (PROTOCOL.md) */
	unsigned quiet = fb_event_quiet(ev);
	if (quiet) { /* skipped by default subscriptions: why (PROTOCOL.md, "Quiet events") */
		const char *qn = fb_quiet_name(quiet);
		JW_LIT(w, ",\"Quiet\":");
		if (qn)
			jw_str(w, qn);
		else
			jw_u64(w, quiet);
	}
	if (ev->kind == FB_KIND_EVENTS_SUPPRESSED && fb_event_counter(ev, FB_CTR_LIMIT_LIFTED, 0))
		JW_LIT(w, ",\"LimitLifted\":true");
	if (FLD(ev->text)[0])
		KEY_STR(w, ",\"Text\":", FLD(ev->text));
	if (FLD(ev->jobs)[0])
		jw_jobs(w, FLD(ev->jobs));
	if (fb_event_is_root_cause(ev->kind))
		jw_root_cause(w, ev);
	JW_LIT(w, "}}");
}

int fb_redfish_render(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
		      const char *default_fabric)
{
	struct fb_redfish_facts f;
	return fb_redfish_render_facts(out, ev, event_id, default_fabric, &f);
}

int fb_redfish_render_facts(struct fb_buf *out, const struct fb_event *ev, uint64_t event_id,
			    const char *default_fabric, struct fb_redfish_facts *f)
{
	struct fb_redfish_class cls;
	const struct fb_redfish_msg *m = fb_redfish_table_classify(ev, &cls);
	f->cls = cls;

	char id[24], ts[28];
	fmt_u64(id, event_id);
	fmt_iso8601(ts, ev->ts_ns);
	f->origin_len = fb_redfish_origin(ev, default_fabric, f->origin, sizeof(f->origin));
	const char *origin = f->origin_len < 0 ? "/redfish/v1/Fabrics" : f->origin; /* unreachable: max fits */
	struct args a;
	build_args(ev, m, &a);

	size_t start = out->len;
	/* Room for a typical document with every string on the one-pass path
	 * of fb_buf_put_json_str; a longer one grows as it goes. */
	struct jw w = { out, fb_buf_reserve(out, 1024 + FB_BUF_JSON_STR_ROOM) };
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
	uint64_t group = fb_event_counter(ev, FB_CTR_EVENT_GROUP_ID, 0);
	if (group && group <= INT64_MAX)
		KEY_UINT(&w, ",\"EventGroupId\":", group);
	jw_oem(&w, ev);
	JW_LIT(&w, "}]}");
	if (w.err)
		out->len = start; /* never leave half a document */
	return w.err;
}

int fb_redfish_render_missed(struct fb_buf *out, uint64_t missed, uint64_t resume_since)
{
	const struct fb_redfish_msg *m = fb_redfish_table_missed();
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
	KEY_U64(&w, ",\"Oem\":{\"Fabricbus\":{\"Missed\":", missed);
	KEY_U64(&w, ",\"ResumeSince\":", resume_since);
	JW_LIT(&w, "}}}]}");
	if (w.err)
		out->len = start;
	return w.err;
}
