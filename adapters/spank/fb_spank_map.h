/* fb_spank_map.h - one job's view of the broker's GET /fabric/map.
 *
 * Takes the response body (untrusted: whatever the broker, or whatever
 * answers on its port, sent), keeps the job's nodes, and derives what the
 * plugin hands to the job: the map file's document, the local node's
 * FABRICBUS_* values, FABRICBUS_NODES, and the first down port for
 * fail_on_down. Pure (jansson, no Slurm, no I/O) so the unit test can run it.
 *
 * The /fabric/map shape it reads (docs/spank.md has the full one):
 *   {"Fabric":"ibsim","LastEventId":N,
 *    "Nodes":{"node003":{"Ports":[{"Technology":"IB","Device":"ibsim0","Port":1,
 *       "PortGUID":"0x..","NodeGUID":"0x..","LID":5,"Switch":"leaf1",
 *       "SwitchGUID":"0x..","SwitchPort":3,"LinkState":"up"}],"Jobs":["12"]}},
 *    "Switches":{...}}
 * A field of the wrong type or with unprintable bytes is treated as unknown;
 * only a body that is not a JSON object with a "Nodes" object is refused.
 */
#ifndef FB_SPANK_MAP_H
#define FB_SPANK_MAP_H

#include <jansson.h>
#include <stddef.h>

#define FB_SPANK_MAP_MAX_BODY (64u << 20) /* bytes of /fabric/map accepted */
#define FB_SPANK_NODES_ENV_MAX (64u << 10) /* FABRICBUS_NODES longer: left out */
#define FB_SPANK_VAL_MAX 256               /* one FABRICBUS_* value, NUL included */

/* The local node's first IB port. An empty string is an unknown value (the
 * variable is then unset in the job). */
struct fb_spank_port {
	char sw[FB_SPANK_VAL_MAX];        /* FABRICBUS_SWITCH */
	char sw_guid[FB_SPANK_VAL_MAX];   /* FABRICBUS_SWITCH_GUID */
	char sw_port[16];                 /* FABRICBUS_SWITCH_PORT */
	char lid[16];                     /* FABRICBUS_LID */
	char port_guid[FB_SPANK_VAL_MAX]; /* FABRICBUS_PORT_GUID */
	char state[FB_SPANK_VAL_MAX];     /* FABRICBUS_LINK_STATE */
};

/* Owned by the caller; release with fb_spank_jobmap_free(). */
struct fb_spank_jobmap {
	json_t *doc;             /* the map file's document */
	struct fb_spank_port local;
	int local_known;         /* the local node has an IB port in the map */
	char *nodes_env;         /* FABRICBUS_NODES, or NULL when over the limit */
	size_t n_known;          /* job nodes found in the map */
	size_t n_down;           /* down ports over the job's nodes */
	char down[512];          /* the first one: "node003 port leaf1/3", or "" */
};

/* Build the job's view. nodes[0..n-1] are the job's nodes in job order,
 * local the node this runs on (may be absent from nodes), job_id and broker
 * go into the document as is. Returns 0 with *m filled, FB_EMALFORMED with
 * err saying what is wrong with the body ("not JSON: ... at line 1 column
 * 2", "no \"Nodes\" object"; printable ASCII only), or -ENOMEM. *m is left
 * empty on failure. */
int fb_spank_map_build(const char *body, size_t len, const char *const *nodes, size_t n,
		       const char *local, const char *job_id, const char *broker,
		       struct fb_spank_jobmap *m, char *err, size_t errsz);

void fb_spank_jobmap_free(struct fb_spank_jobmap *m);

#endif
