/* fb_sorted.c - binary search that also gives the insertion point (fb_sorted.h). */
#include "fb_sorted.h"

size_t fb_sorted_pos(const void *base, size_t n, size_t size, const void *key,
		     fb_sorted_cmp_fn cmp, int *found)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp(key, (const char *)base + mid * size);
		if (c == 0) {
			*found = 1;
			return mid;
		}
		if (c > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = 0;
	return lo;
}
