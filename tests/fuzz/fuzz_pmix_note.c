/* fuzz_pmix_note.c - libFuzzer target for the step socket's lines
 * (adapters/pmix/pmix_note.c), which spank_fabricbus_pmix.so parses inside
 * slurmstepd, and for fabricbus-pmix's reading of the broker's documents
 * (pmix_route.c). Any crash, out-of-bounds read or leak is a bug, and so is
 * a broken promise: a decoded note has a negative code, a known range, at
 * most FBP_NODES_MAX non-empty NUL-terminated node names, and encodes again
 * into one line that decodes to the same fields. */
#include "pmix_note.h"
#include "pmix_route.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_note(const uint8_t *data, size_t size)
{
	struct fbp_note n, m;
	char err[256];
	int rc = fbp_note_decode((const char *)data, size, &n, err, sizeof(err));
	if (rc != 1)
		return;
	if (n.code >= 0 || (n.range != FBP_RANGE_SESSION && n.range != FBP_RANGE_NODES) ||
	    n.n_nodes > FBP_NODES_MAX)
		__builtin_trap();
	for (size_t i = 0; i < n.n_nodes; i++)
		if (!n.nodes[i][0] || !memchr(n.nodes[i], '\0', sizeof(n.nodes[i])))
			__builtin_trap();
	char *line = NULL;
	if (fbp_note_encode(&n, &line) < 0)
		return;
	if (strchr(line, '\n') || fbp_note_decode(line, strlen(line), &m, err, sizeof(err)) != 1 ||
	    m.event_id != n.event_id || m.code != n.code || m.n_nodes != n.n_nodes)
		__builtin_trap();
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_note(data, size);
	struct fbp_hello h;
	char err[256];
	(void)fbp_hello_decode((const char *)data, size, &h, err, sizeof(err));
	struct fbp_event ev;
	(void)fbp_event_parse((const char *)data, size, &ev, err, sizeof(err));
	return 0;
}
