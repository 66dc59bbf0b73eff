/* node_ib.h - the local InfiniBand CA ports, read through libibumad.
 *
 * umad_get_ca() reads sysfs (/sys/class/infiniband); no MAD is sent, so
 * this is cheap enough to call every poll interval from the loop thread.
 * Under ibsim's umad2sim shim it reads the shim's /sys snapshot, taken when
 * the process started: state changes made later on the sim console are not
 * visible here (the switch agent reports those).
 */
#ifndef NODE_IB_H
#define NODE_IB_H

#include "node_port.h"

#include <stddef.h>

/* umad_init(); 0 or a negative errno. */
int node_ib_init(void);
/* Fill out[0..max) with every port of every local CA; *n is how many. A host
 * with no CA gives 0 ports and returns 0. Negative errno only when libibumad
 * fails outright. */
int node_ib_scan(struct node_port *out, size_t max, size_t *n);

#endif
