/* fuzz_map_select.c - libFuzzer target for GET /fabric/map?nodes=<expr>:
 * the hostlist expansion and the node selection over a map snapshot
 * (broker/http/ws_fabric_map.c fb_ws_fabric_select), as the lws thread runs
 * them. The snapshot is made once from a few registered jobs. A refusal
 * must say why; an accepted selection must read out as exactly as many
 * bytes as it announced, and parse as JSON. */
#include "fabric_map.h"
#include "fb_test_fabric.h"
#include "inventory.h"
#include "ws_fabric_map.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fb_fabric_snap *g_snap;

static void add_job(struct fb_fabric_map *m, const char *id, const char *fmt, int n)
{
	if (fbt_register_job(m, id, fmt, 1, n) == -ENOMEM)
		abort();
}

static void setup(void)
{
	struct fb_inventory *inv = fb_inventory_new();
	struct fb_fabric_map *m = fb_fabric_map_new(NULL, inv, "IB");
	if (!inv || !m)
		abort();
	add_job(m, "1", "node%03d", 40);
	add_job(m, "2", "r1n%02d", 12);
	add_job(m, "3", "gpu-%d.rack7", 9);
	g_snap = fb_fabric_map_render_snap(m, 7);
	if (!g_snap)
		abort();
	/* The snapshot is refcounted and owns its buffers: it outlives both. */
	fb_fabric_map_free(m);
	fb_inventory_free(inv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!g_snap)
		setup();
	struct fb_ws_map_body *b = NULL;
	char why[200];
	why[0] = '\0';
	int rc = fb_ws_fabric_select(g_snap, (const char *)data, size, &b, why, sizeof(why));
	if (rc != 0) {
		if (b || !why[0] || !memchr(why, '\0', sizeof(why)))
			__builtin_trap();
		return 0;
	}
	size_t want = fb_ws_map_body_len(b), got = 0;
	char *all = malloc(want + 1);
	if (!all)
		abort();
	for (size_t n; (n = fb_ws_map_body_read(b, all + got, want - got + 1)) > 0;)
		got += n;
	if (got != want)
		__builtin_trap();
	json_error_t je;
	json_t *j = json_loadb(all, got, 0, &je);
	if (!j)
		__builtin_trap();
	json_decref(j);
	free(all);
	fb_ws_map_body_free(b);
	return 0;
}
