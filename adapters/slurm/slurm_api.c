/* slurm_api.c - libslurm: read nodes, update nodes, find running jobs. */
#include "slurm_api.h"

#include "slurm_pub.h"

#include "fb_err.h"

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void fbs_slurm_init(void) { slurm_init(NULL); }
void fbs_slurm_fini(void) { slurm_fini(); }

static int slurm_fail(const char *what, char *err, size_t errsz)
{
	int e = slurm_get_errno();
	return fb_err_set(err, errsz, -1, "%s: %s (Slurm error %d)", what, slurm_strerror(e), e);
}

static int snode_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fbs_snode *)a)->name, ((const struct fbs_snode *)b)->name);
}

static int cap_base(const char *part, struct fbs_snodes *out, char *err, size_t errsz)
{
	out->cap_base = (unsigned)out->n;
	if (!part || !*part)
		return 0;
	partition_info_msg_t *pm = NULL;
	if (slurm_load_partitions(0, &pm, SHOW_ALL) != SLURM_SUCCESS)
		return slurm_fail("slurm_load_partitions", err, errsz);
	out->cap_partition_missing = 1;
	out->cap_base = 0;
	for (uint32_t i = 0; i < pm->record_count; i++) {
		const partition_info_t *p = &pm->partition_array[i];
		if (p->name && strcmp(p->name, part) == 0) {
			out->cap_base = p->total_nodes;
			out->cap_partition_missing = 0;
		}
	}
	slurm_free_partition_info_msg(pm);
	return 0;
}

int fbs_slurm_load_nodes(const char *cap_partition, struct fbs_snodes *out, char *err, size_t errsz)
{
	memset(out, 0, sizeof(*out));
	node_info_msg_t *nm = NULL;
	if (slurm_load_node(0, &nm, SHOW_ALL) != SLURM_SUCCESS)
		return slurm_fail("slurm_load_node", err, errsz);
	out->v = calloc(nm->record_count ? nm->record_count : 1, sizeof(*out->v));
	if (!out->v) {
		slurm_free_node_info_msg(nm);
		return fb_err_set(err, errsz, -1,
				  "out of memory reading %u nodes", nm->record_count);
	}
	for (uint32_t i = 0; i < nm->record_count; i++) {
		const node_info_t *ni = &nm->node_array[i];
		if (!ni->name || strlen(ni->name) >= FB_NAME_MAX)
			continue; /* a hidden or unnamed record */
		struct fbs_snode *s = &out->v[out->n++];
		strcpy(s->name, ni->name);
		s->state = ni->node_state;
		s->drained = !!(ni->node_state & NODE_STATE_DRAIN);
		snprintf(s->reason, sizeof(s->reason), "%s", ni->reason ? ni->reason : "");
	}
	slurm_free_node_info_msg(nm);
	qsort(out->v, out->n, sizeof(*out->v), snode_cmp);
	if (cap_base(cap_partition, out, err, errsz)) {
		fbs_snodes_free(out);
		return -1;
	}
	return 0;
}

const struct fbs_snode *fbs_snodes_find(const struct fbs_snodes *s, const char *name)
{
	struct fbs_snode key;
	if (strlen(name) >= sizeof(key.name))
		return NULL;
	strcpy(key.name, name);
	return s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), snode_cmp) : NULL;
}

void fbs_snodes_free(struct fbs_snodes *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

char *fbs_slurm_hostlist(const char *const *names, size_t n)
{
	hostlist_t hl = slurm_hostlist_create(NULL);
	if (!hl)
		return NULL;
	for (size_t i = 0; i < n; i++)
		slurm_hostlist_push_host(hl, names[i]);
	slurm_hostlist_uniq(hl);
	char *s = slurm_hostlist_ranged_string_malloc(hl);
	slurm_hostlist_destroy(hl);
	return s;
}

int fbs_slurm_update(const char *hostlist, int drain, const char *reason, char *err, size_t errsz)
{
	update_node_msg_t m;
	slurm_init_update_node_msg(&m);
	/* libslurm takes char *, and only reads them */
	m.node_names = (char *)hostlist;
	m.node_state = drain ? NODE_STATE_DRAIN : NODE_STATE_UNDRAIN;
	m.reason = drain ? (char *)reason : NULL;
	m.reason_uid = (uint32_t)getuid();
	if (slurm_update_node(&m) != SLURM_SUCCESS)
		return slurm_fail(drain ? "slurm_update_node State=DRAIN" : "slurm_update_node "
				  "State=UNDRAIN", err, errsz);
	return 0;
}

int fbs_slurm_jobs(const char *const *names, size_t n, char (*jobs)[FB_JOBS_MAX], char *err,
		   size_t errsz)
{
	for (size_t i = 0; i < n; i++)
		jobs[i][0] = '\0';
	job_info_msg_t *jm = NULL;
	if (slurm_load_jobs(0, &jm, SHOW_ALL) != SLURM_SUCCESS)
		return slurm_fail("slurm_load_jobs", err, errsz);
	for (uint32_t k = 0; k < jm->record_count; k++) {
		const slurm_job_info_t *j = &jm->job_array[k];
		if ((j->job_state & JOB_STATE_BASE) != JOB_RUNNING || !j->nodes)
			continue;
		hostlist_t hl = slurm_hostlist_create(j->nodes);
		if (!hl)
			continue;
		for (size_t i = 0; i < n; i++)
			if (slurm_hostlist_find(hl, names[i]) >= 0)
				(void)fbs_jobs_add(jobs[i], j->job_id); /* as many as fit */
		slurm_hostlist_destroy(hl);
	}
	slurm_free_job_info_msg(jm);
	return 0;
}

int fbs_slurm_job_state(uint32_t job_id, int *state, char *err, size_t errsz)
{
	job_info_msg_t *jm = NULL;
	if (slurm_load_job(&jm, job_id, SHOW_ALL) != SLURM_SUCCESS) {
		if (slurm_get_errno() == ESLURM_INVALID_JOB_ID) {
			*state = FBS_JOB_UNKNOWN; /* purged after MinJobAge, or never existed */
			return 0;
		}
		return slurm_fail("slurm_load_job", err, errsz);
	}
	*state = FBS_JOB_ENDED;
	for (uint32_t k = 0; jm && k < jm->record_count; k++) {
		uint32_t s = jm->job_array[k].job_state & JOB_STATE_BASE;
		if (s == JOB_PENDING || s == JOB_RUNNING || s == JOB_SUSPENDED)
			*state = FBS_JOB_ACTIVE; /* an array or het job: any part still on */
	}
	slurm_free_job_info_msg(jm);
	return 0;
}
