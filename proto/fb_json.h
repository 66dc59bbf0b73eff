/* fb_json.h - checked readers of jansson values, shared by the two parsers
 * of untrusted event JSON: the event's own JSON form (fb_event_json.c, what
 * an operator types into `fabricbus publish`) and a rendered Redfish Event
 * (fb_redfish_parse.c, what a subscriber reads back).
 *
 * What a value must look like is decided here once, so the two parsers
 * cannot drift apart; how a refusal is worded stays with each parser (its
 * field names and messages are part of its interface), which is why the
 * readers return why they refused rather than a message.
 *
 * None of them allocates; v may be NULL (an absent key) and is then refused.
 */
#ifndef FB_JSON_H
#define FB_JSON_H

#include "fb_event.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Why a reader refused a value (all negative, 0 is success). */
enum fb_json_why {
	FB_JSON_ETYPE = -1,  /* the wrong JSON type */
	FB_JSON_EVALUE = -2, /* a string with a NUL; a counter value or job id that is not one */
	FB_JSON_ENAME = -3,  /* counters: a name fb_text_parse_counter refuses */
	FB_JSON_ETWICE = -4, /* counters: one counter under two spellings */
	FB_JSON_ELONG = -5,  /* does not fit: the string's field, FB_COUNTERS_MAX, FB_JOBS_MAX */
};

/* A parser's refusal: the reason into err (see fb_err_set), FB_EMALFORMED
 * returned. */
int fb_json_fail(char *err, size_t errsz, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A non-negative JSON integer up to max into *out, or with allow_str a string
 * of decimal digits: the renderers write u64 values above INT64_MAX (which a
 * JSON integer cannot hold in jansson) as strings. 0 or -1. */
int fb_json_get_uint(const json_t *v, uint64_t max, int allow_str, uint64_t *out);

/* The largest value of a size-byte unsigned field (size 1, 2, 4 or 8). */
uint64_t fb_json_uint_max(size_t size);

/* A JSON integer 0..fb_json_uint_max(size) into the size-byte unsigned
 * field at dst (size 1, 2 or 4: no string form, as none exceeds INT64_MAX).
 * 0 or -1, dst untouched. */
int fb_json_get_uint_field(const json_t *v, void *dst, size_t size);

/* A string without NUL into the fixed field dst[dstsz]: 0, FB_JSON_ETYPE,
 * FB_JSON_EVALUE (has a NUL) or FB_JSON_ELONG (dst[0] then '\0'). */
int fb_json_get_str(const json_t *v, char *dst, size_t dstsz);

/* An object of counter name -> value (fb_json_get_uint with strings
 * allowed) added to ev with fb_event_add_counter. 0, or FB_JSON_ETYPE, or
 * with *bad set to the offending name (valid while v lives) FB_JSON_ENAME,
 * FB_JSON_ETWICE or FB_JSON_EVALUE, or FB_JSON_ELONG (over FB_COUNTERS_MAX). */
int fb_json_get_counters(const json_t *v, struct fb_event *ev, const char **bad);

/* fb_json_get_counters with its refusal written into err after where (the
 * member's path as the document spells it, e.g. "counters"). 0, or the
 * error of fb_json_fail. */
int fb_json_parse_counters(const json_t *v, struct fb_event *ev, const char *where, char *err,
			   size_t errsz);

/* ["123","124"] -> "123,124" in jobs[FB_JOBS_MAX]: job ids are strings so
 * that no JSON number rounding or sign can creep in, and the joined list
 * obeys fb_event_jobs_check. 0, or FB_JSON_ETYPE (not an array),
 * FB_JSON_EVALUE with *at the index of an item that is not a non-empty
 * string of decimal digits, or FB_JSON_ELONG; jobs is "" after a refusal. */
int fb_json_get_jobs(const json_t *v, char *jobs, size_t *at);

/* fb_json_get_jobs into ev->jobs, with its refusal written into err after
 * where (as fb_json_parse_counters). */
int fb_json_parse_jobs(const json_t *v, struct fb_event *ev, const char *where, char *err,
		       size_t errsz);

#endif
