/* snmp_netsnmp.c - net-snmp's process-wide set-up for the agent. */
#include "snmp_netsnmp.h"

#include "fb_err.h"
#include "fb_log.h"

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t count_users(void)
{
	size_t n = 0;
	for (struct usmUser *u = usm_get_userList(); u; u = u->next)
		n++;
	return n;
}

static int hex_bytes(const char *hex, u_char *out, size_t max, size_t *len)
{
	size_t n = strlen(hex);
	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (u_char)v;
	}
	*len = n / 2;
	return 0;
}

/* net-snmp's own messages ("Authentication failed for ...") at debug
 * level: the receiver counts and logs refusals itself, rate-limited, so a
 * storm of bad packets cannot flood the log through the library. */
static int on_log(int major, int minor, void *server, void *client)
{
	(void)major;
	(void)minor;
	(void)client;
	const struct snmp_log_message *m = server;
	if (m && m->msg) {
		size_t n = strlen(m->msg);
		fb_log_debug("net-snmp: %.*s", (int)(n && m->msg[n - 1] == '\n' ? n - 1 : n), m->msg);
	}
	return 0;
}

int snmp_netsnmp_init(const char *prog, const struct snmp_conf *c, char *err, size_t errsz)
{
	/* Our config file is the only source of secrets and users. */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DONT_READ_CONFIGS, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_LOAD, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_DISABLE_PERSISTENT_SAVE, 1);
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_QUICK_PRINT, 1);
	setenv("MIBS", "", 1); /* no MIB files to look for */
	setenv("MIBDIRS", "", 1);
	snmp_disable_log();
	netsnmp_register_loghandler(NETSNMP_LOGHANDLER_CALLBACK, LOG_DEBUG);
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING, on_log, NULL);
	init_snmp(prog);
	if (c->engine_id[0]) {
		u_char id[32];
		size_t len;
		if (hex_bytes(c->engine_id + 2, id, sizeof(id), &len) ||
		    set_exact_engineID(id, len) != SNMPERR_SUCCESS)
			return fb_err_set(err, errsz, FB_ECONFIG, "EngineID=%s refused by net-snmp",
					  c->engine_id);
	}
	for (size_t i = 0; i < c->n_users; i++) {
		size_t before = count_users();
		char line[sizeof(c->users[i].line)];
		snprintf(line, sizeof(line), "%s", c->users[i].line);
		usm_parse_create_usmUser("createUser", line);
		memset(line, 0, sizeof(line));
		if (count_users() != before + 1)
			return fb_err_set(err, errsz, FB_ECONFIG, "User=%s: net-snmp could not create "
					  "it (an AUTH or PRIV this net-snmp lacks, or a duplicate?)",
					  c->users[i].name);
	}
	return 0;
}

void snmp_netsnmp_shutdown(const char *prog)
{
	snmp_shutdown(prog);
}
