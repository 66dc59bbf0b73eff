/* fuzz_spank_map.c - libFuzzer target for the SPANK plugin's reading of
 * GET /fabric/map?nodes= (adapters/spank/fb_spank_map.c fb_spank_map_build),
 * which runs inside slurmstepd at every step start: the job's view of the
 * map for a fixed job of a few nodes. A refusal must say why in printable
 * ASCII and leave the job map empty. */
#include "fb_spank_map.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const nodes[] = { "node001", "node003", "node010", "gpu-1.rack7" };
	struct fb_spank_jobmap m;
	memset(&m, 0, sizeof(m));
	char err[256];
	err[0] = '\0';
	int rc = fb_spank_map_build((const char *)data, size, nodes, 4, "node003", "4242",
				    "127.0.0.1:7412", &m, err, sizeof(err));
	if (rc != 0) {
		if (m.doc || m.nodes_env || !err[0] || !memchr(err, '\0', sizeof(err)))
			__builtin_trap();
		for (const char *s = err; *s; s++)
			if (*s < ' ' || *s > '~')
				__builtin_trap();
	}
	fb_spank_jobmap_free(&m);
	return 0;
}
