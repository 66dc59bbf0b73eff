/* fb_hostlist.h - expand a Slurm hostlist expression into node names.
 *
 *   "node[001-003,007],gpu[1-2],login1"
 *       -> node001 node002 node003 node007 gpu1 gpu2 login1
 *   "r[1-2]n[01-02]" -> r1n01 r1n02 r2n01 r2n02 (the last group varies fastest)
 *
 * The same names, in the same order (duplicates kept), as
 * `scontrol show hostnames <expr>` for every expression both accept. It is
 * stricter than Slurm where Slurm guesses: an empty item ("a,,b"), an
 * unclosed or stray bracket, a reversed range, text after the last ']'
 * ("n[1-3]x", which Slurm refuses too), a space, or any byte that a node
 * name may not hold (the broker's rule: printable ASCII other than space,
 * ',', '[' and ']') is refused, with the byte offset in the reason.
 * A zero-padded low bound sets the width ("n[08-10]" -> n08 n09 n10).
 *
 * The input is untrusted (a URL query): the whole expression is checked
 * and counted before the first name is handed out, so a caller never acts
 * on half of a bad list. Nothing is allocated; each name is built in a
 * buffer on the stack.
 */
#ifndef FB_HOSTLIST_H
#define FB_HOSTLIST_H

#include <stddef.h>

#define FB_HOSTLIST_NAME_MAX 63  /* bytes of one name, NUL not counted */
#define FB_HOSTLIST_GROUPS_MAX 8 /* bracket groups in one item ("r[1-2]n[1-4]": 2) */

/* Called once per name in expression order; name is NUL-terminated and
 * valid during the call only. Return 0 to go on; anything else stops the
 * expansion and is returned by fb_hostlist_expand. */
typedef int (*fb_hostlist_cb)(void *arg, const char *name, size_t len);

/* Check expr[0..len) (no NUL needed) and, if it is a valid list of 1 to
 * max_names names of 1 to FB_HOSTLIST_NAME_MAX bytes, call cb for each
 * (cb may be NULL: check and count only). Returns 0 with *count set (when
 * count is not NULL), cb's non-zero value if it stopped, or FB_EMALFORMED
 * (bad syntax) / FB_ETOOBIG (too many names, a name too long) with a
 * one-line reason in err, e.g. "reversed range 3-1 at byte 5". */
int fb_hostlist_expand(const char *expr, size_t len, size_t max_names, fb_hostlist_cb cb, void *arg,
		       size_t *count, char *err, size_t errsz);

#endif
