/* fb_spank_map.c - keep the job's nodes of /fabric/map, derive its env. */
#include "fb_spank_map.h"

#include "fb_buf.h"
#include "fb_err.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string of printable ASCII that fits out, else "" (unknown). Env
 * values and log lines must not carry control bytes from the network. */
static void copy_str(const json_t *v, char *out, size_t outsz)
{
	out[0] = '\0';
	if (!json_is_string(v))
		return;
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n == 0 || n >= outsz)
		return;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* A JSON integer 0..UINT32_MAX as decimal, else "". */
static void copy_uint(const json_t *v, char *out, size_t outsz)
{
	out[0] = '\0';
	if (!json_is_integer(v))
		return;
	json_int_t x = json_integer_value(v);
	if (x < 0 || x > (json_int_t)UINT32_MAX)
		return;
	snprintf(out, outsz, "%lld", (long long)x);
}

static void port_fields(const json_t *p, struct fb_spank_port *o)
{
	copy_str(json_object_get(p, "Switch"), o->sw, sizeof(o->sw));
	copy_str(json_object_get(p, "SwitchGUID"), o->sw_guid, sizeof(o->sw_guid));
	copy_uint(json_object_get(p, "SwitchPort"), o->sw_port, sizeof(o->sw_port));
	copy_uint(json_object_get(p, "LID"), o->lid, sizeof(o->lid));
	copy_str(json_object_get(p, "PortGUID"), o->port_guid, sizeof(o->port_guid));
	copy_str(json_object_get(p, "LinkState"), o->state, sizeof(o->state));
}

/* The node's first port with "Technology":"IB", or NULL. */
static const json_t *first_ib_port(const json_t *node)
{
	const json_t *ports = json_object_get(node, "Ports");
	size_t i;
	const json_t *p;
	if (!json_is_array(ports))
		return NULL;
	json_array_foreach(ports, i, p) {
		const json_t *t = json_object_get(p, "Technology");
		if (json_is_object(p) && json_is_string(t) && !strcmp(json_string_value(t), "IB"))
			return p;
	}
	return NULL;
}

/* "leaf1/3" for a port, by switch and switch port when known, else by
 * device and port, else by its index. */
static void port_name(const json_t *p, size_t idx, char *out, size_t outsz)
{
	char a[FB_SPANK_VAL_MAX], b[16];
	copy_str(json_object_get(p, "Switch"), a, sizeof(a));
	copy_uint(json_object_get(p, "SwitchPort"), b, sizeof(b));
	if (a[0] && b[0]) {
		snprintf(out, outsz, "%s/%s", a, b);
		return;
	}
	copy_str(json_object_get(p, "Device"), a, sizeof(a));
	copy_uint(json_object_get(p, "Port"), b, sizeof(b));
	if (a[0] && b[0])
		snprintf(out, outsz, "%s/%s", a, b);
	else
		snprintf(out, outsz, "#%zu", idx);
}

/* Count the node's down ports; describe the first of the job in m->down. */
static void scan_down(const char *name, const json_t *node, struct fb_spank_jobmap *m)
{
	const json_t *ports = json_object_get(node, "Ports");
	size_t i;
	const json_t *p;
	if (!json_is_array(ports))
		return;
	json_array_foreach(ports, i, p) {
		const json_t *st = json_object_get(p, "LinkState");
		if (!json_is_object(p) || !json_is_string(st) || strcmp(json_string_value(st), "down"))
			continue;
		if (m->n_down++ == 0) {
			char pn[300];
			port_name(p, i, pn, sizeof(pn));
			snprintf(m->down, sizeof(m->down), "%s port %s", name, pn);
		}
	}
}

/* "name=switch:port" for FABRICBUS_NODES; nodes without both, or with a
 * switch name that would break the list (',' '='), are left out. */
static int nodes_env_add(struct fb_buf *b, const char *name, const json_t *node)
{
	const json_t *p = first_ib_port(node);
	struct fb_spank_port f;
	if (!p)
		return 0;
	port_fields(p, &f);
	if (!f.sw[0] || !f.sw_port[0] || strpbrk(f.sw, ",="))
		return 0;
	return fb_buf_printf(b, "%s%s=%s:%s", b->len ? "," : "", name, f.sw, f.sw_port);
}

/* Add the switch the port hangs off, once, under the key the map's
 * "Switches" uses: its GUID (as fabricbusd keys it), else its name. */
static int add_switch(json_t *out, const json_t *switches, const json_t *port)
{
	static const char *const keys[] = {"SwitchGUID", "Switch"};
	if (!json_is_object(switches))
		return 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const json_t *k = json_object_get(port, keys[i]);
		json_t *s = json_is_string(k) ? json_object_get(switches, json_string_value(k)) : NULL;
		if (!s)
			continue;
		if (json_object_get(out, json_string_value(k)))
			return 0;
		return json_object_set(out, json_string_value(k), s) ? -ENOMEM : 0;
	}
	return 0;
}

static int add_node_switches(json_t *out, const json_t *switches, const json_t *node)
{
	const json_t *ports = json_object_get(node, "Ports");
	size_t i;
	const json_t *p;
	if (!json_is_array(ports))
		return 0;
	json_array_foreach(ports, i, p)
		if (json_is_object(p) && add_switch(out, switches, p) < 0)
			return -ENOMEM;
	return 0;
}

/* The map file's document (header fields, then the job's part). */
static json_t *new_doc(const json_t *root, const char *job_id, const char *local,
		       const char *broker)
{
	json_t *doc = json_object();
	json_t *fabric = json_object_get(root, "Fabric");
	json_t *last = json_object_get(root, "LastEventId");
	if (!doc || json_object_set_new(doc, "JobId", json_string(job_id)) ||
	    json_object_set_new(doc, "Node", json_string(local)) ||
	    json_object_set_new(doc, "Broker", json_string(broker)) ||
	    (json_is_string(fabric) && json_object_set(doc, "Fabric", fabric)) ||
	    (json_is_integer(last) && json_object_set(doc, "LastEventId", last)) ||
	    json_object_set_new(doc, "JobNodes", json_array()) ||
	    json_object_set_new(doc, "Nodes", json_object()) ||
	    json_object_set_new(doc, "Unknown", json_array()) ||
	    json_object_set_new(doc, "Switches", json_object())) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* One job node: into the document, FABRICBUS_NODES, the down scan, and the
 * local port when it is the local node. */
static int add_node(struct fb_spank_jobmap *m, const json_t *root, const char *name,
		    const char *local, struct fb_buf *env)
{
	const json_t *nodes = json_object_get(root, "Nodes");
	json_t *node = json_object_get(nodes, name);
	if (json_array_append_new(json_object_get(m->doc, "JobNodes"), json_string(name)))
		return -ENOMEM;
	if (!json_is_object(node))
		return json_array_append_new(json_object_get(m->doc, "Unknown"), json_string(name))
			       ? -ENOMEM : 0;
	m->n_known++;
	if (json_object_set(json_object_get(m->doc, "Nodes"), name, node) ||
	    add_node_switches(json_object_get(m->doc, "Switches"), json_object_get(root, "Switches"),
			      node) < 0)
		return -ENOMEM;
	scan_down(name, node, m);
	if (env && nodes_env_add(env, name, node) < 0)
		return -ENOMEM;
	if (!strcmp(name, local)) {
		const json_t *p = first_ib_port(node);
		if (p) {
			port_fields(p, &m->local);
			m->local_known = 1;
		}
	}
	return 0;
}

int fb_spank_map_build(const char *body, size_t len, const char *const *nodes, size_t n,
		       const char *local, const char *job_id, const char *broker,
		       struct fb_spank_jobmap *m, char *err, size_t errsz)
{
	json_error_t je;
	struct fb_buf env = FB_BUF_INIT;
	int use_env = 1, rc = -ENOMEM;
	memset(m, 0, sizeof(*m));
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		/* jansson quotes the bytes it stopped at: no control bytes into
		 * the log line and the user's terminal */
		char text[sizeof(je.text)];
		size_t i = 0;
		for (; je.text[i] && i < sizeof(text) - 1; i++)
			text[i] = je.text[i] >= ' ' && je.text[i] <= '~' ? je.text[i] : '?';
		text[i] = '\0';
		return fb_err_set(err, errsz, FB_EMALFORMED,
				  "not JSON: %.120s at line %d column %d", text, je.line, je.column);
	}
	if (!json_is_object(root) || !json_is_object(json_object_get(root, "Nodes"))) {
		fb_err_set(err, errsz, FB_EMALFORMED, "not a fabric map: no \"Nodes\" object");
		json_decref(root);
		return FB_EMALFORMED;
	}
	if (!(m->doc = new_doc(root, job_id, local, broker)))
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (add_node(m, root, nodes[i], local, use_env ? &env : NULL) < 0)
			goto fail;
		if (use_env && env.len > FB_SPANK_NODES_ENV_MAX) {
			use_env = 0; /* too long for the environment; the file has it all */
			fb_buf_free(&env);
		}
	}
	if (use_env) {
		if (fb_buf_put_u8(&env, 0) < 0)
			goto fail;
		m->nodes_env = (char *)env.data; /* the buffer's bytes, now owned by m */
		env.data = NULL;
	}
	json_decref(root);
	return 0;
fail:
	fb_err_set(err, errsz, -ENOMEM, "out of memory");
	fb_buf_free(&env);
	json_decref(root);
	fb_spank_jobmap_free(m);
	return rc;
}

void fb_spank_jobmap_free(struct fb_spank_jobmap *m)
{
	json_decref(m->doc);
	free(m->nodes_env);
	memset(m, 0, sizeof(*m));
}
