/* journal_format.h - private to the journal: the on-disk format and the one
 * record parser shared by recovery (journal.c) and readers (journal_reader.c),
 * so there is exactly one place that decides whether disk bytes are a record.
 *
 * Segment: 16-byte header "FBJ1" | u32 version | u64 first EventId, then
 * records: u32 payload_len | u32 crc32c(event_id BE || payload) | u64 event_id
 * | payload. The CRC input is contiguous on disk (id then payload), so one
 * fb_crc32c call covers it.
 */
#ifndef FB_JOURNAL_FORMAT_H
#define FB_JOURNAL_FORMAT_H

#include "fb_event.h"

#include <stddef.h>
#include <stdint.h>

#define FBJ_MAGIC "FBJ1"
#define FBJ_VERSION 1u
#define FBJ_HDR_LEN 16u
#define FBJ_REC_HDR_LEN 16u
/* A payload is str8 agent id + an event body, and event bodies arrive in
 * u16-length slots of EVENTS frames: nothing valid is larger. The bound keeps
 * a corrupt length from ever asking for a huge read or allocation. */
#define FBJ_PAYLOAD_MAX (1u + 255u + 65535u)
#define FBJ_REC_MAX (FBJ_REC_HDR_LEN + FBJ_PAYLOAD_MAX)
#define FBJ_SUFFIX ".fbj"
#define FBJ_NAME_DIGITS 20
#define FBJ_NAME_LEN (FBJ_NAME_DIGITS + 4) /* without the NUL */
/* Readers and recovery pull this much per pread: replay is bulk work. */
#define FBJ_READ_CHUNK (256u * 1024u)
_Static_assert(FBJ_REC_MAX < FBJ_READ_CHUNK, "a whole record must fit in one read chunk");

/* One record as it sits in a buffer; payload points into that buffer. */
struct fbj_rec {
	uint64_t event_id;
	const uint8_t *payload;
	uint32_t payload_len;
	size_t total; /* header + payload */
};

/* 1 and *rec for a whole valid record at p, 0 when avail is too short to
 * hold it (torn, or still being written), FB_ECORRUPT for an impossible
 * length or a CRC mismatch. */
int fbj_parse_rec(const uint8_t *p, size_t avail, struct fbj_rec *rec);
/* Header bytes -> first id; FB_ECORRUPT / FB_EVERSION when not ours. */
int fbj_parse_hdr(const uint8_t *p, uint64_t *first_id);
void fbj_put_hdr(uint8_t out[FBJ_HDR_LEN], uint64_t first_id);
/* str8 agent id + event body -> *ev (agent_id set). 0 or an fb_err. */
int fbj_decode_payload(const uint8_t *p, size_t len, struct fb_event *ev);

/* "<20 digits>.fbj" into out (FBJ_NAME_LEN + 1 bytes). */
void fbj_name(char *out, uint64_t first_id);
/* 1 and *first_id if name is a segment name, else 0. */
int fbj_name_parse(const char *name, uint64_t *first_id);
/* Sorted first ids of the segments in dir; *ids is malloc'd (caller frees,
 * NULL when n is 0). log_unknown: mention other files at debug level. */
int fbj_list(const char *dir, int log_unknown, uint64_t **ids, size_t *n);

/* A buffered sequential reader over one segment: pread in FBJ_READ_CHUNK
 * pieces and parse records in memory, so a replay costs one syscall per
 * chunk, not per record. Peek and advance are split so that a caller can
 * stop in front of a record (limit_id) and come back to it later. */
struct fbj_cursor {
	int fd;              /* not owned */
	uint8_t *buf;        /* FBJ_READ_CHUNK bytes, owned */
	size_t len, pos;     /* bytes held in buf; parse position within them */
	uint64_t buf_off;    /* file offset of buf[0] */
	uint64_t first_id;   /* from the header, once have_hdr */
	int have_hdr;
};

int fbj_cursor_init(struct fbj_cursor *c, int fd);
void fbj_cursor_free(struct fbj_cursor *c);
/* Point the cursor at another segment, keeping its buffer. */
static inline void fbj_cursor_reset(struct fbj_cursor *c, int fd)
{
	c->fd = fd;
	c->len = c->pos = 0;
	c->buf_off = 0;
	c->first_id = 0;
	c->have_hdr = 0;
}
/* File offset of the next unread byte (where a torn tail starts). */
static inline uint64_t fbj_cursor_off(const struct fbj_cursor *c) { return c->buf_off + c->pos; }
/* 1 and *rec (valid until the next cursor call), 0 at the end of what is on
 * disk now (EOF or a partial record, or a header not fully written yet),
 * FB_ECORRUPT / FB_EVERSION for bad bytes at fbj_cursor_off(), or -errno. */
int fbj_cursor_peek(struct fbj_cursor *c, struct fbj_rec *rec);
static inline void fbj_cursor_advance(struct fbj_cursor *c, const struct fbj_rec *rec)
{
	c->pos += rec->total;
}
/* After bad bytes at fbj_cursor_off() (FB_ECORRUPT, or a record whose id
 * does not grow): look further on, byte by byte, for a record that parses
 * (length, CRC) and whose EventId is above min_id. 1: the cursor is on it,
 * *skipped the bytes passed over (damage in the middle: the records after
 * it are kept). 0: none up to EOF, the cursor is back where it was (a torn
 * tail starts there). -errno on a read error. */
int fbj_cursor_resync(struct fbj_cursor *c, uint64_t min_id, uint64_t *skipped);

#endif
