/* fb_hostlist_fmt.h - node names as a Slurm hostlist, the inverse of
 * fb_hostlist_expand (fb_hostlist.h):
 *   node003 node001 node002 node010 h9 h10 -> "h9,h10,node[001-003,010]"
 * A name is split into a prefix and its trailing digits (at most 18); names
 * with the same prefix and digit count are ranged, zero-padded to that
 * count, so that expanding the result gives the same names back. Used by
 * `fabricbus topology` (topology.conf) and the broker's root cause. */
#ifndef FB_HOSTLIST_FMT_H
#define FB_HOSTLIST_FMT_H

#include <stddef.h>

/* names[0..n) in any order (duplicates dropped) as one hostlist (caller
 * frees; "" for n == 0), or NULL on ENOMEM. */
char *fb_hostlist_format(const char *const *names, size_t n);

#endif
