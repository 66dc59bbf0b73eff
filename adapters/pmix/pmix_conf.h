/* pmix_conf.h - fabricbus-pmix's settings (docs/pmix.md, CONFIGURATION).
 * Key=Value lines through the key-table engine of proto/util/fb_conf.c, -o
 * overrides after -f. */
#ifndef FBP_CONF_H
#define FBP_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum fbp_delivery { FBP_DELIVERY_SLURM = 0, FBP_DELIVERY_SERVER = 1 };

/* Kinds= bits */
enum {
	FBP_KIND_LINK_DOWN = 1 << 0, FBP_KIND_LINK_UP = 1 << 1, FBP_KIND_LINK_DEGRADED = 1 << 2,
	FBP_KIND_FLAP = 1 << 3, FBP_KIND_SWITCH_UNREACHABLE = 1 << 4,
	FBP_KIND_SWITCH_REACHABLE = 1 << 5,
	/* The broker's root causes (docs/topology.md): routed by their NoPath list. */
	FBP_KIND_SWITCH_FAILED = 1 << 6, FBP_KIND_SWITCH_DEGRADED = 1 << 7,
	FBP_KIND_SWITCH_RECOVERED = 1 << 8,
};

struct fbp_config {
	char broker_host[256];
	int broker_port;
	char broker_token_file[1024]; /* BrokerTokenFile: bearer token for Broker ("" = none) */
	char broker_tls_ca[1024];     /* BrokerTlsCa: https/wss to Broker, verified ("" = plain) */
	char node[64];           /* NodeName: this node's Slurm name */
	int delivery;            /* enum fbp_delivery */
	char step_dir[200];      /* StepDir: where spank_fabricbus_pmix.so listens */
	char server_uri[512];    /* ServerUri (Delivery=server) */
	char server_nspace[256]; /* ServerNamespace: the job to name affected procs of */
	char server_nodes[4096]; /* ServerNodes: the nodes that server's jobs run on */
	int code;                /* Code= */
	int range;               /* enum fbp_range */
	unsigned kinds;          /* Kinds= */
	uint64_t scan_ms;        /* ScanInterval */
	int log_level;
};

/* Defaults (NodeName: the short host name). */
void fbp_conf_defaults(struct fbp_config *c);
/* One Key=Value; origin names where it came from ("file:12", "-o"). 0 or
 * FB_ECONFIG with "origin: ..." in err. */
int fbp_conf_set(struct fbp_config *c, const char *key, const char *val, const char *origin,
		 char *err, size_t errsz);
int fbp_conf_load_file(struct fbp_config *c, const char *path, char *err, size_t errsz);
/* Every key as "Key=value", the way a file takes it back (--check-config). */
void fbp_conf_print(const struct fbp_config *c, FILE *f);
/* Settings that only conflict together. 0 or FB_ECONFIG. */
int fbp_conf_check(const struct fbp_config *c, char *err, size_t errsz);
/* Kind name ("link_down") -> its bit, 0 if not delivered by any setting. */
unsigned fbp_kind_bit(const char *kind);

#endif
