/* slurm_state.c - the state file: JSON in and out, written atomically. */
#include "slurm_state.h"

#include "fb_file.h"

#include "fb_err.h"
#include "fb_text.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_MAX_BYTES (256u << 20) /* a larger file is not ours */

static const char *const hold_names[] = { "none", "draining", "drained", "undraining" };

void fbs_state_init(struct fbs_state *s)
{
	memset(s, 0, sizeof(*s));
	s->next_batch_id = 1;
}

void fbs_state_free(struct fbs_state *s)
{
	for (size_t i = 0; i < s->n_pending; i++)
		fbs_batch_free(&s->pending[i]);
	free(s->pending);
	s->pending = NULL;
	s->n_pending = 0;
	free(s->koffs);
	s->koffs = NULL;
	s->n_koffs = 0;
}

struct fbs_koff *fbs_state_koff(struct fbs_state *s, const char *topic, int32_t partition,
				int create)
{
	for (size_t i = 0; i < s->n_koffs; i++)
		if (s->koffs[i].partition == partition && strcmp(s->koffs[i].topic, topic) == 0)
			return &s->koffs[i];
	if (!create || strlen(topic) >= FBS_KTOPIC_MAX)
		return NULL;
	struct fbs_koff *nk = realloc(s->koffs, (s->n_koffs + 1) * sizeof(*nk));
	if (!nk)
		return NULL;
	s->koffs = nk;
	struct fbs_koff *k = &nk[s->n_koffs++];
	memset(k, 0, sizeof(*k));
	strcpy(k->topic, topic);
	k->partition = partition;
	k->offset = -1;
	return k;
}

int fbs_state_push(struct fbs_state *s, struct fbs_batch *b)
{
	struct fbs_batch *np = realloc(s->pending, (s->n_pending + 1) * sizeof(*np));
	if (!np)
		return -ENOMEM;
	s->pending = np;
	struct fbs_batch *c = &np[s->n_pending];
	*c = *b;
	if (!(c->t = malloc((b->n ? b->n : 1) * sizeof(*c->t))))
		return -ENOMEM;
	memcpy(c->t, b->t, b->n * sizeof(*c->t));
	c->id = b->id = s->next_batch_id++;
	s->n_pending++;
	return 0;
}

struct fbs_batch *fbs_state_find(struct fbs_state *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_pending; i++)
		if (s->pending[i].id == id)
			return &s->pending[i];
	return NULL;
}

void fbs_state_remove(struct fbs_state *s, uint64_t id)
{
	struct fbs_batch *b = fbs_state_find(s, id);
	if (!b)
		return;
	size_t i = (size_t)(b - s->pending);
	fbs_batch_free(b);
	memmove(&s->pending[i], &s->pending[i + 1], (s->n_pending - i - 1) * sizeof(*b));
	s->n_pending--;
}

int fbs_node_name_valid(const char *name)
{
	size_t n = strlen(name);
	return n < FB_NAME_MAX && fb_text_is_name(name, n);
}

/* ---- dump --------------------------------------------------------------------- */

static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

/* The dumps build an object with set() calls or'ed into bad, so that one
 * test at the end catches any failed allocation: o, or NULL (o freed). */
static json_t *finish(json_t *o, int bad)
{
	if (!bad)
		return o;
	json_decref(o);
	return NULL;
}

/* A new object and the array that will list its parts (a node's conditions,
 * a batch's nodes), or NULL with neither. */
static json_t *object_with_list(json_t **list)
{
	json_t *o = json_object();
	*list = json_array();
	if (o && *list)
		return o;
	json_decref(o);
	json_decref(*list);
	return NULL;
}

static json_t *dump_cond(const struct fbs_cond *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int bad = set(o, "Type", json_string(fbs_ctype_name(c->type))) |
		  set(o, "Key", json_string(c->key)) | set(o, "Cause", json_string(c->cause)) |
		  set(o, "EventId", json_integer((json_int_t)c->event_id)) |
		  set(o, "SinceMs", json_integer((json_int_t)c->since_ms)) |
		  set(o, "HoldMs", json_integer((json_int_t)c->hold_ms));
	if (c->type == FBS_C_FLAP)
		bad |= set(o, "UntilMs", json_integer((json_int_t)c->until_ms)) |
		       set(o, "UpSeen", json_boolean(c->up_seen));
	return finish(o, bad);
}

static json_t *dump_node(const struct fbs_node *n)
{
	json_t *cs, *o = object_with_list(&cs);
	if (!o)
		return NULL;
	int bad = set(o, "Name", json_string(n->name)) |
		  set(o, "Hold", json_string(hold_names[n->hold & 3])) |
		  set(o, "DryRun", json_boolean(n->dry_run)) |
		  set(o, "Suppressed", json_boolean(n->suppressed)) |
		  set(o, "Reason", json_string(n->reason)) | set(o, "Cause", json_string(n->cause)) |
		  set(o, "CauseEventId", json_integer((json_int_t)n->cause_event_id)) |
		  set(o, "DrainedAt", json_integer((json_int_t)n->drained_at_s)) |
		  set(o, "ClearSinceMs", json_integer((json_int_t)n->clear_since_ms));
	for (size_t k = 0; k < n->n_conds; k++)
		bad |= json_array_append_new(cs, dump_cond(&n->conds[k]));
	bad |= set(o, "Conditions", cs);
	return finish(o, bad);
}

static json_t *dump_batch(const struct fbs_batch *b)
{
	json_t *ts, *o = object_with_list(&ts);
	if (!o)
		return NULL;
	int bad = set(o, "Id", json_integer((json_int_t)b->id)) |
		  set(o, "Action", json_string(b->action == FBS_A_DRAIN ? "drain" : "undrain")) |
		  set(o, "Reason", json_string(b->reason)) |
		  set(o, "CauseEventId", json_integer((json_int_t)b->event_id));
	for (size_t i = 0; i < b->n; i++) {
		json_t *t = json_object();
		bad |= !t || set(t, "Node", json_string(b->t[i].node)) |
				     set(t, "Cause", json_string(b->t[i].cause)) |
				     set(t, "EventId", json_integer((json_int_t)b->t[i].event_id));
		bad |= json_array_append_new(ts, t);
	}
	bad |= set(o, "Nodes", ts);
	return finish(o, bad);
}

static json_t *dump_koff(const struct fbs_koff *k)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	return finish(o, set(o, "Topic", json_string(k->topic)) |
				 set(o, "Partition", json_integer((json_int_t)k->partition)) |
				 set(o, "Offset", json_integer((json_int_t)k->offset)) |
				 set(o, "Broker", json_string(k->broker)) |
				 set(o, "EventId", json_integer((json_int_t)k->event_id)));
}

/* Only Source=kafka writes them: a WebSocket adapter's file is unchanged. */
static int dump_koffs(json_t *root, const struct fbs_state *s)
{
	if (!s->n_koffs)
		return 0;
	json_t *a = json_array();
	int bad = !a;
	for (size_t i = 0; !bad && i < s->n_koffs; i++)
		bad |= json_array_append_new(a, dump_koff(&s->koffs[i]));
	if (bad) {
		json_decref(a);
		return -1;
	}
	return set(root, "KafkaOffsets", a);
}

int fbs_state_dump(const struct fbs_state *s, const struct fbs_policy *p, uint64_t saved_at_s,
		   char **out)
{
	json_t *root = json_object(), *nodes = json_array(), *pend = json_array();
	int bad = !root || !nodes || !pend;
	if (!bad) {
		bad |= set(root, "Version", json_integer(FBS_STATE_VERSION)) |
		       set(root, "LastEventId", json_integer((json_int_t)s->last_event_id)) |
		       set(root, "NextBatchId", json_integer((json_int_t)s->next_batch_id)) |
		       set(root, "SavedAt", json_integer((json_int_t)saved_at_s)) |
		       set(root, "CapEpisode", json_boolean(fbs_policy_cap_episode(p)));
		for (size_t i = 0; i < fbs_policy_count(p); i++)
			bad |= json_array_append_new(nodes, dump_node(fbs_policy_at(p, i)));
		for (size_t i = 0; i < s->n_pending; i++)
			bad |= json_array_append_new(pend, dump_batch(&s->pending[i]));
		bad |= set(root, "Nodes", nodes) | set(root, "Pending", pend);
		nodes = pend = NULL;
		bad |= dump_koffs(root, s);
	}
	*out = bad ? NULL : json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	json_decref(nodes);
	json_decref(pend);
	return *out ? 0 : -ENOMEM;
}

/* ---- parse -------------------------------------------------------------------- */

struct rd {
	char *err;
	size_t errsz;
	char where[96];
	int failed;
};

static int fail(struct rd *r, const char *key, const char *why)
{
	if (!r->failed)
		snprintf(r->err, r->errsz, "%s%s%s: %s", r->where, *r->where ? "." : "", key, why);
	r->failed = 1;
	return -1;
}

static uint64_t get_u64(struct rd *r, json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		fail(r, k, v ? "expected a non-negative integer" : "missing");
		return 0;
	}
	return (uint64_t)json_integer_value(v);
}

static int get_bool(struct rd *r, json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_boolean(v)) {
		fail(r, k, v ? "expected true or false" : "missing");
		return 0;
	}
	return json_is_true(v);
}

static void get_str(struct rd *r, json_t *o, const char *k, char *out, size_t outsz)
{
	json_t *v = json_object_get(o, k);
	out[0] = '\0';
	if (!json_is_string(v)) {
		fail(r, k, v ? "expected a string" : "missing");
		return;
	}
	if (json_string_length(v) >= outsz || strlen(json_string_value(v)) != json_string_length(v)) {
		fail(r, k, "too long or holds a NUL byte");
		return;
	}
	memcpy(out, json_string_value(v), json_string_length(v) + 1);
}

static json_t *get_array(struct rd *r, json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_array(v))
		fail(r, k, v ? "expected an array" : "missing");
	return json_is_array(v) ? v : NULL;
}

static void parse_cond(struct rd *r, json_t *o, struct fbs_cond *c)
{
	char type[32];
	memset(c, 0, sizeof(*c));
	get_str(r, o, "Type", type, sizeof(type));
	int t = fbs_ctype_parse(type);
	if (!r->failed && t < 0)
		fail(r, "Type", "unknown condition type");
	c->type = (uint8_t)(t < 0 ? 0 : t);
	get_str(r, o, "Key", c->key, sizeof(c->key));
	get_str(r, o, "Cause", c->cause, sizeof(c->cause));
	c->event_id = get_u64(r, o, "EventId");
	c->since_ms = get_u64(r, o, "SinceMs");
	c->hold_ms = get_u64(r, o, "HoldMs");
	if (c->type == FBS_C_FLAP) {
		c->until_ms = get_u64(r, o, "UntilMs");
		c->up_seen = (uint8_t)get_bool(r, o, "UpSeen");
	}
}

static int parse_node(struct rd *r, json_t *o, struct fbs_policy *p)
{
	struct fbs_node n;
	char hold[16];
	memset(&n, 0, sizeof(n));
	if (!json_is_object(o))
		return fail(r, "", "expected an object");
	get_str(r, o, "Name", n.name, sizeof(n.name));
	if (!r->failed && !fbs_node_name_valid(n.name))
		return fail(r, "Name", "not a valid node name");
	if (!r->failed && fbs_policy_node(p, n.name))
		return fail(r, "Name", "the node is listed twice");
	get_str(r, o, "Hold", hold, sizeof(hold));
	int h = -1;
	for (int i = 0; i < 4; i++)
		if (strcmp(hold, hold_names[i]) == 0)
			h = i;
	if (!r->failed && h < 0)
		return fail(r, "Hold", "expected none, draining, drained or undraining");
	n.hold = (uint8_t)(h < 0 ? 0 : h);
	n.dry_run = (uint8_t)get_bool(r, o, "DryRun");
	n.suppressed = (uint8_t)get_bool(r, o, "Suppressed");
	get_str(r, o, "Reason", n.reason, sizeof(n.reason));
	get_str(r, o, "Cause", n.cause, sizeof(n.cause));
	n.cause_event_id = get_u64(r, o, "CauseEventId");
	n.drained_at_s = get_u64(r, o, "DrainedAt");
	n.clear_since_ms = get_u64(r, o, "ClearSinceMs");
	json_t *cs = get_array(r, o, "Conditions");
	if (r->failed)
		return -1;
	n.n_conds = json_array_size(cs);
	if (n.n_conds && !(n.conds = calloc(n.n_conds, sizeof(*n.conds))))
		return fail(r, "Conditions", "out of memory");
	size_t base = strlen(r->where);
	for (size_t k = 0; k < n.n_conds && !r->failed; k++) {
		json_t *co = json_array_get(cs, k);
		snprintf(r->where + base, sizeof(r->where) - base, ".Conditions[%zu]", k);
		if (!json_is_object(co))
			fail(r, "", "expected an object");
		else
			parse_cond(r, co, &n.conds[k]);
	}
	r->where[base] = '\0';
	int rc = r->failed ? -1 : fbs_policy_restore(p, &n);
	free(n.conds);
	if (rc && !r->failed)
		fail(r, "", "out of memory");
	return rc;
}

static int parse_batch(struct rd *r, json_t *o, struct fbs_batch *b)
{
	char action[16];
	memset(b, 0, sizeof(*b));
	if (!json_is_object(o))
		return fail(r, "", "expected an object");
	b->id = get_u64(r, o, "Id");
	get_str(r, o, "Action", action, sizeof(action));
	if (!r->failed && strcmp(action, "drain") != 0 && strcmp(action, "undrain") != 0)
		return fail(r, "Action", "expected drain or undrain");
	b->action = strcmp(action, "drain") == 0 ? FBS_A_DRAIN : FBS_A_UNDRAIN;
	get_str(r, o, "Reason", b->reason, sizeof(b->reason));
	b->event_id = get_u64(r, o, "CauseEventId");
	json_t *ts = get_array(r, o, "Nodes");
	if (r->failed)
		return -1;
	if (!(b->t = calloc(json_array_size(ts) + 1, sizeof(*b->t))))
		return fail(r, "Nodes", "out of memory");
	for (size_t i = 0; i < json_array_size(ts) && !r->failed; i++) {
		json_t *t = json_array_get(ts, i);
		struct fbs_target *x = &b->t[b->n++];
		if (!json_is_object(t))
			return fail(r, "Nodes", "expected objects");
		get_str(r, t, "Node", x->node, sizeof(x->node));
		get_str(r, t, "Cause", x->cause, sizeof(x->cause));
		x->event_id = get_u64(r, t, "EventId");
		if (!r->failed && !fbs_node_name_valid(x->node))
			return fail(r, "Nodes", "not a valid node name");
	}
	return r->failed ? -1 : 0;
}

static int parse_koff(struct rd *r, json_t *o, struct fbs_koff *k)
{
	memset(k, 0, sizeof(*k));
	if (!json_is_object(o))
		return fail(r, "", "expected an object");
	get_str(r, o, "Topic", k->topic, sizeof(k->topic));
	if (!r->failed && !k->topic[0])
		return fail(r, "Topic", "empty");
	uint64_t part = get_u64(r, o, "Partition");
	if (!r->failed && part > INT32_MAX)
		return fail(r, "Partition", "not a Kafka partition number");
	k->partition = (int32_t)part;
	k->offset = (int64_t)get_u64(r, o, "Offset");
	get_str(r, o, "Broker", k->broker, sizeof(k->broker));
	k->event_id = get_u64(r, o, "EventId");
	return r->failed ? -1 : 0;
}

/* Optional: absent in a WebSocket adapter's file. */
static int parse_koffs(struct rd *r, json_t *root, struct fbs_state *s)
{
	json_t *a = json_object_get(root, "KafkaOffsets");
	if (!a)
		return 0;
	if (!(a = get_array(r, root, "KafkaOffsets")))
		return -1;
	size_t n = json_array_size(a);
	if (n && !(s->koffs = calloc(n, sizeof(*s->koffs))))
		return fail(r, "KafkaOffsets", "out of memory");
	for (size_t i = 0; i < n; i++) {
		snprintf(r->where, sizeof(r->where), "KafkaOffsets[%zu]", i);
		if (parse_koff(r, json_array_get(a, i), &s->koffs[i]))
			return -1;
		s->n_koffs++;
		for (size_t j = 0; j < i; j++)
			if (s->koffs[j].partition == s->koffs[i].partition &&
			    strcmp(s->koffs[j].topic, s->koffs[i].topic) == 0)
				return fail(r, "Topic", "the partition is listed twice");
	}
	return 0;
}

static int parse_root(struct rd *r, json_t *root, struct fbs_state *s, struct fbs_policy *p)
{
	if (!json_is_object(root))
		return fail(r, "(document)", "expected a JSON object");
	uint64_t v = get_u64(r, root, "Version");
	if (!r->failed && v != FBS_STATE_VERSION)
		return fail(r, "Version", "unsupported version (this adapter writes 1)");
	s->last_event_id = get_u64(r, root, "LastEventId");
	s->next_batch_id = get_u64(r, root, "NextBatchId");
	fbs_policy_set_cap_episode(p, get_bool(r, root, "CapEpisode"));
	json_t *nodes = get_array(r, root, "Nodes"), *pend = get_array(r, root, "Pending");
	if (r->failed)
		return -1;
	for (size_t i = 0; i < json_array_size(nodes); i++) {
		snprintf(r->where, sizeof(r->where), "Nodes[%zu]", i);
		if (parse_node(r, json_array_get(nodes, i), p))
			return -1;
	}
	size_t np = json_array_size(pend);
	if (np && !(s->pending = calloc(np, sizeof(*s->pending))))
		return fail(r, "Pending", "out of memory");
	for (size_t i = 0; i < np; i++) {
		snprintf(r->where, sizeof(r->where), "Pending[%zu]", i);
		int rc = parse_batch(r, json_array_get(pend, i), &s->pending[i]);
		s->n_pending++; /* freed with s even when half-parsed */
		if (rc)
			return -1;
		if (s->pending[i].id >= s->next_batch_id)
			s->next_batch_id = s->pending[i].id + 1;
	}
	r->where[0] = '\0';
	return parse_koffs(r, root, s);
}

int fbs_state_parse(const char *json, size_t len, struct fbs_state *s, struct fbs_policy *p,
		    char *err, size_t errsz)
{
	fbs_state_free(s);
	fbs_state_init(s);
	json_error_t je;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "not valid JSON (torn or damaged?): %s at line %d column %d",
				  je.text, je.line, je.column);
	struct rd r = { err, errsz, "", 0 };
	int rc = parse_root(&r, root, s, p);
	json_decref(root);
	if (rc) {
		fbs_state_free(s);
		fbs_state_init(s);
		return FB_EMALFORMED;
	}
	return 0;
}

/* ---- files -------------------------------------------------------------------- */

int fbs_state_save(const char *path, const struct fbs_state *s, const struct fbs_policy *p,
		   char *err, size_t errsz)
{
	char *doc = NULL;
	int rc = fbs_state_dump(s, p, (uint64_t)time(NULL), &doc);
	if (rc)
		return fb_err_set(err, errsz, rc, "%s: out of memory serializing the state", path);
	size_t n = strlen(doc);
	doc[n] = '\n'; /* json_dumps left room for the NUL: a newline ends the file */
	const char *what = "write";
	rc = fb_file_replace(path, doc, n + 1, 0644, &what);
	free(doc);
	if (rc)
		fb_err_set(err, errsz, rc,
			   "%s: cannot %s %s.tmp: %s (is the directory there and writable?)",
			   path, what, path, strerror(-rc));
	return rc;
}

int fbs_state_load(const char *path, struct fbs_state *s, struct fbs_policy *p, int *exists,
		   char *err, size_t errsz)
{
	*exists = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return fb_err_set(err, errsz, -errno, "%s: cannot open: %s", path, strerror(errno));
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > STATE_MAX_BYTES) {
		fb_err_set(err, errsz, FB_ECORRUPT,
			   "%s: not a regular file of at most %u MiB", path,
			   STATE_MAX_BYTES >> 20);
		close(fd);
		return FB_ECORRUPT;
	}
	*exists = 1;
	size_t n = (size_t)st.st_size, got = 0;
	char *buf = malloc(n + 1);
	if (!buf) {
		close(fd);
		return fb_err_set(err, errsz, -ENOMEM, "%s: out of memory", path);
	}
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	char why[400];
	int rc = got == n ? fbs_state_parse(buf, n, s, p, why, sizeof(why)) : -EIO;
	free(buf);
	if (rc == -EIO)
		fb_err_set(err, errsz, FB_ECORRUPT, "%s: short read", path);
	else if (rc)
		fb_err_set(err, errsz, FB_ECORRUPT, "%s: not a usable state file: %s", path, why);
	return rc ? FB_ECORRUPT : 0;
}
