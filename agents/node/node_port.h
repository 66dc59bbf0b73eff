/* node_port.h - one local adapter port as the node agent sees it.
 *
 * node_ib.c and node_eth.c fill these from libibumad and rtnetlink; main.c
 * diffs successive scans and turns differences into events. Plain values,
 * no pointers: a scan is an array the caller owns.
 */
#ifndef NODE_PORT_H
#define NODE_PORT_H

#include "fb_event.h"

#include <stdint.h>

#define NODE_PORTS_MAX 256 /* per technology; more are ignored with a warning */

struct node_port {
	uint8_t tech;                /* enum fb_tech */
	char device[FB_NAME_MAX];    /* CA name or interface name */
	uint16_t port;               /* IB port number; 0 for Ethernet */
	uint64_t node_guid;          /* IB: the CA's node GUID (host order) */
	uint64_t port_guid;          /* IB: host order */
	uint16_t lid;                /* IB base LID */
	uint32_t ifindex;            /* Ethernet */
	char mac[FB_ADDR_MAX];       /* Ethernet: "aa:bb:cc:dd:ee:ff" */
	uint8_t port_state;          /* IB PortState / IF-MIB ifOperStatus */
	uint8_t phys_state;          /* IB PhysPortState */
	int up;                      /* link up: IB PhysState LinkUp, Ethernet oper up */
	int live;                    /* main.c: a link event about it went out since start */
};

#endif
