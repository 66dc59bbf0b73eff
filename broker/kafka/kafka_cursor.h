/* kafka_cursor.h - the Kafka cursor file, <JournalDir>/kafka.cursor.
 *
 * The cursor is the highest EventId such that every event up to it was
 * delivered to all its topics. One line of text:
 *   fabricbus-kafka-cursor 1 <epoch, 16 hex digits> <cursor, decimal> <crc32c, 8 hex>\n
 * written to a temporary file, fsync'ed, renamed over the old one, and the
 * directory fsync'ed, so a crash leaves the old or the new cursor, whole.
 * The epoch ties it to the journal: a cursor from another journal is ignored.
 */
#ifndef FB_KAFKA_CURSOR_H
#define FB_KAFKA_CURSOR_H

#include <stdint.h>

/* Durably replace the cursor. 0 or a negative errno. */
int fb_kafka_cursor_write(const char *dir, uint64_t epoch, uint64_t cursor);

/* Read it: 0 and *cursor; -ENOENT when there is none; FB_ECORRUPT when it
 * is unreadable, fails its CRC, or belongs to another epoch (*why says
 * which, for the log). */
int fb_kafka_cursor_read(const char *dir, uint64_t epoch, uint64_t *cursor, const char **why);

#endif
