/* push_cursor.h - the push cursors, <JournalDir>/push.cursors.
 *
 * For each subscription, the highest EventId such that every event up to it
 * was delivered to it or did not match it. Replaced crash-safely
 * (fb_file_replace) at most every PushCursorSync while a cursor moves, and at
 * once when a subscription is created (so that it misses nothing after a
 * crash that follows). Text:
 *   fabricbus-push-cursors 1 <epoch, 16 hex> <length> <crc32c of the rest, 8 hex>\n
 *   <subscription Id> <cursor, decimal>\n ...
 * A file from another journal (epoch) or one failing its checks is ignored
 * whole (logged); subscriptions then start at the newest committed event.
 */
#ifndef FB_PUSH_CURSOR_H
#define FB_PUSH_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#define FB_PUSH_CURSOR_NAME "push.cursors"
#define FB_PUSH_CURSOR_ID_MAX 64

struct fb_push_cursor {
	char id[FB_PUSH_CURSOR_ID_MAX];
	uint64_t cursor;
};

/* Durably replace the file. 0 or -errno. */
int fb_push_cursors_write(const char *dir, uint64_t epoch, const struct fb_push_cursor *v, size_t n);
/* Parse the file's bytes: 0 and *v (malloc'd, caller frees) / *n, or
 * FB_ECORRUPT with *why (static text). */
int fb_push_cursors_parse(const uint8_t *p, size_t len, uint64_t epoch, struct fb_push_cursor **v,
			  size_t *n, const char **why);
/* Read and parse: -ENOENT when there is none. */
int fb_push_cursors_read(const char *dir, uint64_t epoch, struct fb_push_cursor **v, size_t *n,
			 const char **why);

#endif
