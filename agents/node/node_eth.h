/* node_eth.h - the local Ethernet interfaces, read through rtnetlink.
 *
 * node_eth_scan() dumps every link (RTM_GETLINK) on a socket of its own and
 * waits for the answer (the kernel answers from memory at once).
 * node_eth_monitor_open() gives a non-blocking socket subscribed to
 * RTMGRP_LINK for the caller's event loop: when it is readable, call
 * node_eth_monitor_drain() and scan again.
 * Loopback and non-Ethernet links (no 6-byte address) are skipped.
 */
#ifndef NODE_ETH_H
#define NODE_ETH_H

#include "node_port.h"

#include <stddef.h>

/* 0 and *n, or a negative errno. */
int node_eth_scan(struct node_port *out, size_t max, size_t *n);
/* A non-blocking NETLINK_ROUTE socket in RTMGRP_LINK, or a negative errno. */
int node_eth_monitor_open(void);
/* Read and discard what is queued; 1 if anything was read, 0 if nothing,
 * negative errno on error (ENOBUFS: the kernel dropped notifications, so
 * the caller must rescan, which it does anyway). */
int node_eth_monitor_drain(int fd);

#endif
