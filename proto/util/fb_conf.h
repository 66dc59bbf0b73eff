/* fb_conf.h - the generic pieces of fabricbus's slurm.conf-style files.
 *
 * Every fabricbus program that reads a configuration file (fabricbusd,
 * fabricbus-slurm, fabricbus-pmix) uses the same syntax: Key=Value lines,
 * '#' comments, blank lines ignored, keys matched case-insensitively, and
 * every error names the file and line ("path:12: ..."). This module holds
 * everything that does not depend on a program's keys: reading and splitting
 * lines, the value syntax, and the key-table engine (types, bounds, "bad
 * value ... expected ..." texts, "set twice", unknown keys, the key listing).
 * Each program declares its table of keys and calls the engine.
 */
#ifndef FB_CONF_H
#define FB_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

/* A duration the way a file takes it back: "1500ms", "60s". */
void fb_conf_format_duration_ms(uint64_t ms, char *out, size_t outsz);

/* ---- the key-table engine ---- */

enum fb_conf_type {
	FB_CONF_COUNT,         /* whole number in [min, max] -> uint64_t */
	FB_CONF_SIZE,          /* size (64M) in [min, max] -> uint64_t bytes */
	FB_CONF_DURATION_MS,   /* duration in [min, max] ms -> uint64_t ms */
	FB_CONF_DURATION_S,    /* duration in [min, max] s -> uint64_t s */
	FB_CONF_BOOL,          /* yes/no... -> int 1/0 */
	FB_CONF_ENUM,          /* one of names (NULL-terminated) -> int, its index */
	FB_CONF_LOGLEVEL,      /* error/warn/info/debug -> int (enum fb_log_level) */
	FB_CONF_STRING,        /* -> char[size], see flags, ok and expect */
	FB_CONF_HOSTPORT,      /* HOST:PORT -> char[size] host at off, int port at off2 */
	FB_CONF_HOSTPORT_LIST, /* host:port[,host:port...] -> char[size] */
	FB_CONF_CUSTOM,        /* parse decides */
};

#define FB_CONF_EMPTY_OK 1u /* STRING: "" is a value (unset/off; ok is not asked) */
#define FB_CONF_REPEAT 2u   /* a file may give the key more than once (a list) */

struct fb_conf_key {
	const char *key;
	enum fb_conf_type type;
	size_t off, off2;          /* field offsets in the program's config struct */
	size_t size;               /* STRING, HOSTPORT, lists: the buffer's size */
	uint64_t min, max;         /* numbers: bounds, in the unit stored */
	unsigned flags;            /* FB_CONF_EMPTY_OK, FB_CONF_REPEAT */
	const char *const *names;  /* ENUM */
	int (*ok)(const char *v);  /* STRING: extra check, 1 = fine (NULL: none) */
	const char *expect;        /* STRING: why text, one %zu for size - 1 */
	/* CUSTOM: parse v into cfg + off, or FB_ECONFIG with what was expected in why. */
	int (*parse)(void *cfg, const struct fb_conf_key *k, const char *v, char *why, size_t whysz);
	/* CUSTOM: write the value as parse takes it back into out (fb_conf_print;
	 * NULL: the key is not printed). */
	void (*format)(const void *cfg, const struct fb_conf_key *k, char *out, size_t outsz);
	const char *def;           /* the default as written in a file (NULL: set in code) */
	const char *help;
};

/* Keys "<prefix><name>=<value>" (kafka.*): kept in file order in an array of
 * records, each a name[name_size] at offset 0 and a value[value_size] at
 * value_off; a file may set a name once, an option replaces it. */
struct fb_conf_props {
	const char *prefix;        /* "kafka." (NULL: no such keys) */
	size_t off, count_off;     /* the array, and its unsigned count */
	size_t stride, value_off, name_size, value_size;
	unsigned max;
	/* Judge one property now, so a typo is reported with its file:line: 0, or
	 * FB_ECONFIG with why, the rest of the message after "kafka.<name>" (so
	 * it starts with ": " or " "). NULL: every property is taken. */
	int (*check)(const char *name, const char *val, char *why, size_t whysz);
};

struct fb_conf_table {
	const struct fb_conf_key *keys;
	size_t n;
	struct fb_conf_props props;
	const char *see;           /* "fabricbusd --help-config": where keys are listed */
	/* Option errors read "-o Key: why" (and "-o Key: unknown key") instead of
	 * "-o: Key: why" (and "-o: unknown key 'Key'"). */
	int option_names_key;
};

/* Apply every key's def (keys without one are left alone). 0, or FB_ECONFIG
 * with "Key: bad value ..." in err (a bad default is a bug). */
int fb_conf_apply_defaults(const struct fb_conf_table *t, void *cfg, char *err, size_t errsz);
/* Apply a file: every error reads "path:line: ...". A missing file is an error. */
int fb_conf_load_file(const struct fb_conf_table *t, void *cfg, const char *path, char *err,
		      size_t errsz);
/* Apply one key and value given apart (not from a file: no "set twice");
 * origin is the option ("-o") or what else names the place. */
int fb_conf_set(const struct fb_conf_table *t, void *cfg, const char *key, const char *val,
		const char *origin, char *err, size_t errsz);
/* Apply one command-line "Key=Value"; origin is the option ("-o"). */
int fb_conf_set_option(const struct fb_conf_table *t, void *cfg, const char *keyval,
		       const char *origin, char *err, size_t errsz);
/* List every key and its meaning (FILE *): "Key=default" over the meaning
 * for keys with a default, "Key  meaning" on one line for the others. */
void fb_conf_help(const struct fb_conf_table *t, FILE *f);
/* Print every key as "Key=value" in table order, the way a file takes it
 * back (what --check-config shows), then the prefixed properties as
 * fb_conf_print_props does. CUSTOM keys need format; REPEAT keys are not
 * printed (a value holds one setting only). */
void fb_conf_print(const struct fb_conf_table *t, const void *cfg, FILE *f);
/* Print the prefixed properties as "<prefix>name=value" lines; values of
 * names holding "password" or "secret" read "(hidden)". */
void fb_conf_print_props(const struct fb_conf_table *t, const void *cfg, FILE *f);

/* BrokerTokenFile and BrokerTlsCa, the keys of every program that talks to
 * fabricbusd's HTTP port (fb_http_auth.h), into the char arrays token and ca
 * of type: entries for a key table. */
#define FB_CONF_BROKER_AUTH_KEYS(type, token, ca)                                             \
	{ "BrokerTokenFile", FB_CONF_STRING, offsetof(type, token), 0,                        \
	  sizeof(((type *)0)->token), .flags = FB_CONF_EMPTY_OK, .def = "",                  \
	  .help = "file (mode 0600) with the bearer token sent to Broker (fabricbusd "        \
		  "HttpTokens; empty = none)" },                                             \
	{ "BrokerTlsCa", FB_CONF_STRING, offsetof(type, ca), 0, sizeof(((type *)0)->ca),      \
	  .flags = FB_CONF_EMPTY_OK, .def = "",                                               \
	  .help = "PEM CA of fabricbusd's HttpTlsCert: talk https/wss to Broker and verify "  \
		  "it (empty = plain http/ws)" }

#endif
