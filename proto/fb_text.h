/* fb_text.h - the text forms of event values, parsed: the one definition
 * shared by the JSON form (fb_event_json.c) and the Redfish parser
 * (fb_redfish_parse.c), so the two accept exactly the same spellings.
 *
 * Every function takes untrusted text, returns 0 and writes *out only on
 * success, and returns -1 otherwise. None allocates.
 */
#ifndef FB_TEXT_H
#define FB_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* n bytes of decimal digits (at least one), no sign, no overflow. */
int fb_text_parse_u64(const char *s, size_t n, uint64_t *out);
/* 1 if s[0..n) is non-empty and only [A-Za-z0-9._-]: the safe alphabet of
 * Slurm node and partition names and Kafka topics (no spaces, commas or
 * brackets that a hostlist or a shell would read). Else 0. */
int fb_text_is_name(const char *s, size_t n);

/* A GUID: "0x" (or "0X") and 1 to 16 hex digits of either case. */
int fb_text_parse_guid(const char *s, size_t n, uint64_t *out);

/* RFC 3339, NUL-terminated: YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)
 * at or after the epoch, as ns since the epoch. A fraction beyond
 * nanoseconds is truncated. */
int fb_text_parse_time(const char *s, uint64_t *ts_ns);

/* A counter's text name, NUL-terminated: its fb_counter_name(), or
 * "counter_<id>" for an id (1..65535) this build has no name for. Named
 * ids must use their name, so one counter has one spelling. */
int fb_text_parse_counter(const char *name, uint16_t *id);

#endif
