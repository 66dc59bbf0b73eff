/* fb_conf.h - the generic pieces of fabricbus's slurm.conf-style files.
 *
 * Every fabricbus program that reads a configuration file (fabricbusd,
 * fabricbus-slurm) uses the same syntax: Key=Value lines, '#' comments,
 * blank lines ignored, keys matched case-insensitively by the caller, and
 * every error names the file and line ("path:12: ..."). This module holds
 * the parts that do not depend on a program's keys: reading and splitting
 * lines, and the size and duration values. The key tables stay with each
 * program.
 */
#ifndef FB_CONF_H
#define FB_CONF_H

#include <stddef.h>
#include <stdint.h>

/* Longest line accepted in a file (and -o option). */
#define FB_CONF_LINE_MAX 4200

/* Sizes take B/K/M/G/T (binary, optional trailing B, case-insensitive);
 * durations ms/s/m/min/h/d, a bare number is seconds. 0 or FB_ECONFIG
 * (also on overflow). */
int fb_conf_parse_size(const char *s, uint64_t *out);
int fb_conf_parse_duration_ms(const char *s, uint64_t *out);

/* "yes/no/true/false/on/off/1/0" -> 1/0, or FB_ECONFIG. */
int fb_conf_parse_bool(const char *s, int *out);

/* A "host:port[,host:port...]" list (Kafka bootstrap servers; spaces after
 * the commas allowed) copied into dst, or FB_ECONFIG with what was expected
 * in why. An empty list is valid (the caller decides what it means). */
int fb_conf_set_hostport_list(char *dst, size_t dstsz, const char *v, char *why, size_t whysz);

/* Strip leading and trailing white space in place; returns the start. */
char *fb_conf_trim(char *s);

/* Split "Key = Value" in place into trimmed *key and *val. FB_ECONFIG with
 * "<origin>: expected Key=Value, got '...'" in err when there is no '='
 * or the key is empty. */
int fb_conf_split(char *line, char **key, char **val, const char *origin, char *err, size_t errsz);

/* Called once per Key=Value line of a file. origin is "path:line". Return 0
 * to go on, or an error after writing a message (starting with origin) into
 * err: reading stops and fb_conf_read_file returns that error. */
typedef int (*fb_conf_line_fn)(void *arg, const char *key, const char *val, const char *origin,
			       int lineno, char *err, size_t errsz);

/* Read path line by line: comments ('#' to the end of the line) and blank
 * lines are skipped, each other line is split and handed to fn. A missing
 * file, a read error, a line longer than FB_CONF_LINE_MAX and a line without
 * '=' are errors naming path (and line). 0 or FB_ECONFIG. */
int fb_conf_read_file(const char *path, fb_conf_line_fn fn, void *arg, char *err, size_t errsz);

#endif
