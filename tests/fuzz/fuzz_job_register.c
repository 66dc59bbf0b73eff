/* fuzz_job_register.c - libFuzzer target for the POST /fabric/jobs body
 * parser (broker/jobs.c), which runs on the WebSocket thread over bytes from
 * the network. Any crash, out-of-bounds read or leak is a bug, and so is an
 * accepted registration that breaks what the parser promises. */
#include "jobs.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void check_accepted(const struct fb_job_reg *r)
{
	if (!fb_jobs_valid_id(r->job_id) || !fb_jobs_valid_name(r->user, strlen(r->user)))
		__builtin_trap();
	if (r->n_nodes == 0 || r->n_nodes > FB_JOB_NODES_MAX)
		__builtin_trap();
	for (size_t i = 0; i < r->n_nodes; i++) {
		if (!fb_jobs_valid_name(r->nodes[i], strlen(r->nodes[i])))
			__builtin_trap();
		if (i && strcmp(r->nodes[i - 1], r->nodes[i]) >= 0) /* sorted, unique */
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fb_job_reg r;
	char err[256];
	int rc = fb_jobs_parse_register((const char *)data, size, &r, err, sizeof(err));
	if (rc == 0) {
		check_accepted(&r);
		fb_job_reg_free(&r);
	} else if (r.nodes || r.n_nodes || memchr(err, '\0', sizeof(err)) == NULL) {
		__builtin_trap(); /* a refusal leaves nothing to free and a string */
	}
	return 0;
}
