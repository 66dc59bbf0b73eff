/* ofmf_state.h - what fabricbusd remembers of its registration with an OFMF
 * core, in JournalDir/ofmf.state.
 *
 * The Context is the core's name for us (the id of the AggregationSource it
 * made when we registered). It is only worth keeping together with what it
 * was given for: the core, our ConnectionMethod and the base URL the core
 * crawls. A restarted broker with a saved Context asks the core whether it
 * still knows that AggregationSource instead of registering again, because
 * the reference core answers 409 to a second discovery of the same
 * ConnectionMethod (docs/ofmf.md, "Recovery").
 *
 * The file is text, one `key=value` per line, `#` comments:
 *   version=1
 *   core=http://127.0.0.1:5000
 *   connection_method=/redfish/v1/AggregationService/ConnectionMethods/fabricbus-0123abcd
 *   base=http://127.0.0.1:7412
 *   context=3f2b...            (may be empty: not registered)
 * It is replaced crash-safely (fb_file_replace). Every key is required
 * exactly once; an unknown key, a value with a control character or a space,
 * or an overlong line is refused, so a damaged file is never half-believed.
 */
#ifndef FB_OFMF_STATE_H
#define FB_OFMF_STATE_H

#include <stddef.h>

#define FB_OFMF_URL_MAX 512
#define FB_OFMF_CONTEXT_MAX 128
#define FB_OFMF_STATE_VERSION 1

struct fb_ofmf_state {
	char core[FB_OFMF_URL_MAX];              /* the core's base URL */
	char connection_method[FB_OFMF_URL_MAX]; /* our ConnectionMethod's @odata.id */
	char base[FB_OFMF_URL_MAX];              /* our base URL as the core reaches it */
	char context[FB_OFMF_CONTEXT_MAX];       /* "" = not registered */
};

/* Parse n bytes (not NUL-terminated). 0, or FB_EMALFORMED with the reason
 * (line number included) in err. *out is only written on success. */
int fb_ofmf_state_parse(const char *text, size_t n, struct fb_ofmf_state *out, char *err,
			size_t errsz);

/* Format s; returns the length, or FB_ETOOBIG if it does not fit in outsz
 * (4 KiB always does) or FB_EMALFORMED if a field holds a byte the parser
 * would refuse. */
int fb_ofmf_state_format(const struct fb_ofmf_state *s, char *out, size_t outsz);

/* Is v a value the file can hold (printable ASCII, no space, fits sz)? */
int fb_ofmf_state_value_ok(const char *v, size_t sz);

/* Read path into *out. 0; -ENOENT when there is none (first start); other
 * negative errno, or FB_EMALFORMED with the reason in err. */
int fb_ofmf_state_load(const char *path, struct fb_ofmf_state *out, char *err, size_t errsz);

/* Replace path with s (crash-safe). 0 or negative errno; *step names what
 * failed (fb_file_replace). */
int fb_ofmf_state_save(const char *path, const struct fb_ofmf_state *s, const char **step);

#endif
