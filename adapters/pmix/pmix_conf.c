/* pmix_conf.c - fabricbus-pmix's settings (pmix_conf.h). */
#include "pmix_conf.h"
#include "pmix_note.h"

#include "fb_addr.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_hostlist.h"
#include "fb_text.h"

#include <pmix_common.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const struct { const char *name; unsigned bit; } kinds[] = {
	{"link_down", FBP_KIND_LINK_DOWN}, {"link_up", FBP_KIND_LINK_UP},
	{"link_degraded", FBP_KIND_LINK_DEGRADED}, {"flap", FBP_KIND_FLAP},
	{"switch_unreachable", FBP_KIND_SWITCH_UNREACHABLE},
	{"switch_reachable", FBP_KIND_SWITCH_REACHABLE},
	{"switch_failed", FBP_KIND_SWITCH_FAILED}, {"switch_degraded", FBP_KIND_SWITCH_DEGRADED},
	{"switch_recovered", FBP_KIND_SWITCH_RECOVERED},
};

unsigned fbp_kind_bit(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i].name) == 0)
			return kinds[i].bit;
	return 0;
}

/* Kinds: a comma-separated list of kind names, any order. */
static int parse_kinds(void *cfg, const struct fb_conf_key *k, const char *val, char *why,
		       size_t whysz)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", val);
	unsigned bits = 0;
	for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		unsigned b = fbp_kind_bit(t);
		if (!b)
			return fb_err_set(why, whysz, FB_ECONFIG,
					  "unknown kind '%s' (known: link_down, link_up, link_degraded, "
					  "flap, switch_unreachable, switch_reachable, switch_failed, "
					  "switch_degraded, switch_recovered)", t);
		bits |= b;
	}
	*(unsigned *)((char *)cfg + k->off) = bits;
	return 0;
}

static void format_kinds(const void *cfg, const struct fb_conf_key *k, char *out, size_t outsz)
{
	unsigned bits = *(const unsigned *)((const char *)cfg + k->off);
	size_t off = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && off < outsz; i++)
		if (bits & kinds[i].bit)
			off += (size_t)snprintf(out + off, outsz - off, "%s%s", off ? "," : "",
						kinds[i].name);
}

/* PMIX_FABRIC_UPDATED, or a site code below PMIX_EXTERNAL_ERR_BASE. */
static int parse_code(void *cfg, const struct fb_conf_key *k, const char *val, char *why,
		      size_t whysz)
{
	int *code = (int *)((char *)cfg + k->off);
	if (!strcasecmp(val, "PMIX_FABRIC_UPDATED") || !strcasecmp(val, "fabric_updated")) {
		*code = PMIX_FABRIC_UPDATED;
		return 0;
	}
	char *end;
	long v = strtol(val, &end, 10);
	if (*val && !*end && v < PMIX_EXTERNAL_ERR_BASE && v > -1000000) {
		*code = (int)v;
		return 0;
	}
	return fb_err_set(why, whysz, FB_ECONFIG,
			  "expected PMIX_FABRIC_UPDATED or a site code below PMIX_EXTERNAL_ERR_BASE "
			  "(%d), e.g. %d", PMIX_EXTERNAL_ERR_BASE, PMIX_EXTERNAL_ERR_BASE - 1);
}

/* By name when it is PMIX_FABRIC_UPDATED: its number is not a site code. */
static void format_code(const void *cfg, const struct fb_conf_key *k, char *out, size_t outsz)
{
	int code = *(const int *)((const char *)cfg + k->off);
	if (code == PMIX_FABRIC_UPDATED)
		snprintf(out, outsz, "PMIX_FABRIC_UPDATED");
	else
		snprintf(out, outsz, "%d", code);
}

/* Broker: HOST:PORT, the host 127.0.0.1 when left out. */
static int parse_broker(void *cfg, const struct fb_conf_key *k, const char *val, char *why,
			size_t whysz)
{
	struct fbp_config *c = cfg;
	(void)k;
	if (fb_addr_parse(val, "127.0.0.1", c->broker_host, sizeof(c->broker_host),
			  &c->broker_port) < 0)
		return fb_err_set(why, whysz, FB_ECONFIG, "expected HOST:PORT");
	return 0;
}

static void format_broker(const void *cfg, const struct fb_conf_key *k, char *out, size_t outsz)
{
	const struct fbp_config *c = cfg;
	(void)k;
	snprintf(out, outsz, strchr(c->broker_host, ':') ? "[%s]:%d" : "%s:%d", c->broker_host,
		 c->broker_port);
}

/* ServerNodes: a hostlist, or empty for NodeName. */
static int parse_nodes(void *cfg, const struct fb_conf_key *k, const char *val, char *why,
		       size_t whysz)
{
	if (strlen(val) >= k->size)
		return fb_err_set(why, whysz, FB_ECONFIG, "longer than %zu bytes", k->size - 1);
	if (val[0] && fb_hostlist_expand(val, strlen(val), 65536, NULL, NULL, NULL, why, whysz) < 0)
		return FB_ECONFIG;
	memcpy((char *)cfg + k->off, val, strlen(val) + 1);
	return 0;
}

static void format_nodes(const void *cfg, const struct fb_conf_key *k, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s", (const char *)cfg + k->off);
}

static int node_ok(const char *v)
{
	return fb_text_is_name(v, strlen(v));
}

static int absolute(const char *v)
{
	return v[0] == '/';
}

static const char *const delivery_names[] = { "slurm", "server", NULL }; /* enum fbp_delivery */
static const char *const range_names[] = { "session", "nodes", NULL };   /* enum fbp_range */

#define F(f) offsetof(struct fbp_config, f)
#define S(f) sizeof(((struct fbp_config *)0)->f)

/* The keys of docs/pmix.md (fb_conf.h); NodeName's default is the host's name. */
static const struct fb_conf_key keys[] = {
	{ "Broker", FB_CONF_CUSTOM, .parse = parse_broker, .format = format_broker, .def = "127.0.0.1:7412",
	  .help = "fabricbusd's HttpListen (/ws/events, /fabric/map)" },
	FB_CONF_BROKER_AUTH_KEYS(struct fbp_config, broker_token_file, broker_tls_ca),
	{ "NodeName", FB_CONF_STRING, F(node), 0, S(node), .ok = node_ok,
	  .expect = "expected a node name of at most %zu bytes", .help = "this node's Slurm name" },
	{ "Delivery", FB_CONF_ENUM, F(delivery), .names = delivery_names, .def = "slurm",
	  .help = "slurm (steps via spank_fabricbus_pmix.so) or server (a PMIx tool)" },
	{ "StepDir", FB_CONF_STRING, F(step_dir), 0, S(step_dir), .ok = absolute,
	  .expect = "expected an absolute path of at most %zu bytes", .def = "/run/fabricbus/pmix",
	  .help = "the plugin's dir= (Delivery=slurm)" },
	{ "ServerUri", FB_CONF_STRING, F(server_uri), 0, S(server_uri), .flags = FB_CONF_EMPTY_OK,
	  .expect = "longer than %zu bytes", .def = "",
	  .help = "the server's PMIX_SERVER_URI (Delivery=server)" },
	{ "ServerNamespace", FB_CONF_STRING, F(server_nspace), 0, S(server_nspace),
	  .flags = FB_CONF_EMPTY_OK, .expect = "longer than %zu bytes", .def = "",
	  .help = "the job whose processes are named (Delivery=server)" },
	{ "ServerNodes", FB_CONF_CUSTOM, F(server_nodes), 0, S(server_nodes), .parse = parse_nodes,
	  .format = format_nodes, .def = "", .help = "the nodes that server's jobs run on (Delivery=server)" },
	{ "Code", FB_CONF_CUSTOM, F(code), .parse = parse_code, .format = format_code, .def = "PMIX_FABRIC_UPDATED",
	  .help = "or a site code below PMIX_EXTERNAL_ERR_BASE, e.g. -3001" },
	{ "Range", FB_CONF_ENUM, F(range), .names = range_names, .def = "session",
	  .help = "session (all of the job here) or nodes (processes on the affected nodes)" },
	{ "Kinds", FB_CONF_CUSTOM, F(kinds), .parse = parse_kinds, .format = format_kinds,
	  .def = "link_down,link_up,link_degraded,flap,switch_unreachable,switch_reachable,"
		 "switch_failed,switch_degraded,switch_recovered",
	  .help = "the kinds delivered" },
	{ "ScanInterval", FB_CONF_DURATION_MS, F(scan_ms), .min = 10, .max = 60000, .def = "200ms",
	  .help = "how often StepDir is scanned for new steps" },
	{ "LogLevel", FB_CONF_LOGLEVEL, F(log_level), .def = "info",
	  .help = "error, warn, info or debug" },
};

static const struct fb_conf_table table = {
	keys, sizeof(keys) / sizeof(keys[0]), { 0 }, "fabricbus-pmix --help", 0,
};

void fbp_conf_defaults(struct fbp_config *c)
{
	char err[256], host[256] = "";
	memset(c, 0, sizeof(*c));
	if (fb_conf_apply_defaults(&table, c, err, sizeof(err)))
		abort(); /* a bad default is a bug that test_pmix_route catches */
	if (gethostname(host, sizeof(host) - 1) == 0)
		host[strcspn(host, ".")] = '\0';
	snprintf(c->node, sizeof(c->node), "%.*s", (int)sizeof(c->node) - 1, host);
}

int fbp_conf_set(struct fbp_config *c, const char *key, const char *val, const char *origin,
		 char *err, size_t errsz)
{
	return fb_conf_set(&table, c, key, val, origin, err, errsz);
}

int fbp_conf_load_file(struct fbp_config *c, const char *path, char *err, size_t errsz)
{
	return fb_conf_load_file(&table, c, path, err, errsz);
}

void fbp_conf_print(const struct fbp_config *c, FILE *f)
{
	fb_conf_print(&table, c, f);
}

int fbp_conf_check(const struct fbp_config *c, char *err, size_t errsz)
{
	if (!c->node[0])
		return fb_err_set(err, errsz, FB_ECONFIG, "NodeName: empty and the host has no name; set it");
	if (c->delivery == FBP_DELIVERY_SERVER && !c->server_uri[0])
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "Delivery=server needs ServerUri (the server's PMIX_SERVER_URI)");
	if (c->delivery == FBP_DELIVERY_SERVER && c->range == FBP_RANGE_NODES && !c->server_nspace[0])
		return fb_err_set(err, errsz, FB_ECONFIG,
				  "Range=nodes with Delivery=server needs ServerNamespace (whose processes to name)");
	return 0;
}
