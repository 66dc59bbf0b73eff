/* jobs.c - the job registry and the POST /fabric/jobs parser (see jobs.h).
 *
 * Two chained hash tables with intrusive links: jobs by JobId, nodes by
 * name. A job holds pointers to its nodes; a node holds its jobs' ids,
 * ascending, as pointers into the jobs' own id fields (a job's id never
 * moves: a replacement reuses the job's record). A node with no job left is
 * freed, so memory follows what is registered, within max_jobs and
 * max_members.
 */
#include "jobs.h"

#include "fb_err.h"
#include "fb_sorted.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- validation and the parser (pure: any thread) ---- */

int fb_jobs_valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= FB_JOB_ID_MAX || s[0] == '0')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

int fb_jobs_valid_name(const char *s, size_t n)
{
	if (n == 0 || n >= FB_JOB_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c > '~' || c == ',' || c == '[' || c == ']')
			return 0;
	}
	return 1;
}

void fb_job_reg_free(struct fb_job_reg *r)
{
	free(r->nodes);
	memset(r, 0, sizeof(*r));
}

/* Text from the request (a key, or jansson's error, which quotes the bytes
 * it stopped at), safe to quote in an error that goes to the log: printable
 * ASCII only ('?' for the rest), at most bufsz - 1 bytes. */
static const char *quotable(const char *s, char *buf, size_t bufsz)
{
	size_t i = 0;
	for (; s[i] && i < bufsz - 1; i++)
		buf[i] = s[i] >= ' ' && s[i] <= '~' ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

#define NAME_RULE "1 to 63 bytes of printable ASCII without spaces, commas or brackets"

static int parse_name(json_t *v, const char *what, char *out, char *err, size_t errsz)
{
	if (!json_is_string(v))
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s: must be a string", what);
	size_t n = json_string_length(v);
	if (!fb_jobs_valid_name(json_string_value(v), n))
		return fb_err_set(err, errsz, FB_EMALFORMED, "%s: must be " NAME_RULE, what);
	memcpy(out, json_string_value(v), n + 1);
	return 0;
}

static int parse_nodes(json_t *arr, struct fb_job_reg *out, char *err, size_t errsz)
{
	if (!json_is_array(arr))
		return fb_err_set(err, errsz, FB_EMALFORMED, "Nodes: must be an array of node names");
	size_t n = json_array_size(arr);
	if (n == 0)
		return fb_err_set(err, errsz, FB_EMALFORMED, "Nodes: must list at least one node");
	if (n > FB_JOB_NODES_MAX)
		return fb_err_set(err, errsz, FB_EMALFORMED, "Nodes: %zu nodes, at most %u allowed", n,
				  FB_JOB_NODES_MAX);
	out->nodes = malloc(n * sizeof(*out->nodes));
	if (!out->nodes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		char what[32];
		snprintf(what, sizeof(what), "Nodes: item %zu", i);
		int rc = parse_name(json_array_get(arr, i), what, out->nodes[i], err, errsz);
		if (rc)
			return rc;
	}
	qsort(out->nodes, n, sizeof(*out->nodes), cmp_name);
	for (size_t i = 1; i < n; i++)
		if (strcmp(out->nodes[i], out->nodes[i - 1]) == 0)
			return fb_err_set(err, errsz, FB_EMALFORMED, "Nodes: \"%s\" is listed twice",
					  out->nodes[i]);
	out->n_nodes = n;
	return 0;
}

static int parse_doc(json_t *root, struct fb_job_reg *out, char *err, size_t errsz)
{
	if (!json_is_object(root))
		return fb_err_set(err, errsz, FB_EMALFORMED, "body: must be a JSON object");
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		char q[41];
		if (strcmp(key, "JobId") != 0 && strcmp(key, "User") != 0 && strcmp(key, "Nodes") != 0)
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "body: unknown member \"%s\" (members: JobId, User, Nodes)",
					  quotable(key, q, sizeof(q)));
	}
	v = json_object_get(root, "JobId");
	if (!v)
		return fb_err_set(err, errsz, FB_EMALFORMED, "JobId: missing");
	if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)) ||
	    !fb_jobs_valid_id(json_string_value(v)))
		return fb_err_set(err, errsz, FB_EMALFORMED, "JobId: must be a string of 1 to 20 decimal "
				  "digits without a leading zero");
	memcpy(out->job_id, json_string_value(v), json_string_length(v) + 1);
	if (!(v = json_object_get(root, "User")))
		return fb_err_set(err, errsz, FB_EMALFORMED, "User: missing");
	int rc = parse_name(v, "User", out->user, err, errsz);
	if (rc)
		return rc;
	if (!(v = json_object_get(root, "Nodes")))
		return fb_err_set(err, errsz, FB_EMALFORMED, "Nodes: missing");
	return parse_nodes(v, out, err, errsz);
}

int fb_jobs_parse_register(const char *body, size_t len, struct fb_job_reg *out, char *err,
			   size_t errsz)
{
	memset(out, 0, sizeof(*out));
	if (errsz)
		err[0] = '\0';
	if (len > FB_JOB_BODY_MAX)
		return fb_err_set(err, errsz, FB_EMALFORMED, "body: %zu bytes, at most %u allowed", len,
				  FB_JOB_BODY_MAX);
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (json_error_code(&je) == json_error_out_of_memory)
			return -ENOMEM;
		char q[sizeof(je.text)];
		return fb_err_set(err, errsz, FB_EMALFORMED, "body: not valid JSON: %s (line %d, column %d)",
				  quotable(je.text, q, sizeof(q)), je.line, je.column);
	}
	int rc = parse_doc(root, out, err, errsz);
	json_decref(root);
	if (rc)
		fb_job_reg_free(out);
	return rc;
}

/* ---- the registry (loop thread) ---- */

struct hlink {
	struct hlink *next;
	uint64_t hash;
	const char *key;
};

struct htab {
	struct hlink **b;
	size_t cap, n; /* cap: 0 or a power of two */
};

struct node {
	struct hlink h; /* first: a node is its link */
	const char **ids; /* ascending by number */
	size_t n, cap;
	char name[FB_JOB_NAME_MAX];
};

struct job {
	struct hlink h;
	struct fb_job_names *names; /* the same nodes, for the map's renderer */
	struct node **nodes;
	size_t n_nodes;
	uint64_t reg_ns;
	char id[FB_JOB_ID_MAX];
	char user[FB_JOB_NAME_MAX];
};

struct fb_jobs {
	struct htab jobs, nodes;
	size_t members, max_jobs, max_members, max_nodes;
	uint64_t seed;
};

static uint64_t hash_str(uint64_t seed, const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static struct hlink *ht_get(const struct htab *t, const char *key, uint64_t h)
{
	if (!t->cap)
		return NULL;
	for (struct hlink *l = t->b[h & (t->cap - 1)]; l; l = l->next)
		if (l->hash == h && strcmp(l->key, key) == 0)
			return l;
	return NULL;
}

/* Room for one more entry without growing later (so an add cannot fail). */
static int ht_reserve(struct htab *t)
{
	if (t->n < t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct hlink **b = calloc(cap, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct hlink *l = t->b[i], *next;
		for (; l; l = next) {
			next = l->next;
			l->next = b[l->hash & (cap - 1)];
			b[l->hash & (cap - 1)] = l;
		}
	}
	free(t->b);
	t->b = b;
	t->cap = cap;
	return 0;
}

static void ht_add(struct htab *t, struct hlink *l)
{
	struct hlink **head = &t->b[l->hash & (t->cap - 1)];
	l->next = *head;
	*head = l;
	t->n++;
}

static void ht_del(struct htab *t, struct hlink *l)
{
	struct hlink **p = &t->b[l->hash & (t->cap - 1)];
	while (*p != l)
		p = &(*p)->next;
	*p = l->next;
	t->n--;
}

struct fb_jobs *fb_jobs_new(size_t max_jobs, size_t max_members)
{
	struct fb_jobs *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->max_jobs = max_jobs ? max_jobs : FB_JOBS_DEFAULT_MAX;
	j->max_members = max_members ? max_members : FB_JOBS_DEFAULT_MAX_MEMBERS;
	j->max_nodes = FB_JOBS_DEFAULT_MAX_NODES;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* Node names come from the network: do not let them pick the buckets. */
	j->seed = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)j;
	return j;
}

void fb_jobs_set_limits(struct fb_jobs *j, size_t max_jobs, size_t max_members, size_t max_nodes)
{
	j->max_jobs = max_jobs ? max_jobs : FB_JOBS_DEFAULT_MAX;
	j->max_members = max_members ? max_members : FB_JOBS_DEFAULT_MAX_MEMBERS;
	j->max_nodes = !max_nodes ? FB_JOBS_DEFAULT_MAX_NODES
		       : max_nodes > FB_JOB_NODES_MAX ? FB_JOB_NODES_MAX : max_nodes;
}

void fb_jobs_get_limits(const struct fb_jobs *j, size_t *max_jobs, size_t *max_members,
			size_t *max_nodes)
{
	*max_jobs = j->max_jobs;
	*max_members = j->max_members;
	*max_nodes = j->max_nodes;
}

/* Frees every record (each starts with its link) and the buckets. */
static void free_table(struct htab *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		struct hlink *l = t->b[i], *next;
		for (; l; l = next) {
			next = l->next;
			free(l);
		}
	}
	free(t->b);
}

void fb_job_names_unref(struct fb_job_names *nm)
{
	if (nm && atomic_fetch_sub(&nm->refs, 1) == 1) {
		free(nm->nodes);
		free(nm);
	}
}

static struct fb_job_names *names_of(const struct fb_job_reg *reg)
{
	struct fb_job_names *nm = calloc(1, sizeof(*nm));
	size_t n = reg->n_nodes;
	if (!nm || !(nm->nodes = malloc((n ? n : 1) * sizeof(*nm->nodes)))) {
		free(nm);
		return NULL;
	}
	atomic_init(&nm->refs, 1);
	memcpy(nm->id, reg->job_id, sizeof(nm->id));
	if (n)
		memcpy(nm->nodes, reg->nodes, n * sizeof(*nm->nodes));
	nm->n = n;
	return nm;
}

long fb_jobs_take_names(const struct fb_jobs *j, struct fb_job_names ***out)
{
	struct fb_job_names **v = malloc((j->jobs.n ? j->jobs.n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < j->jobs.cap; i++)
		for (struct hlink *l = j->jobs.b[i]; l; l = l->next) {
			struct fb_job_names *nm = ((struct job *)l)->names;
			atomic_fetch_add(&nm->refs, 1);
			v[n++] = nm;
		}
	*out = v;
	return (long)n;
}

void fb_jobs_free(struct fb_jobs *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->jobs.cap; i++)
		for (struct hlink *l = j->jobs.b[i]; l; l = l->next) {
			free(((struct job *)l)->nodes);
			fb_job_names_unref(((struct job *)l)->names);
		}
	for (size_t i = 0; i < j->nodes.cap; i++)
		for (struct hlink *l = j->nodes.b[i]; l; l = l->next)
			free(((struct node *)l)->ids);
	free_table(&j->jobs);
	free_table(&j->nodes);
	free(j);
}

/* Job ids compare as numbers: no leading zeros, so shorter is smaller. */
static int cmp_id(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	return la != lb ? (la < lb ? -1 : 1) : strcmp(a, b);
}

/* fb_sorted_pos comparator: key is an id, elem points into n->ids. */
static int cmp_id_elem(const void *key, const void *elem)
{
	return cmp_id(key, *(const char *const *)elem);
}

/* Index of id in n->ids, or where it would go (*found says which). */
static size_t id_pos(const struct node *n, const char *id, int *found)
{
	return fb_sorted_pos(n->ids, n->n, sizeof(*n->ids), id, cmp_id_elem, found);
}

static void node_add_id(struct node *n, const char *id)
{
	int found;
	size_t i = id_pos(n, id, &found);
	if (found)
		return;
	memmove(&n->ids[i + 1], &n->ids[i], (n->n - i) * sizeof(*n->ids));
	n->ids[i] = id;
	n->n++;
}

static void node_del_id(struct node *n, const char *id)
{
	int found;
	size_t i = id_pos(n, id, &found);
	if (!found)
		return;
	memmove(&n->ids[i], &n->ids[i + 1], (n->n - i - 1) * sizeof(*n->ids));
	n->n--;
}

static struct node *node_find(const struct fb_jobs *j, const char *name)
{
	return (struct node *)ht_get(&j->nodes, name, hash_str(j->seed, name));
}

/* The node named name with room for one more id, created if new. */
static struct node *node_prepare(struct fb_jobs *j, const char *name)
{
	struct node *n = node_find(j, name);
	if (!n) {
		if (ht_reserve(&j->nodes) || !(n = calloc(1, sizeof(*n))))
			return NULL;
		snprintf(n->name, sizeof(n->name), "%s", name);
		n->h.key = n->name;
		n->h.hash = hash_str(j->seed, name);
		ht_add(&j->nodes, &n->h);
	}
	if (n->n == n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4;
		const char **ids = realloc(n->ids, cap * sizeof(*ids));
		if (!ids)
			return NULL; /* a new node stays empty: the caller drops it */
		n->ids = ids;
		n->cap = cap;
	}
	return n;
}

static void node_drop_if_empty(struct fb_jobs *j, struct node *n)
{
	if (n->n)
		return;
	ht_del(&j->nodes, &n->h);
	free(n->ids);
	free(n);
}

int fb_jobs_register(struct fb_jobs *j, const struct fb_job_reg *reg, uint64_t now_ns)
{
	uint64_t h = hash_str(j->seed, reg->job_id);
	struct job *job = (struct job *)ht_get(&j->jobs, reg->job_id, h);
	size_t old_n = job ? job->n_nodes : 0;
	if (reg->n_nodes > j->max_nodes)
		return -E2BIG;
	if ((!job && j->jobs.n >= j->max_jobs) || j->members - old_n + reg->n_nodes > j->max_members)
		return -ENOSPC;
	/* Everything that can fail comes first, so a failure changes nothing. */
	if (!job && ht_reserve(&j->jobs))
		return -ENOMEM;
	struct node **nodes = malloc((reg->n_nodes ? reg->n_nodes : 1) * sizeof(*nodes));
	struct job *fresh = job ? NULL : calloc(1, sizeof(*fresh));
	struct fb_job_names *names = names_of(reg);
	size_t got = 0;
	int ok = nodes && (job || fresh) && names;
	for (; ok && got < reg->n_nodes; got++)
		if (!(nodes[got] = node_prepare(j, reg->nodes[got])))
			ok = 0;
	if (!ok) {
		/* Nodes this call created have no job yet: drop them again
		 * (node_prepare may have created the one it failed on, too). */
		for (size_t i = 0; nodes && i < got; i++) {
			struct node *n = nodes[i] ? nodes[i] : node_find(j, reg->nodes[i]);
			if (n)
				node_drop_if_empty(j, n);
		}
		free(nodes);
		free(fresh);
		fb_job_names_unref(names);
		return -ENOMEM;
	}
	if (job) {
		for (size_t i = 0; i < job->n_nodes; i++)
			node_del_id(job->nodes[i], job->id);
	} else {
		job = fresh;
		memcpy(job->id, reg->job_id, sizeof(job->id));
		job->h.key = job->id;
		job->h.hash = h;
	}
	for (size_t i = 0; i < reg->n_nodes; i++)
		node_add_id(nodes[i], job->id);
	if (fresh) {
		ht_add(&j->jobs, &job->h);
	} else {
		for (size_t i = 0; i < job->n_nodes; i++)
			node_drop_if_empty(j, job->nodes[i]);
		free(job->nodes);
		fb_job_names_unref(job->names);
	}
	job->names = names;
	job->nodes = nodes;
	job->n_nodes = reg->n_nodes;
	job->reg_ns = now_ns;
	memcpy(job->user, reg->user, sizeof(job->user));
	j->members = j->members - old_n + reg->n_nodes;
	return fresh ? 0 : 1;
}

int fb_jobs_delete(struct fb_jobs *j, const char *job_id)
{
	struct job *job = (struct job *)ht_get(&j->jobs, job_id, hash_str(j->seed, job_id));
	if (!job)
		return 0;
	for (size_t i = 0; i < job->n_nodes; i++) {
		node_del_id(job->nodes[i], job->id);
		node_drop_if_empty(j, job->nodes[i]);
	}
	j->members -= job->n_nodes;
	ht_del(&j->jobs, &job->h);
	free(job->nodes);
	fb_job_names_unref(job->names);
	free(job);
	return 1;
}

size_t fb_jobs_expire(struct fb_jobs *j, uint64_t before_ns)
{
	size_t n = 0;
	for (size_t i = 0; i < j->jobs.cap; i++) {
		struct hlink *l = j->jobs.b[i], *next;
		for (; l; l = next) {
			next = l->next; /* fb_jobs_delete frees l */
			if (((struct job *)l)->reg_ns < before_ns)
				n += (size_t)fb_jobs_delete(j, l->key);
		}
	}
	return n;
}

size_t fb_jobs_node_list(const struct fb_jobs *j, const char *node, char *out, size_t outsz)
{
	if (!outsz)
		return 0;
	out[0] = '\0';
	const struct node *n = j->members ? node_find(j, node) : NULL;
	size_t len = 0;
	for (size_t i = 0; n && i < n->n; i++) {
		size_t l = strlen(n->ids[i]), need = l + (len ? 1 : 0);
		if (len + need > outsz - 1)
			break; /* ascending: every later id is at least as long */
		if (len)
			out[len++] = ',';
		memcpy(out + len, n->ids[i], l + 1);
		len += l;
	}
	return len;
}

void fb_jobs_foreach_node(const struct fb_jobs *j, fb_jobs_node_fn fn, void *arg)
{
	for (size_t i = 0; i < j->nodes.cap; i++)
		for (const struct hlink *l = j->nodes.b[i]; l; l = l->next) {
			const struct node *n = (const struct node *)l;
			fn(arg, n->name, n->ids, n->n);
		}
}

int fb_jobs_get(const struct fb_jobs *j, const char *job_id, const char **user, size_t *n_nodes,
		uint64_t *reg_ns)
{
	const struct job *job = (const struct job *)ht_get(&j->jobs, job_id, hash_str(j->seed, job_id));
	if (!job)
		return -1;
	if (user)
		*user = job->user;
	if (n_nodes)
		*n_nodes = job->n_nodes;
	if (reg_ns)
		*reg_ns = job->reg_ns;
	return 0;
}

size_t fb_jobs_count(const struct fb_jobs *j) { return j->jobs.n; }
size_t fb_jobs_members(const struct fb_jobs *j) { return j->members; }
size_t fb_jobs_nodes(const struct fb_jobs *j) { return j->nodes.n; }
