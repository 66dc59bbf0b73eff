/* rf_sub_store.h - the stored subscriptions and their file.
 *
 * <JournalDir>/redfish-subscriptions, replaced crash-safely (fb_file_replace,
 * mode 0600: HttpHeaders may hold credentials) after every change:
 *   fabricbus-redfish-subscriptions 1 <length, decimal> <crc32c of the JSON, 8 hex>\n
 *   {"NextId":<n>,"Members":[<EventDestination>, ...]}
 * Each member is what fb_rf_sub_build accepts in FB_RF_LOAD mode (the client's
 * properties plus Id and Status), so loading runs every check a POST does.
 * A file that fails its length, CRC or a member's check is refused whole, with
 * the reason; the broker then starts without it and says so (and keeps the
 * bad file as <name>.bad for a person to look at).
 *
 * Ids are decimal numbers from NextId, never reused, or a name given by a
 * program (the OFMF agent's "SunfishServer"). Threads: owned by the loop.
 */
#ifndef FB_RF_SUB_STORE_H
#define FB_RF_SUB_STORE_H

#include "fb_buf.h"
#include "rf_sub.h"

#include <stddef.h>
#include <stdint.h>

#define FB_RF_STORE_NAME "redfish-subscriptions"
#define FB_RF_STORE_MAGIC "fabricbus-redfish-subscriptions 1"
#define FB_RF_STORE_MAX_SUBS 1024
#define FB_RF_STORE_FILE_MAX (64u << 20)

/* Shared with the push cursors file (push_cursor.c): */
/* 1 if id may name a subscription: [A-Za-z0-9_-], 1..FB_RF_SUB_ID_MAX-1 bytes. */
int fb_rf_id_ok(const char *id);
/* The first line of a file's bytes (without its newline) into hdr (hdrsz
 * bytes, so at most hdrsz - 1 long and without NUL bytes); *body points
 * after it. 0, or -1 when there is no such line. */
int fb_rf_file_header(const uint8_t *p, size_t len, char *hdr, size_t hdrsz, const uint8_t **body);

struct fb_rf_store {
	char path[4200];         /* "" = not persisted (tests) */
	struct fb_rf_sub **v;    /* owned */
	size_t n, cap;
	uint64_t next_id;
};

/* An empty store saved at dir/FB_RF_STORE_NAME (dir NULL: memory only). */
void fb_rf_store_init(struct fb_rf_store *st, const char *dir);
void fb_rf_store_free(struct fb_rf_store *st);

/* Load the file: 0 (also when there is none), or FB_ECORRUPT / -errno with
 * the reason in err; the store is then empty. */
int fb_rf_store_load(struct fb_rf_store *st, char *err, size_t errsz);
/* The parser of the file's bytes (fuzzed: tests/fuzz/fuzz_rf_subs.c). */
int fb_rf_store_parse(struct fb_rf_store *st, const uint8_t *p, size_t len, char *err,
		      size_t errsz);
/* The file's bytes. 0 or -ENOMEM. */
int fb_rf_store_serialize(const struct fb_rf_store *st, struct fb_buf *out);
/* Write the file now (crash-safe replace). 0 or -errno (logged). */
int fb_rf_store_save(struct fb_rf_store *st);

/* Take s (moved: *s is left empty). id NULL or "": the next number. Fails
 * with -EEXIST for a taken id, -ENOSPC past FB_RF_STORE_MAX_SUBS. *out
 * points at the stored copy. Does not save. */
int fb_rf_store_add(struct fb_rf_store *st, struct fb_rf_sub *s, const char *id,
		    struct fb_rf_sub **out);
struct fb_rf_sub *fb_rf_store_find(const struct fb_rf_store *st, const char *id);
/* Replace the member with s's id by s (moved). -ENOENT when absent. */
int fb_rf_store_replace(struct fb_rf_store *st, struct fb_rf_sub *s);
int fb_rf_store_remove(struct fb_rf_store *st, const char *id);

#endif
