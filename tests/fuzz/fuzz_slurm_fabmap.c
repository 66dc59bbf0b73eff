/* fuzz_slurm_fabmap.c - libFuzzer target for fabricbus-slurm's reading of
 * GET /fabric/map (adapters/slurm/slurm_map.c fbs_fabmap_parse), which
 * seeds its drain policy at start. A refusal must say why, and a parsed map
 * is freed whole. */
#include "slurm_map.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fbs_fabmap m;
	memset(&m, 0, sizeof(m));
	char err[256];
	err[0] = '\0';
	int rc = fbs_fabmap_parse((const char *)data, size, &m, err, sizeof(err));
	if (rc != 0 && (!err[0] || !memchr(err, '\0', sizeof(err))))
		__builtin_trap();
	fbs_fabmap_free(&m);
	return 0;
}
