/* pmix_route.c - events to steps (pmix_route.h). */
#include "pmix_route.h"
#include "pmix_conf.h"

#include "fb_err.h"
#include "fb_hostlist.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static void copy_str(char *dst, size_t sz, json_t *v)
{
	snprintf(dst, sz, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* "2026-11-22T09:52:21.123456Z" -> seconds (fraction dropped); 0 if unparsable. */
static int64_t parse_ts(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	if (!s || sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			 &tm.tm_min, &tm.tm_sec) != 6)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (int64_t)timegm(&tm);
}

int fbp_event_parse(const char *json, size_t len, struct fbp_event *ev, char *err, size_t errsz)
{
	memset(ev, 0, sizeof(*ev));
	json_error_t je;
	json_t *doc = json_loadb(json, len, 0, &je);
	json_t *rec = json_array_get(json_object_get(doc, "Events"), 0);
	if (!json_is_object(rec)) {
		json_decref(doc);
		return fb_err_set(err, errsz, FB_EMALFORMED, "not a Redfish Event with Events[0]%s%s",
				  doc ? "" : ": ", doc ? "" : je.text);
	}
	const char *id = json_string_value(json_object_get(rec, "EventId"));
	if (id)
		ev->event_id = strtoull(id, NULL, 10);
	copy_str(ev->message, sizeof(ev->message), json_object_get(rec, "Message"));
	copy_str(ev->message_id, sizeof(ev->message_id), json_object_get(rec, "MessageId"));
	copy_str(ev->severity, sizeof(ev->severity), json_object_get(rec, "MessageSeverity"));
	copy_str(ev->origin, sizeof(ev->origin),
		 json_object_get(json_object_get(rec, "OriginOfCondition"), "@odata.id"));
	ev->timestamp = parse_ts(json_string_value(json_object_get(rec, "EventTimestamp")));
	ev->missed = strstr(ev->message_id, "SubscriberEventsMissed") != NULL;
	json_t *oem = json_object_get(json_object_get(rec, "Oem"), "Fabricbus");
	copy_str(ev->kind, sizeof(ev->kind), json_object_get(oem, "Kind"));
	copy_str(ev->link_class, sizeof(ev->link_class), json_object_get(oem, "LinkClass"));
	copy_str(ev->node, sizeof(ev->node), json_object_get(oem, "Node"));
	copy_str(ev->switch_guid, sizeof(ev->switch_guid), json_object_get(oem, "SwitchGUID"));
	copy_str(ev->switch_name, sizeof(ev->switch_name), json_object_get(oem, "SwitchName"));
	copy_str(ev->peer_guid, sizeof(ev->peer_guid), json_object_get(oem, "PeerGUID"));
	copy_str(ev->peer_name, sizeof(ev->peer_name), json_object_get(oem, "PeerName"));
	json_t *np = json_object_get(oem, "NoPath");
	ev->root_cause = json_is_string(np);
	copy_str(ev->no_path, sizeof(ev->no_path), np);
	size_t i;
	json_t *j;
	json_array_foreach(json_object_get(oem, "Jobs"), i, j) {
		if (ev->n_jobs < FBP_JOBS_MAX && json_is_string(j))
			copy_str(ev->jobs[ev->n_jobs++], sizeof(ev->jobs[0]), j);
	}
	json_decref(doc);
	return 0;
}

static int add_node(void *arg, const char *name, size_t len)
{
	struct fbp_view *v = arg;
	char (*grown)[64] = realloc(v->nodes, (v->n_nodes + 1) * sizeof(*v->nodes));
	if (!grown)
		return -ENOMEM;
	v->nodes = grown;
	snprintf(v->nodes[v->n_nodes++], sizeof(v->nodes[0]), "%.*s", (int)len, name);
	return 0;
}

int fbp_view_set_nodes(struct fbp_view *v, const char *hostlist, char *err, size_t errsz)
{
	free(v->nodes);
	v->nodes = NULL;
	v->n_nodes = 0;
	int rc = fb_hostlist_expand(hostlist, strlen(hostlist), 65536, add_node, v, NULL, err, errsz);
	if (rc == -ENOMEM)
		fb_err_set(err, errsz, rc, "out of memory expanding %s", hostlist);
	return rc;
}

int fbp_view_has_node(const struct fbp_view *v, const char *node)
{
	for (size_t i = 0; node[0] && i < v->n_nodes; i++)
		if (strcmp(v->nodes[i], node) == 0)
			return 1;
	return 0;
}

int fbp_view_set_map(struct fbp_view *v, const char *json, size_t len, char *err, size_t errsz)
{
	json_error_t je;
	json_t *doc = json_loadb(json, len, 0, &je);
	json_t *nodes = json_object_get(doc, "Nodes");
	if (!json_is_object(nodes)) {
		json_decref(doc);
		return fb_err_set(err, errsz, FB_EMALFORMED, "/fabric/map: no Nodes object");
	}
	free(v->cables);
	v->cables = NULL;
	v->n_cables = 0;
	int rc = 0;
	for (size_t k = 0; k < v->n_nodes && rc == 0; k++) {
		size_t i;
		json_t *p;
		json_array_foreach(json_object_get(json_object_get(nodes, v->nodes[k]), "Ports"), i, p) {
			struct fbp_cable *grown = realloc(v->cables, (v->n_cables + 1) * sizeof(*grown));
			if (!grown) {
				rc = fb_err_set(err, errsz, -ENOMEM, "out of memory reading /fabric/map");
				break;
			}
			v->cables = grown;
			struct fbp_cable *c = &v->cables[v->n_cables++];
			snprintf(c->node, sizeof(c->node), "%s", v->nodes[k]);
			copy_str(c->sw_guid, sizeof(c->sw_guid), json_object_get(p, "SwitchGUID"));
			copy_str(c->sw_name, sizeof(c->sw_name), json_object_get(p, "Switch"));
		}
	}
	json_decref(doc);
	return rc;
}

void fbp_view_free(struct fbp_view *v)
{
	free(v->nodes);
	free(v->cables);
	memset(v, 0, sizeof(*v));
}

static int same_switch(const struct fbp_cable *c, const char *guid, const char *name)
{
	return (guid[0] && c->sw_guid[0] && strcasecmp(c->sw_guid, guid) == 0) ||
	       (name[0] && c->sw_name[0] && strcmp(c->sw_name, name) == 0);
}

static void add_affected(struct fbp_note *n, const char *node)
{
	for (size_t i = 0; i < n->n_nodes; i++)
		if (strcmp(n->nodes[i], node) == 0)
			return;
	if (n->n_nodes < FBP_NODES_MAX)
		snprintf(n->nodes[n->n_nodes++], sizeof(n->nodes[0]), "%s", node);
}

/* The view's nodes cabled to the event's switch or its peer switch. A host
 * link's peer is a node, not a switch: only ISLs and uplinks look there. */
static void nodes_behind(const struct fbp_event *ev, const struct fbp_view *v, struct fbp_note *n)
{
	int peer_is_switch = strcmp(ev->link_class, "host") && strcmp(ev->link_class, "node");
	for (size_t i = 0; i < v->n_cables; i++)
		if (same_switch(&v->cables[i], ev->switch_guid, ev->switch_name) ||
		    (peer_is_switch && same_switch(&v->cables[i], ev->peer_guid, ev->peer_name)))
			add_affected(n, v->cables[i].node);
}

struct blast {
	const struct fbp_view *v;
	struct fbp_note *n;
};

static int add_if_ours(void *arg, const char *name, size_t len)
{
	struct blast *b = arg;
	(void)len;
	if (fbp_view_has_node(b->v, name))
		add_affected(b->n, name);
	return 0;
}

/* A root cause names the hosts left without a path (docs/topology.md,
 * "Blast radius"): exactly the job's nodes among them, not every node behind
 * the switch (a leaf that lost some uplinks still reaches the others). The
 * degraded hosts still have a path: not this job's emergency. A list the
 * broker had to cut (ListsCut) names fewer hosts, never others. */
static void nodes_without_path(const struct fbp_event *ev, const struct fbp_view *v,
			       struct fbp_note *n)
{
	struct blast b = { v, n };
	char err[128];
	if (ev->no_path[0] &&
	    fb_hostlist_expand(ev->no_path, strlen(ev->no_path), 65536, add_if_ours, &b, NULL, err,
			       sizeof(err)) < 0)
		n->n_nodes = 0; /* a list that does not parse names nobody */
}

int fbp_route(const struct fbp_event *ev, const struct fbp_view *v, unsigned kinds,
	      struct fbp_note *n)
{
	memset(n, 0, sizeof(*n));
	if (ev->missed || !(fbp_kind_bit(ev->kind) & kinds))
		return 0;
	if (ev->root_cause) {
		nodes_without_path(ev, v, n);
	} else if (ev->node[0]) {
		/* A node's own event: its job, and no other, whatever the switch. */
		if (fbp_view_has_node(v, ev->node))
			add_affected(n, ev->node);
	} else {
		nodes_behind(ev, v, n);
	}
	for (size_t i = 0; !n->n_nodes && v->job_id[0] && i < ev->n_jobs; i++)
		if (strcmp(ev->jobs[i], v->job_id) == 0 && ev->node[0])
			add_affected(n, ev->node);
	if (!n->n_nodes)
		return 0;
	n->event_id = ev->event_id;
	n->timestamp = ev->timestamp;
	snprintf(n->message, sizeof(n->message), "%s", ev->message);
	snprintf(n->message_id, sizeof(n->message_id), "%s", ev->message_id);
	snprintf(n->origin, sizeof(n->origin), "%s", ev->origin);
	snprintf(n->severity, sizeof(n->severity), "%s", ev->severity);
	snprintf(n->kind, sizeof(n->kind), "%s", ev->kind);
	return 1;
}
