/* fb_sorted.h - where a key is, or would go, in an ascending array.
 *
 * bsearch(3) says only whether a key is there; the sorted lists of the
 * broker's job table and the Slurm adapter's node table also need the place
 * to insert a missing key, so that they stay sorted without a qsort.
 */
#ifndef FB_SORTED_H
#define FB_SORTED_H

#include <stddef.h>

/* cmp(key, element) < 0, 0, > 0 as key sorts before, equal to, after it. */
typedef int (*fb_sorted_cmp_fn)(const void *key, const void *elem);

/* Index of the element of base[0..n) (each size bytes, ascending by cmp)
 * equal to key, with *found = 1; or the index where key would be inserted
 * to keep the array ascending (0..n), with *found = 0. */
size_t fb_sorted_pos(const void *base, size_t n, size_t size, const void *key,
		     fb_sorted_cmp_fn cmp, int *found);

#endif
