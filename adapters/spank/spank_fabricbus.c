/* spank_fabricbus.c - the SPANK plugin: the fabric map in every job step.
 *
 * Which callback does what, and why (measured with slurmstepd 22.05 on the
 * test cluster, tests/integration/test_spank.py; docs/spank.md):
 *
 * - slurm_spank_init, every context: parse the plugstack.conf arguments and
 *   fail on a bad one, so that a typo stops srun/sbatch and the step at once.
 * - slurm_spank_init_post_opt, remote (slurmstepd, still root, once per step
 *   and node): all the work. GET /fabric/map?nodes=<SLURM_JOB_NODELIST> (the
 *   job's part only: a 1000-node job start is 1000 such requests at once to
 *   the broker's single HTTP thread), write the map file, spank_setenv
 *   the FABRICBUS_* variables (the tasks are forked later and inherit them),
 *   POST /fabric/jobs on the step's node 0, and decide whether to refuse.
 *   It does not fail the step itself: a failure here ends the step with only
 *   "Plugin initialization failed" for the user and srun still exits 0.
 * - slurm_spank_user_init, remote: print the refusal. It runs once per step
 *   and node after the step's I/O is connected, so slurm_error() reaches the
 *   user's stderr (srun) or the job's output file (sbatch), and the slurmd log.
 *   Failing here would not do: srun exits 0 and a batch job is COMPLETED.
 * - slurm_spank_task_init_privileged, remote, in each task before exec: fail
 *   the task when refused. Only a failure here makes srun exit non-zero and
 *   a batch job FAILED.
 * - slurm_spank_job_epilog, in slurmd's epilog process on every node at the
 *   end of every job (batch, srun, salloc, cancelled): remove this node's map
 *   file and, on the job's first node, DELETE /fabric/jobs/<id>. It never
 *   fails: a failing epilog drains the node.
 *
 * The hostlist functions come from libslurmfull, which slurmstepd, slurmd,
 * srun, sbatch and salloc all link.
 */
#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "fb_err.h"
#include "fb_http_auth.h"
#include "fb_spank_broker.h"
#include "fb_spank_conf.h"
#include "fb_spank_file.h"
#include "fb_spank_map.h"
#include "fb_spank_plugin.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Only the plugin's identity and its callbacks leave the module. */
FB_SPANK_PLUGIN(fabricbus);

FB_EXPORT int slurm_spank_init(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_init_post_opt(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_user_init(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av);
FB_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char **av);

#define MAX_NODES 65536              /* the broker's limit per registration */
#define NAME_MAX_LEN 63              /* node and user names, as the broker takes them */
#define NODELIST_MAX (1u << 20)      /* bytes of SLURM_JOB_NODELIST */

static const char *const env_vars[] = {
	"FABRICBUS_MAP_FILE", "FABRICBUS_SWITCH", "FABRICBUS_SWITCH_GUID",
	"FABRICBUS_SWITCH_PORT", "FABRICBUS_LID", "FABRICBUS_PORT_GUID",
	"FABRICBUS_LINK_STATE", "FABRICBUS_NODES",
};

/* The loaded config (the one global the conventions allow). */
static struct fb_spank_conf conf;

/* This step's verdict, from init_post_opt to user_init and the tasks. SPANK
 * gives a plugin no context pointer; the tasks are forked from this process
 * after the verdict is made, so they inherit it. */
static struct {
	int refuse;
	char msg[1024];
} verdict;

/* What step_start knows about the step. */
struct step {
	spank_t sp;
	char job_id[16];
	char step_id[32];       /* "12.0", "12.batch": for log lines */
	uint32_t nodeid;
	uid_t uid;
	gid_t gid;
	char **nodes;           /* the job's nodes, in job order */
	size_t n_nodes;
	char local[NAME_MAX_LEN + 1];
};

static int load_conf(int ac, char **av)
{
	char err[512];
	if (fb_spank_conf_parse(&conf, ac, av, err, sizeof(err)) < 0) {
		slurm_error("fabricbus: plugstack.conf: %s", err);
		return -1;
	}
	return 0;
}

/* The token and TLS of token_file= and tls_ca= for this process's requests
 * (conf.client). Read only where requests are made (slurmstepd, the
 * epilog: root), never at slurm_spank_init: srun runs it as the user, who
 * must not be able to read the token. 0, or an error with
 * "plugstack.conf: <file>: why" in err. Undo with auth_end. */
static int auth_start(struct fb_http_auth *a, char *err, size_t errsz)
{
	char why[400];
	int rc = fb_http_auth_init(a, conf.token_file, conf.tls_ca, why, sizeof(why));
	if (rc < 0)
		return fb_err_set(err, errsz, rc, "plugstack.conf: %s", why);
	conf.client = &a->client;
	return 0;
}

static void auth_end(struct fb_http_auth *a)
{
	conf.client = NULL;
	fb_http_auth_free(a);
}

/* 1..63 bytes of printable ASCII without space, ',', '[', ']' (the broker's
 * rule) and without '/' (names go into file names). */
static int valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > NAME_MAX_LEN)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= 0x20 || c >= 0x7f || strchr(",[]/", c))
			return 0;
	}
	return 1;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Expand "node[001-003],gpu7" with Slurm's own hostlist code. Returns 0 with
 * *out (malloc'd, each name too) or -1 with err. */
static int expand(const char *list, char ***out, size_t *n, char *err, size_t errsz)
{
	hostlist_t hl = slurm_hostlist_create(list);
	char **names = NULL;
	size_t i = 0;
	if (!hl)
		return fb_err_set(err, errsz, -1, "cannot parse node list '%.100s'", list);
	int cnt = slurm_hostlist_count(hl);
	if (cnt <= 0 || cnt > MAX_NODES) {
		fb_err_set(err, errsz, -1,
			   "node list '%.100s' has %d nodes (want 1..%d)", list, cnt,
			   MAX_NODES);
		goto fail;
	}
	if (!(names = calloc((size_t)cnt, sizeof(*names)))) {
		fb_err_set(err, errsz, -1, "out of memory expanding the node list");
		goto fail;
	}
	for (i = 0; i < (size_t)cnt; i++) {
		names[i] = slurm_hostlist_shift(hl); /* malloc'd: free() */
		if (!names[i] || !valid_name(names[i])) {
			fb_err_set(err, errsz, -1,
				   "node list '%.100s': bad or missing name '%.70s'", list,
				   names[i] ? names[i] : "");
			i++;
			goto fail;
		}
	}
	slurm_hostlist_destroy(hl);
	*out = names;
	*n = (size_t)cnt;
	return 0;
fail:
	if (names)
		free_names(names, i);
	slurm_hostlist_destroy(hl);
	return -1;
}

/* A job environment variable, malloc'd (SLURM_JOB_NODELIST has no length
 * limit of its own), or NULL. */
static char *job_getenv(spank_t sp, const char *var)
{
	for (size_t sz = 1024; sz <= NODELIST_MAX; sz *= 2) {
		char *buf = malloc(sz);
		if (!buf)
			return NULL;
		spank_err_t rc = spank_getenv(sp, var, buf, (int)sz);
		if (rc == ESPANK_SUCCESS)
			return buf;
		free(buf);
		if (rc != ESPANK_NOSPACE)
			return NULL;
	}
	return NULL;
}

static int get_ids(struct step *s)
{
	uint32_t job = 0, stepid = 0;
	spank_t sp = s->sp;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &s->nodeid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &s->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &s->gid) != ESPANK_SUCCESS)
		return -1;
	snprintf(s->job_id, sizeof(s->job_id), "%" PRIu32, job);
	if (stepid == SLURM_BATCH_SCRIPT)
		snprintf(s->step_id, sizeof(s->step_id), "%" PRIu32 ".batch", job);
	else if (stepid == SLURM_EXTERN_CONT)
		snprintf(s->step_id, sizeof(s->step_id), "%" PRIu32 ".extern", job);
	else if (stepid == SLURM_INTERACTIVE_STEP)
		snprintf(s->step_id, sizeof(s->step_id), "%" PRIu32 ".interactive", job);
	else
		snprintf(s->step_id, sizeof(s->step_id), "%" PRIu32 ".%" PRIu32, job, stepid);
	return stepid == SLURM_EXTERN_CONT ? 1 : 0;
}

/* This node's name: SLURMD_NODENAME when the process has one (slurmd's epilog
 * does; slurmstepd 22.05 does not, measured), else the node at our index in
 * the step's node list (a batch step has none: it runs on the job's first
 * node). That list, like SLURM_JOB_NODELIST, comes from the environment srun
 * sent, which the user controls: it only ever names this job's own file and
 * values, under this job's id (docs/spank.md, SECURITY). */
static int find_local(struct step *s, char *err, size_t errsz)
{
	const char *env = getenv("SLURMD_NODENAME");
	char *list = NULL, **names = NULL;
	size_t n = 0;
	if (env && valid_name(env)) {
		snprintf(s->local, sizeof(s->local), "%s", env);
		return 0;
	}
	if ((list = job_getenv(s->sp, "SLURM_STEP_NODELIST")) &&
	    expand(list, &names, &n, err, errsz) == 0 && s->nodeid < n)
		snprintf(s->local, sizeof(s->local), "%s", names[s->nodeid]);
	else if (s->nodeid < s->n_nodes)
		snprintf(s->local, sizeof(s->local), "%s", s->nodes[s->nodeid]);
	free(list);
	if (names)
		free_names(names, n);
	if (!s->local[0])
		return fb_err_set(err, errsz, -1,
				  "cannot tell this node's name (node id %" PRIu32 ")", s->nodeid);
	return 0;
}

static void set_env(struct step *s, const char *var, const char *val)
{
	spank_err_t rc = val[0] ? spank_setenv(s->sp, var, val, 1) : spank_unsetenv(s->sp, var);
	if (rc != ESPANK_SUCCESS)
		slurm_error("fabricbus: job %s: cannot %s %s: %s", s->step_id,
			    val[0] ? "set" : "unset", var, slurm_strerror(rc));
}

/* Unset every FABRICBUS_* first: a step started from inside another job
 * (srun in a batch script) inherits that node's values. */
static void clear_env(struct step *s)
{
	for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++)
		set_env(s, env_vars[i], "");
}

static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(verdict.msg, sizeof(verdict.msg), fmt, ap);
	va_end(ap);
	verdict.refuse = 1;
}

static void write_map_file(struct step *s, const struct fb_spank_jobmap *m)
{
	char name[128], path[FB_SPANK_MAPDIR_MAX + 160], err[PATH_MAX + 256];
	char *doc = json_dumps(m->doc, JSON_INDENT(1));
	if (!doc) {
		slurm_error("fabricbus: job %s: map file: out of memory", s->step_id);
		return;
	}
	snprintf(name, sizeof(name), "fabricbus-%s.%s.json", s->job_id, s->local);
	snprintf(path, sizeof(path), "%s%s%s", conf.mapdir, strcmp(conf.mapdir, "/") ? "/" : "",
		 name);
	size_t len = strlen(doc);
	doc[len] = '\n'; /* json_dumps' NUL becomes the file's final newline */
	int rc = fb_spank_write_file(conf.mapdir, name, doc, len + 1, s->uid, s->gid, err,
				     sizeof(err));
	free(doc);
	if (rc < 0) {
		slurm_error("fabricbus: job %s: map file not written (mapdir=%s in plugstack.conf): %s",
			    s->step_id, conf.mapdir, err);
		return;
	}
	set_env(s, "FABRICBUS_MAP_FILE", path);
}

static void export_map(struct step *s, const struct fb_spank_jobmap *m)
{
	const struct fb_spank_port *p = &m->local;
	write_map_file(s, m);
	set_env(s, "FABRICBUS_SWITCH", p->sw);
	set_env(s, "FABRICBUS_SWITCH_GUID", p->sw_guid);
	set_env(s, "FABRICBUS_SWITCH_PORT", p->sw_port);
	set_env(s, "FABRICBUS_LID", p->lid);
	set_env(s, "FABRICBUS_PORT_GUID", p->port_guid);
	set_env(s, "FABRICBUS_LINK_STATE", p->state);
	set_env(s, "FABRICBUS_NODES", m->nodes_env ? m->nodes_env : "");
}

/* The job's user for the registry: the name when the broker would take it,
 * else the uid in decimal. */
static void user_name(uid_t uid, char *out, size_t outsz)
{
	struct passwd pw, *res = NULL;
	char buf[16384];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && valid_name(res->pw_name))
		snprintf(out, outsz, "%s", res->pw_name);
	else
		snprintf(out, outsz, "%lu", (unsigned long)uid);
}

static void register_job(struct step *s)
{
	char user[NAME_MAX_LEN + 1], err[512];
	user_name(s->uid, user, sizeof(user));
	if (fb_spank_register(&conf, s->job_id, user, (const char *const *)s->nodes, s->n_nodes,
			      err, sizeof(err)) < 0)
		slurm_error("fabricbus: job %s: not registered with the broker: %s", s->step_id, err);
}

/* The broker could not be reached (a socket error: a plain errno) or sent
 * something that is not a fabric map (an fb_err code, -1000 and below): one
 * line, then go on or refuse as configured. The reason loses the
 * "host:port: " that fb_http puts first, the line names the broker once. */
static void broker_failed(struct step *s, int rc, const char *why)
{
	const char *what = rc > -1000 ? "unreachable" : "sent no usable map";
	size_t n = strlen(conf.broker);
	if (!strncmp(why, conf.broker, n) && !strncmp(why + n, ": ", 2))
		why += n + 2;
	if (conf.fail_unreachable)
		/* user_init prints it, to the user and the slurmd log */
		refuse("fabricbus: broker %s %s (%s); job %s refused "
		       "(on_unreachable=fail in plugstack.conf)", conf.broker, what, why, s->job_id);
	else
		slurm_error("fabricbus: broker %s %s (%s); job %s runs without the fabric map "
			    "(on_unreachable=continue)", conf.broker, what, why, s->step_id);
}

static void use_map(struct step *s, const struct fb_http_resp *r, int filtered)
{
	struct fb_spank_jobmap m;
	char err[512];
	if (fb_spank_map_build((const char *)r->body.data, r->body.len,
			       (const char *const *)s->nodes, s->n_nodes, s->local, s->job_id,
			       conf.broker, &m, err, sizeof(err)) < 0) {
		char why[600];
		snprintf(why, sizeof(why), "GET /fabric/map: %s", err);
		broker_failed(s, FB_EMALFORMED, why);
		return;
	}
	export_map(s, &m);
	if (conf.fail_on_down && m.n_down > 0) {
		char more[64] = "";
		if (m.n_down > 1)
			snprintf(more, sizeof(more), " (and %zu more down port%s)", m.n_down - 1,
				 m.n_down > 2 ? "s" : "");
		refuse("fabricbus: %s is down%s; job %s refused (fail_on_down=yes in plugstack.conf)",
		       m.down, more, s->job_id);
	}
	if (conf.do_register && s->nodeid == 0 && !verdict.refuse)
		register_job(s);
	slurm_debug("fabricbus: job %s on %s: %s/%s %s, %zu of %zu nodes in the %s", s->step_id,
		    s->local, m.local.sw[0] ? m.local.sw : "?",
		    m.local.sw_port[0] ? m.local.sw_port : "?",
		    m.local.state[0] ? m.local.state : "unknown", m.n_known, s->n_nodes,
		    filtered ? "job's part of the map" : "whole map");
	fb_spank_jobmap_free(&m);
}

static void step_start(spank_t sp)
{
	struct step s = {.sp = sp};
	struct fb_http_auth auth;
	struct fb_http_resp r;
	char err[512];
	char *list = NULL;
	int filtered = 0, rc = get_ids(&s);
	if (rc != 0) {
		if (rc < 0)
			slurm_error("fabricbus: cannot read the step's ids from slurmstepd");
		return; /* rc 1: the extern step runs no user task */
	}
	clear_env(&s);
	if (!(list = job_getenv(sp, "SLURM_JOB_NODELIST"))) {
		slurm_error("fabricbus: job %s: no SLURM_JOB_NODELIST in the job's environment",
			    s.step_id);
		return;
	}
	if (expand(list, &s.nodes, &s.n_nodes, err, sizeof(err)) < 0 ||
	    find_local(&s, err, sizeof(err)) < 0) {
		slurm_error("fabricbus: job %s: %s", s.step_id, err);
		goto out;
	}
	if (auth_start(&auth, err, sizeof(err)) < 0) {
		if (conf.fail_unreachable)
			refuse("fabricbus: %s; job %s refused (on_unreachable=fail in plugstack.conf)",
			       err, s.job_id);
		else
			slurm_error("fabricbus: %s; job %s runs without the fabric map "
				    "(on_unreachable=continue)", err, s.step_id);
		goto out;
	}
	if ((rc = fb_spank_fetch_map(&conf, list, &r, &filtered, err, sizeof(err))) < 0) {
		broker_failed(&s, rc, err);
	} else {
		use_map(&s, &r, filtered);
		fb_http_resp_free(&r);
	}
	auth_end(&auth);
out:
	free(list);
	if (s.nodes)
		free_names(s.nodes, s.n_nodes);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	return load_conf(ac, av);
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	if (load_conf(ac, av) < 0)
		return -1;
	verdict.refuse = 0;
	step_start(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	if (spank_context() == S_CTX_REMOTE && verdict.refuse)
		slurm_error("%s", verdict.msg);
	return 0;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
	(void)sp, (void)ac, (void)av;
	return (spank_context() == S_CTX_REMOTE && verdict.refuse) ? -1 : 0;
}

/* In slurmd's epilog process: the job id from Slurm, the node and the job's
 * node list from the epilog environment (SLURMD_NODENAME, SLURM_NODELIST). */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	char job_id[16], name[128], err[PATH_MAX + 256];
	uint32_t job = 0;
	const char *node = getenv("SLURMD_NODENAME");
	const char *list = getenv("SLURM_NODELIST");
	if (spank_context() != S_CTX_JOB_SCRIPT || load_conf(ac, av) < 0)
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job) != ESPANK_SUCCESS) {
		slurm_error("fabricbus: epilog: cannot read the job id");
		return 0;
	}
	snprintf(job_id, sizeof(job_id), "%" PRIu32, job);
	if (node && !valid_name(node))
		node = NULL;
	if (node) {
		snprintf(name, sizeof(name), "fabricbus-%s.%s.json", job_id, node);
		if (fb_spank_remove_file(conf.mapdir, name, err, sizeof(err)) < 0)
			slurm_error("fabricbus: job %s: epilog: %s", job_id, err);
	}
	if (!conf.do_register)
		return 0;
	/* Once per job: on its first node; on every node when that is unknown
	 * (DELETE is idempotent). */
	if (node && list) {
		hostlist_t hl = slurm_hostlist_create(list);
		char *first = hl ? slurm_hostlist_shift(hl) : NULL;
		int mine = !first || !strcmp(first, node);
		free(first);
		if (hl)
			slurm_hostlist_destroy(hl);
		if (!mine)
			return 0;
	}
	struct fb_http_auth auth;
	if (auth_start(&auth, err, sizeof(err)) < 0) {
		slurm_error("fabricbus: job %s: epilog: not unregistered from the broker: %s", job_id,
			    err);
		return 0;
	}
	if (fb_spank_unregister(&conf, job_id, err, sizeof(err)) < 0)
		slurm_error("fabricbus: job %s: epilog: not unregistered from the broker: %s", job_id,
			    err);
	auth_end(&auth);
	return 0;
}
