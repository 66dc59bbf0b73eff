/* snmp_netsnmp.h - net-snmp's process-wide set-up for the agent.
 *
 * net-snmp keeps global state (USM users, engine id, MIB tree); this is
 * the one place that touches it: no config files or persistent state of
 * net-snmp's own are read or written (everything comes from the agent's
 * config file), no MIB files are loaded (Debian ships none: OIDs are
 * numeric), and the USM users of the config are created.
 */
#ifndef SNMP_NETSNMP_H
#define SNMP_NETSNMP_H

#include "snmp_conf.h"

#include <stddef.h>

/* 0, or FB_ECONFIG with err naming the User= line net-snmp refused. */
int snmp_netsnmp_init(const char *prog, const struct snmp_conf *c, char *err, size_t errsz);
void snmp_netsnmp_shutdown(const char *prog);

#endif
