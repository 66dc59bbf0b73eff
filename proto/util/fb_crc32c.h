/* fb_crc32c.h - CRC-32C (Castagnoli), as used by the journal records.
 * Uses the SSE4.2 instruction when the CPU has it, a table otherwise. */
#ifndef FB_CRC32C_H
#define FB_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Start with crc = 0; feed the result back in to continue over more bytes. */
uint32_t fb_crc32c(uint32_t crc, const void *p, size_t n);

#endif
