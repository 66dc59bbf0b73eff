/* pmix_note.c - the step socket's JSON lines (pmix_note.h). */
#include "pmix_note.h"

#include "fb_err.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_str(char *dst, size_t sz, json_t *v)
{
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	snprintf(dst, sz, "%s", s);
}

static int dump(json_t *o, char **out)
{
	if (!o)
		return -ENOMEM;
	*out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return *out ? 0 : -ENOMEM;
}

int fbp_note_encode(const struct fbp_note *n, char **out)
{
	json_t *nodes = json_array();
	for (size_t i = 0; nodes && i < n->n_nodes; i++)
		json_array_append_new(nodes, json_string(n->nodes[i]));
	return dump(json_pack("{s:I,s:I,s:i,s:s,s:I,s:s,s:s,s:s,s:s,s:s,s:o*}",
			      "EventId", (json_int_t)n->event_id, "Position", (json_int_t)n->position,
			      "Code", n->code, "Range", n->range == FBP_RANGE_NODES ? "nodes" : "session",
			      "Timestamp", (json_int_t)n->timestamp, "Message", n->message,
			      "MessageId", n->message_id, "Origin", n->origin, "Severity", n->severity,
			      "Kind", n->kind, "Nodes", nodes), out);
}

static json_t *load(const char *line, size_t len, char *err, size_t errsz)
{
	json_error_t je;
	if (len > FBP_LINE_MAX) {
		fb_err_set(err, errsz, FB_ETOOBIG, "line of %zu bytes (at most %d)", len, FBP_LINE_MAX);
		return NULL;
	}
	json_t *o = json_loadb(line, len, 0, &je);
	if (!o || !json_is_object(o)) {
		fb_err_set(err, errsz, FB_EMALFORMED, "not a JSON object: %s", o ? "" : je.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

static int get_u64(json_t *o, const char *key, uint64_t *v)
{
	json_t *x = json_object_get(o, key);
	if (!x)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < 0)
		return -1;
	*v = (uint64_t)json_integer_value(x);
	return 1;
}

int fbp_note_decode(const char *line, size_t len, struct fbp_note *n, char *err, size_t errsz)
{
	memset(n, 0, sizeof(*n));
	json_t *o = load(line, len, err, errsz);
	if (!o)
		return FB_EMALFORMED;
	int rc = FB_EMALFORMED;
	if (get_u64(o, "Position", &n->position) < 0) {
		fb_err_set(err, errsz, rc, "Position: not an unsigned integer");
		goto out;
	}
	int have = get_u64(o, "EventId", &n->event_id);
	if (have <= 0) {
		rc = have == 0 ? 0 : FB_EMALFORMED; /* a bare mark, or a bad EventId */
		if (rc)
			fb_err_set(err, errsz, rc, "EventId: not an unsigned integer");
		goto out;
	}
	json_t *code = json_object_get(o, "Code"), *nodes = json_object_get(o, "Nodes");
	const char *range = json_string_value(json_object_get(o, "Range"));
	json_t *ts = json_object_get(o, "Timestamp");
	if (!json_is_integer(code) || json_integer_value(code) >= 0 ||
	    json_integer_value(code) < -1000000) {
		fb_err_set(err, errsz, rc, "Code: not a negative PMIx status");
		goto out;
	}
	if (!range || (strcmp(range, "session") && strcmp(range, "nodes"))) {
		fb_err_set(err, errsz, rc, "Range: not \"session\" or \"nodes\"");
		goto out;
	}
	if (nodes && (!json_is_array(nodes) || json_array_size(nodes) > FBP_NODES_MAX)) {
		fb_err_set(err, errsz, rc, "Nodes: not an array of at most %d names", FBP_NODES_MAX);
		goto out;
	}
	n->code = (int)json_integer_value(code);
	n->range = strcmp(range, "nodes") == 0 ? FBP_RANGE_NODES : FBP_RANGE_SESSION;
	n->timestamp = json_is_integer(ts) ? (int64_t)json_integer_value(ts) : 0;
	copy_str(n->message, sizeof(n->message), json_object_get(o, "Message"));
	copy_str(n->message_id, sizeof(n->message_id), json_object_get(o, "MessageId"));
	copy_str(n->origin, sizeof(n->origin), json_object_get(o, "Origin"));
	copy_str(n->severity, sizeof(n->severity), json_object_get(o, "Severity"));
	copy_str(n->kind, sizeof(n->kind), json_object_get(o, "Kind"));
	size_t i;
	json_t *v;
	json_array_foreach(nodes, i, v) {
		if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) >= 64) {
			fb_err_set(err, errsz, rc, "Nodes[%zu]: not a node name", i);
			goto out;
		}
		copy_str(n->nodes[n->n_nodes++], sizeof(n->nodes[0]), v);
	}
	rc = 1;
out:
	json_decref(o);
	return rc;
}

int fbp_hello_encode(const struct fbp_hello *h, char **out)
{
	return dump(json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:b}", "Fabricbus", FBP_PROTO,
			      "JobId", h->job_id, "StepId", h->step_id, "Node", h->node,
			      "StepNodes", h->step_nodes, "Namespace", h->nspace,
			      "Position", (json_int_t)h->position, "Pmix", h->pmix), out);
}

int fbp_hello_decode(const char *line, size_t len, struct fbp_hello *h, char *err, size_t errsz)
{
	memset(h, 0, sizeof(*h));
	json_t *o = load(line, len, err, errsz);
	if (!o)
		return FB_EMALFORMED;
	int rc = 0;
	const char *proto = json_string_value(json_object_get(o, "Fabricbus"));
	if (!proto || strcmp(proto, FBP_PROTO)) {
		rc = fb_err_set(err, errsz, FB_EMALFORMED, "not a %s hello", FBP_PROTO);
	} else if (get_u64(o, "Position", &h->position) < 0) {
		rc = fb_err_set(err, errsz, FB_EMALFORMED, "Position: not an unsigned integer");
	} else {
		copy_str(h->job_id, sizeof(h->job_id), json_object_get(o, "JobId"));
		copy_str(h->step_id, sizeof(h->step_id), json_object_get(o, "StepId"));
		copy_str(h->node, sizeof(h->node), json_object_get(o, "Node"));
		copy_str(h->nspace, sizeof(h->nspace), json_object_get(o, "Namespace"));
		copy_str(h->step_nodes, sizeof(h->step_nodes), json_object_get(o, "StepNodes"));
		h->pmix = json_is_true(json_object_get(o, "Pmix"));
	}
	json_decref(o);
	return rc;
}

void fbp_note_nodes_joined(const struct fbp_note *n, char *buf, size_t sz)
{
	size_t off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n->n_nodes && off < sz; i++) {
		int w = snprintf(buf + off, sz - off, "%s%s", i ? "," : "", n->nodes[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}
