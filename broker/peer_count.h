/* peer_count.h - agent connections open per source address, for
 * MaxAgentsPerAddress: one host (or one attacker) cannot take every agent
 * slot. Keys are addresses without the port ("10.0.0.5", "[::1]").
 * Loop thread only; entries leave when their count drops to zero.
 */
#ifndef FB_PEER_COUNT_H
#define FB_PEER_COUNT_H

#include <stddef.h>
#include <stdint.h>

struct fb_peer_count;

struct fb_peer_count *fb_peer_count_new(void);
void fb_peer_count_free(struct fb_peer_count *pc);
/* Count one more connection from addr; returns the count now, 0 on ENOMEM. */
uint64_t fb_peer_count_add(struct fb_peer_count *pc, const char *addr);
/* One connection from addr closed. */
void fb_peer_count_del(struct fb_peer_count *pc, const char *addr);
/* "ip:port" or "[v6]:port" -> the address part, into out. */
void fb_peer_addr(const char *peer, char *out, size_t outsz);

#endif
