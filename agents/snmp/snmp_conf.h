/* snmp_conf.h - fabricbus-agent-snmp's configuration file.
 *
 * Key=Value lines (proto/fb_conf.h syntax: '#' comments, keys
 * case-insensitive, errors name "path:line"). The file holds SNMP secrets
 * (communities, USM passphrases), so snmp_conf_load() refuses it unless it
 * is a regular file owned by the agent's user (or root) and neither group-
 * nor world-readable or -writable (chmod 600).
 *
 *   Community=NAME                  v1/v2c community accepted (repeatable;
 *                                   none: every v1/v2c packet is refused)
 *   User=NAME AUTH AUTHPASS PRIV PRIVPASS [ENGINEID]
 *                                   USM user, authPriv only. AUTH: MD5, SHA,
 *                                   SHA-224, SHA-256, SHA-384, SHA-512; PRIV:
 *                                   DES, AES, AES-192, AES-256. ENGINEID (hex,
 *                                   0x...) is the sending switch's engine for
 *                                   traps; without it the user is ours (INFORMs)
 *   EngineID=0xHEX                  this agent's snmpEngineID (default: net-snmp's)
 *   Switch=ADDRESS NAME [CLASS]     the switch at ADDRESS is called NAME; its
 *                                   ports have link class CLASS (host, isl,
 *                                   uplink, unknown; default LinkClass)
 *   LinkClass=CLASS                 default link class of switch ports (unknown)
 *   Trap=OID SEVERITY [KIND]        an extra trap OID (numeric) becomes an
 *                                   event of KIND (default port_state) at
 *                                   SEVERITY (OK, Warning, Critical)
 *   Poll=ADDRESS[:PORT] COMMUNITY   poll this switch's IF-MIB with SNMPv2c
 *   Poll=ADDRESS[:PORT] v3 USER     ... with SNMPv3 authPriv as the User= line
 *                                   USER (its ENGINEID, if given, is the
 *                                   switch's: no discovery at start)
 *
 * Ownership: snmp_conf owns its arrays; snmp_conf_free() releases them.
 */
#ifndef SNMP_CONF_H
#define SNMP_CONF_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define SNMP_CONF_OID_MAX 64   /* sub-identifiers */
#define SNMP_CONF_STR_MAX 128  /* community, user name, passphrase */

struct snmp_conf_switch {
	char addr[FB_ADDR_MAX];
	char name[FB_NAME_MAX];
	uint8_t link_class;
};

struct snmp_conf_trap {
	uint32_t oid[SNMP_CONF_OID_MAX];
	size_t oid_len;
	uint8_t severity, kind;
};

struct snmp_conf_user {
	/* the createUser line net-snmp's USM parses: [-e ENGINE] NAME AUTH
	 * PASS PRIV PASS */
	char line[4 * SNMP_CONF_STR_MAX + 96];
	char name[SNMP_CONF_STR_MAX];
	/* the same, parsed, for a v3 poll session */
	char auth[16], priv[16];
	char authpass[SNMP_CONF_STR_MAX], privpass[SNMP_CONF_STR_MAX];
	char engine[2 * 32 + 3]; /* "0x..." or "" */
};

struct snmp_conf_poll {
	char peer[FB_ADDR_MAX + 8]; /* "udp:ADDRESS:PORT" form for net-snmp */
	char addr[FB_ADDR_MAX];     /* as written, without the port */
	char community[SNMP_CONF_STR_MAX];
	char user[SNMP_CONF_STR_MAX];  /* SNMPv3: a User= name; "" for v2c */
};

struct snmp_conf {
	char (*communities)[SNMP_CONF_STR_MAX];
	size_t n_communities;
	struct snmp_conf_user *users;
	size_t n_users;
	struct snmp_conf_switch *switches;
	size_t n_switches;
	struct snmp_conf_trap *traps;
	size_t n_traps;
	struct snmp_conf_poll *polls;
	size_t n_polls;
	char engine_id[2 * 32 + 3];
	uint8_t link_class; /* default for switch ports */
};

/* Check the file's owner and mode, then read it into c (zeroed first).
 * 0, or FB_ECONFIG / negative errno with the reason in err. On failure c
 * holds nothing to free. */
int snmp_conf_load(struct snmp_conf *c, const char *path, char *err, size_t errsz);
/* Parse one Key=Value (also used by tests). origin names it in errors. */
int snmp_conf_line(struct snmp_conf *c, const char *key, const char *val, const char *origin,
		   char *err, size_t errsz);
void snmp_conf_free(struct snmp_conf *c);

/* Lookups; NULL / 0 when absent. */
const struct snmp_conf_switch *snmp_conf_switch(const struct snmp_conf *c, const char *addr);
const struct snmp_conf_user *snmp_conf_user(const struct snmp_conf *c, const char *name);
const struct snmp_conf_trap *snmp_conf_trap(const struct snmp_conf *c, const uint32_t *oid,
					    size_t len);
int snmp_conf_community_ok(const struct snmp_conf *c, const char *s, size_t len);

/* "1.3.6.1.6.3.1.1.5.3" (a leading '.' allowed) -> sub-ids. 0 or -EINVAL. */
int snmp_conf_parse_oid(const char *s, uint32_t *oid, size_t max, size_t *len);

#endif
