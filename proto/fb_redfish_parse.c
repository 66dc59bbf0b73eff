/* fb_redfish_parse.c - a rendered Redfish Event back into struct fb_event.
 *
 * The input is untrusted (anything on a Kafka topic or a WebSocket), so:
 * a size cap before jansson sees it, duplicate keys refused, every string
 * copied through fb_strlcpy_field and refused (never cut) when it does not
 * fit, every integer range-checked, and the event checked with
 * fb_event_check at the end. One table maps Oem.Fabricbus keys to event
 * fields, in the order fb_redfish.c writes them.
 */
#include "fb_redfish_parse.h"

#include "fb_buf.h"
#include "fb_json.h"
#include "fb_text.h"

#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#define OEM "Events[0].Oem.Fabricbus."
#define MISSED_PREFIX "Fabricbus.1."
#define MISSED_KEY ".SubscriberEventsMissed"
#define FABRICS_PREFIX "/redfish/v1/Fabrics/"

/* ---- Oem.Fabricbus --------------------------------------------------------- */

enum otype { O_STR, O_U8, O_U16, O_U32, O_U64, O_GUID, O_KIND, O_CLASS, O_TECH, O_COUNTERS, O_JOBS };

struct okey {
	const char *name;
	uint8_t type;
	uint8_t required; /* always rendered for an event */
	size_t off;
	size_t size;
};

#define EV(type, req, member) type, req, offsetof(struct fb_event, member), \
	sizeof(((struct fb_event *)0)->member)

static const struct okey oem_keys[] = {
	{ "AgentId", EV(O_STR, 1, agent_id) },
	{ "Sequence", EV(O_U64, 1, seq) },
	{ "Kind", EV(O_KIND, 1, kind) },
	{ "LinkClass", EV(O_CLASS, 1, link_class) },
	{ "Technology", EV(O_TECH, 1, tech) },
	{ "SwitchName", EV(O_STR, 0, subj.switch_name) },
	{ "Port", EV(O_U16, 0, subj.port) },
	{ "Node", EV(O_STR, 0, subj.node) },
	{ "Device", EV(O_STR, 0, subj.device) },
	{ "Address", EV(O_STR, 0, subj.addr) },
	{ "IfIndex", EV(O_U32, 0, subj.ifindex) },
	{ "SwitchGUID", EV(O_GUID, 0, subj.switch_guid) },
	{ "PortGUID", EV(O_GUID, 0, subj.port_guid) },
	{ "LID", EV(O_U16, 0, subj.lid) },
	{ "PeerGUID", EV(O_GUID, 0, subj.peer_guid) },
	{ "PeerPort", EV(O_U16, 0, subj.peer_port) },
	{ "PeerName", EV(O_STR, 0, subj.peer_name) },
	{ "PortState", EV(O_U8, 0, port_state) },
	{ "PhysState", EV(O_U8, 0, phys_state) },
	{ "Counters", EV(O_COUNTERS, 0, counters) },
	{ "Text", EV(O_STR, 0, text) },
	{ "Jobs", EV(O_JOBS, 0, jobs) },
};

static int parse_enum(unsigned type, const char *s)
{
	int v = type == O_KIND ? fb_kind_parse(s) : type == O_CLASS ? fb_link_class_parse(s) : fb_tech_parse(s);
	return type == O_KIND && v == 0 ? -1 : v;
}

static int parse_oem_key(const struct okey *k, const json_t *v, struct fb_event *ev, char *err, size_t errsz)
{
	uint8_t *dst = (uint8_t *)ev + k->off;
	uint64_t x;
	switch (k->type) {
	case O_STR: {
		int rc = fb_json_get_str(v, (char *)dst, k->size);
		if (rc == FB_JSON_ELONG)
			return fb_json_fail(err, errsz, OEM "%s: longer than %zu bytes", k->name,
					    k->size - 1);
		if (rc)
			return fb_json_fail(err, errsz, OEM "%s: must be a string without NUL", k->name);
		return 0;
	}
	case O_U8:
	case O_U16:
	case O_U32:
		if (fb_json_get_uint_field(v, dst, k->size))
			return fb_json_fail(err, errsz, OEM "%s: must be an integer 0..%" PRIu64, k->name,
					    fb_json_uint_max(k->size));
		return 0;
	case O_U64:
		if (fb_json_get_uint(v, UINT64_MAX, 1, &x))
			return fb_json_fail(err, errsz, OEM "%s: must be a non-negative integer", k->name);
		*(uint64_t *)(void *)dst = x;
		return 0;
	case O_GUID:
		if (!json_is_string(v) || fb_text_parse_guid(json_string_value(v), json_string_length(v), &x))
			return fb_json_fail(err, errsz, OEM "%s: must be \"0x\" and 1 to 16 hex digits",
					    k->name);
		*(uint64_t *)(void *)dst = x;
		return 0;
	case O_KIND:
	case O_CLASS:
	case O_TECH: {
		int e = json_is_string(v) ? parse_enum(k->type, json_string_value(v)) : -1;
		if (e < 0)
			return fb_json_fail(err, errsz,
					    OEM "%s: unknown value (see docs/event-model.md)", k->name);
		*dst = (uint8_t)e;
		return 0;
	}
	case O_COUNTERS:
		return fb_json_parse_counters(v, ev, OEM "Counters", err, errsz);
	case O_JOBS:
		return fb_json_parse_jobs(v, ev, OEM "Jobs", err, errsz);
	}
	return fb_json_fail(err, errsz, OEM "%s: unsupported", k->name);
}

static int parse_oem(const json_t *fb, struct fb_event *ev, char *err, size_t errsz)
{
	for (size_t i = 0; i < sizeof(oem_keys) / sizeof(oem_keys[0]); i++) {
		const struct okey *k = &oem_keys[i];
		json_t *v = json_object_get(fb, k->name);
		if (!v) {
			if (k->required)
				return fb_json_fail(err, errsz, OEM "%s: required", k->name);
			continue;
		}
		int rc = parse_oem_key(k, v, ev, err, errsz);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- the record ------------------------------------------------------------ */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The fabric of a /redfish/v1/Fabrics/{fabric}[/...] origin, percent-decoded
 * (the renderer encodes every byte outside [A-Za-z0-9._~-]). Other origins
 * name no fabric. */
static int fabric_of_origin(const char *origin, char *fabric, size_t fsz, char *err, size_t errsz)
{
	fabric[0] = '\0';
	if (strncmp(origin, FABRICS_PREFIX, sizeof(FABRICS_PREFIX) - 1) != 0)
		return 0;
	const char *p = origin + sizeof(FABRICS_PREFIX) - 1;
	size_t n = 0;
	for (; *p && *p != '/'; p++) {
		int c = (uint8_t)*p;
		if (c == '%') {
			int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
			if (lo < 0)
				return fb_json_fail(err, errsz,
						    "Events[0].OriginOfCondition: bad percent-encoding "
						    "in the fabric");
			c = hi << 4 | lo;
			p += 2;
		}
		if (n + 1 >= fsz)
			return fb_json_fail(err, errsz,
					    "Events[0].OriginOfCondition: fabric longer than %zu bytes",
					    fsz - 1);
		fabric[n++] = (char)c;
	}
	fabric[n] = '\0';
	if (n == 0 || !fb_utf8_valid((const uint8_t *)fabric, n)) {
		fabric[0] = '\0';
		return fb_json_fail(err, errsz,
				    "Events[0].OriginOfCondition: the fabric is empty, has a NUL or is not UTF-8");
	}
	return 0;
}

/* What a missed notice and an event share: the id, severity and origin. */
static int parse_common(const json_t *rec, struct fb_event *ev, struct fb_redfish_parsed *out, char *err,
			size_t errsz)
{
	int rc = fb_json_get_str(json_object_get(rec, "MessageId"), out->message_id, sizeof(out->message_id));
	if (rc == FB_JSON_ELONG)
		return fb_json_fail(err, errsz, "Events[0].MessageId: longer than %zu bytes",
				    sizeof(out->message_id) - 1);
	if (rc || !out->message_id[0])
		return fb_json_fail(err, errsz, "Events[0].MessageId: required, a non-empty string");

	const char *sev = json_string_value(json_object_get(rec, "MessageSeverity"));
	int s = sev ? fb_severity_parse(sev) : -1;
	if (s < 0)
		return fb_json_fail(err, errsz,
				    "Events[0].MessageSeverity: required, OK, Warning or Critical");
	ev->severity = (uint8_t)s;

	json_t *origin = json_object_get(rec, "OriginOfCondition");
	rc = fb_json_get_str(json_object_get(origin, "@odata.id"), out->origin, sizeof(out->origin));
	if (rc == FB_JSON_ELONG)
		return fb_json_fail(err, errsz, "Events[0].OriginOfCondition: longer than %zu bytes",
				    sizeof(out->origin) - 1);
	if (rc || !json_is_object(origin))
		return fb_json_fail(err, errsz,
				    "Events[0].OriginOfCondition: required, an object with an @odata.id string");
	return 0;
}

static int is_missed(const char *message_id)
{
	size_t n = strlen(message_id), k = sizeof(MISSED_KEY) - 1;
	return strncmp(message_id, MISSED_PREFIX, sizeof(MISSED_PREFIX) - 1) == 0 && n > k &&
	       strcmp(message_id + n - k, MISSED_KEY) == 0;
}

static int parse_missed(const json_t *fb, struct fb_redfish_parsed *out, char *err, size_t errsz)
{
	out->missed = 1;
	if (!json_is_object(fb))
		return fb_json_fail(err, errsz, "Events[0].Oem.Fabricbus: required, an object");
	if (fb_json_get_uint(json_object_get(fb, "Missed"), UINT64_MAX, 1, &out->missed_count))
		return fb_json_fail(err, errsz, OEM "Missed: required, a non-negative integer");
	if (fb_json_get_uint(json_object_get(fb, "ResumeSince"), UINT64_MAX, 1, &out->resume_since))
		return fb_json_fail(err, errsz, OEM "ResumeSince: required, a non-negative integer");
	return 0;
}

static int parse_event(const json_t *rec, const json_t *fb, struct fb_event *ev, struct fb_redfish_parsed *out,
		       char *err, size_t errsz)
{
	const json_t *id = json_object_get(rec, "EventId");
	if (!json_is_string(id) || fb_text_parse_u64(json_string_value(id), json_string_length(id), &out->event_id))
		return fb_json_fail(err, errsz, "Events[0].EventId: required, a string of decimal digits");
	const char *ts = json_string_value(json_object_get(rec, "EventTimestamp"));
	if (!ts || fb_text_parse_time(ts, &ev->ts_ns))
		return fb_json_fail(err, errsz,
				    "Events[0].EventTimestamp: required, RFC 3339 at or after 1970");
	if (!json_is_object(fb))
		return fb_json_fail(err, errsz, "Events[0].Oem.Fabricbus: required, an object");
	int rc = parse_oem(fb, ev, err, errsz);
	rc = rc ? rc : fabric_of_origin(out->origin, ev->subj.fabric, sizeof(ev->subj.fabric), err, errsz);
	if (rc)
		return rc;
	const char *why;
	if (fb_event_check(ev, &why))
		return fb_json_fail(err, errsz, "Events[0].Oem.Fabricbus: %s", why);
	return 0;
}

static int parse_doc(const json_t *root, struct fb_event *ev, struct fb_redfish_parsed *out, char *err,
		     size_t errsz)
{
	const char *type = json_string_value(json_object_get(root, "@odata.type"));
	if (!json_is_object(root) || !type || strncmp(type, "#Event.", 7) != 0)
		return fb_json_fail(err, errsz,
				    "@odata.type: not a Redfish Event document (#Event.v1_x_y.Event)");
	json_t *events = json_object_get(root, "Events");
	if (!json_is_array(events) || json_array_size(events) != 1)
		return fb_json_fail(err, errsz, "Events: must be an array of exactly one record");
	json_t *rec = json_array_get(events, 0);
	if (!json_is_object(rec))
		return fb_json_fail(err, errsz, "Events[0]: must be an object");
	int rc = parse_common(rec, ev, out, err, errsz);
	if (rc)
		return rc;
	json_t *fb = json_object_get(json_object_get(rec, "Oem"), "Fabricbus");
	if (is_missed(out->message_id))
		return parse_missed(fb, out, err, errsz);
	return parse_event(rec, fb, ev, out, err, errsz);
}

int fb_redfish_parse(const char *json, size_t len, struct fb_event *ev, struct fb_redfish_parsed *out,
		     char *err, size_t errsz)
{
	memset(ev, 0, sizeof(*ev));
	memset(out, 0, sizeof(*out));
	if (err && errsz)
		err[0] = '\0';
	int rc;
	if (len > FB_REDFISH_PARSE_MAX) {
		rc = fb_json_fail(err, errsz, "document: %zu bytes, more than the %u allowed", len,
				  FB_REDFISH_PARSE_MAX);
	} else {
		json_error_t je;
		json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
		if (!root) {
			rc = fb_json_fail(err, errsz, "document: not JSON: %s at byte %d", je.text,
					  je.position);
		} else {
			rc = parse_doc(root, ev, out, err, errsz);
			json_decref(root);
		}
	}
	if (rc) {
		memset(ev, 0, sizeof(*ev));
		memset(out, 0, sizeof(*out));
		/* One line for a log, whatever jansson or a key name held. */
		for (char *p = err; p && errsz && *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = ' ';
	}
	return rc;
}
