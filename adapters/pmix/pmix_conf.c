/* pmix_conf.c - fabricbus-pmix's settings (pmix_conf.h). */
#include "pmix_conf.h"
#include "pmix_note.h"

#include "fb_addr.h"
#include "fb_conf.h"
#include "fb_err.h"
#include "fb_hostlist.h"
#include "fb_log.h"
#include "fb_text.h"

#include <pmix_common.h>
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
};

unsigned fbp_kind_bit(const char *kind)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kind, kinds[i].name) == 0)
			return kinds[i].bit;
	return 0;
}

void fbp_conf_defaults(struct fbp_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->broker_host, sizeof(c->broker_host), "127.0.0.1");
	c->broker_port = 7412;
	char host[256] = "";
	if (gethostname(host, sizeof(host) - 1) == 0)
		host[strcspn(host, ".")] = '\0';
	snprintf(c->node, sizeof(c->node), "%s", host);
	c->delivery = FBP_DELIVERY_SLURM;
	snprintf(c->step_dir, sizeof(c->step_dir), "/run/fabricbus/pmix");
	c->code = PMIX_FABRIC_UPDATED;
	c->range = FBP_RANGE_SESSION;
	c->kinds = FBP_KIND_LINK_DOWN | FBP_KIND_LINK_UP | FBP_KIND_LINK_DEGRADED | FBP_KIND_FLAP |
		   FBP_KIND_SWITCH_UNREACHABLE | FBP_KIND_SWITCH_REACHABLE;
	c->scan_ms = 200;
	c->log_level = FB_LOG_INFO;
}

static int set_kinds(struct fbp_config *c, const char *val, const char *origin, char *err,
		     size_t errsz)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", val);
	unsigned bits = 0;
	for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		unsigned b = fbp_kind_bit(t);
		if (!b)
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "%s: Kinds: unknown kind '%s' (known: link_down, link_up, "
					  "link_degraded, flap, switch_unreachable, switch_reachable)",
					  origin, t);
		bits |= b;
	}
	c->kinds = bits;
	return 0;
}

/* PMIX_FABRIC_UPDATED, or a site code below PMIX_EXTERNAL_ERR_BASE. */
static int set_code(struct fbp_config *c, const char *val, const char *origin, char *err,
		    size_t errsz)
{
	if (!strcasecmp(val, "PMIX_FABRIC_UPDATED") || !strcasecmp(val, "fabric_updated")) {
		c->code = PMIX_FABRIC_UPDATED;
		return 0;
	}
	char *end;
	long v = strtol(val, &end, 10);
	if (*val && !*end && v < PMIX_EXTERNAL_ERR_BASE && v > -1000000) {
		c->code = (int)v;
		return 0;
	}
	return fb_err_set(err, errsz, FB_ECONFIG,
			  "%s: Code: '%s' is neither PMIX_FABRIC_UPDATED nor a site code below "
			  "PMIX_EXTERNAL_ERR_BASE (%d), e.g. %d", origin, val, PMIX_EXTERNAL_ERR_BASE,
			  PMIX_EXTERNAL_ERR_BASE - 1);
}

static int set_str(char *dst, size_t sz, const char *key, const char *val, const char *origin,
		   char *err, size_t errsz)
{
	if (strlen(val) >= sz)
		return fb_err_set(err, errsz, FB_ECONFIG, "%s: %s: longer than %zu bytes", origin, key,
				  sz - 1);
	memcpy(dst, val, strlen(val) + 1);
	return 0;
}

int fbp_conf_set(struct fbp_config *c, const char *key, const char *val, const char *origin,
		 char *err, size_t errsz)
{
	if (!strcasecmp(key, "Broker")) {
		if (fb_addr_parse(val, "127.0.0.1", c->broker_host, sizeof(c->broker_host),
				  &c->broker_port) < 0)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: Broker: expected HOST:PORT, got '%s'",
					  origin, val);
		return 0;
	}
	if (!strcasecmp(key, "NodeName")) {
		if (!fb_text_is_name(val, strlen(val)))
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: NodeName: '%s' is not a node name",
					  origin, val);
		return set_str(c->node, sizeof(c->node), key, val, origin, err, errsz);
	}
	if (!strcasecmp(key, "Delivery")) {
		if (!strcasecmp(val, "slurm"))
			c->delivery = FBP_DELIVERY_SLURM;
		else if (!strcasecmp(val, "server"))
			c->delivery = FBP_DELIVERY_SERVER;
		else
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "%s: Delivery: '%s' (expected slurm or server)", origin, val);
		return 0;
	}
	if (!strcasecmp(key, "StepDir")) {
		if (val[0] != '/')
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: StepDir: '%s' is not an absolute path",
					  origin, val);
		return set_str(c->step_dir, sizeof(c->step_dir), key, val, origin, err, errsz);
	}
	if (!strcasecmp(key, "ServerUri"))
		return set_str(c->server_uri, sizeof(c->server_uri), key, val, origin, err, errsz);
	if (!strcasecmp(key, "ServerNamespace"))
		return set_str(c->server_nspace, sizeof(c->server_nspace), key, val, origin, err, errsz);
	if (!strcasecmp(key, "ServerNodes")) {
		char why[200];
		if (val[0] && fb_hostlist_expand(val, strlen(val), 65536, NULL, NULL, NULL, why, sizeof(why)) < 0)
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: ServerNodes: %s", origin, why);
		return set_str(c->server_nodes, sizeof(c->server_nodes), key, val, origin, err, errsz);
	}
	if (!strcasecmp(key, "Code"))
		return set_code(c, val, origin, err, errsz);
	if (!strcasecmp(key, "Range")) {
		if (!strcasecmp(val, "session"))
			c->range = FBP_RANGE_SESSION;
		else if (!strcasecmp(val, "nodes"))
			c->range = FBP_RANGE_NODES;
		else
			return fb_err_set(err, errsz, FB_ECONFIG, "%s: Range: '%s' (expected session or nodes)",
					  origin, val);
		return 0;
	}
	if (!strcasecmp(key, "Kinds"))
		return set_kinds(c, val, origin, err, errsz);
	if (!strcasecmp(key, "ScanInterval")) {
		uint64_t ms;
		if (fb_conf_parse_duration_ms(val, &ms) < 0 || ms < 10 || ms > 60000)
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "%s: ScanInterval: '%s' (expected 10ms..60s)", origin, val);
		c->scan_ms = (int)ms;
		return 0;
	}
	if (!strcasecmp(key, "LogLevel")) {
		int l = fb_log_level_parse(val);
		if (l < 0)
			return fb_err_set(err, errsz, FB_ECONFIG,
					  "%s: LogLevel: '%s' (expected error, warn, info or debug)", origin, val);
		c->log_level = l;
		return 0;
	}
	return fb_err_set(err, errsz, FB_ECONFIG,
			  "%s: unknown key '%s' (known: Broker, NodeName, Delivery, StepDir, ServerUri, "
			  "ServerNamespace, ServerNodes, Code, Range, Kinds, ScanInterval, LogLevel)",
			  origin, key);
}

static int file_line(void *arg, const char *key, const char *val, const char *origin, int lineno,
		     char *err, size_t errsz)
{
	(void)lineno;
	return fbp_conf_set(arg, key, val, origin, err, errsz);
}

int fbp_conf_load_file(struct fbp_config *c, const char *path, char *err, size_t errsz)
{
	return fb_conf_read_file(path, file_line, c, err, errsz);
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
