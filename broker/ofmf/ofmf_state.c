#include "ofmf_state.h"

#include "fb_err.h"
#include "fb_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_ 1024 /* longest line: a key and a value of FB_OFMF_URL_MAX */
#define FILE_MAX (8 * LINE_MAX_)

struct field {
	const char *key;
	size_t off, sz;
	int empty_ok;
};

#define FLD(name, f, e) { name, offsetof(struct fb_ofmf_state, f), sizeof(((struct fb_ofmf_state *)0)->f), e }
static const struct field fields[] = {
	FLD("core", core, 0),
	FLD("connection_method", connection_method, 0),
	FLD("base", base, 0),
	FLD("context", context, 1),
};
#define N_FIELDS (sizeof(fields) / sizeof(fields[0]))

int fb_ofmf_state_value_ok(const char *v, size_t sz)
{
	size_t n = strnlen(v, sz);
	if (n == sz)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)v[i] <= ' ' || (unsigned char)v[i] >= 0x7f)
			return 0;
	return 1;
}

/* One "key=value" line (without its newline) into *s; seen[] catches twice. */
static int parse_line(const char *p, size_t n, unsigned lineno, struct fb_ofmf_state *s, int *seen,
		      int *version, char *err, size_t errsz)
{
	const char *eq = memchr(p, '=', n);
	if (!eq)
		return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: expected key=value", lineno);
	size_t klen = (size_t)(eq - p), vlen = n - klen - 1;
	const char *v = eq + 1;
	for (size_t i = 0; i < vlen; i++)
		if ((unsigned char)v[i] <= ' ' || (unsigned char)v[i] >= 0x7f)
			return fb_err_set(err, errsz, FB_EMALFORMED,
					  "line %u: the value holds a space or a control byte", lineno);
	if (klen == 7 && memcmp(p, "version", 7) == 0) {
		if (*version)
			return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: version given twice", lineno);
		if (vlen != 1 || v[0] != '0' + FB_OFMF_STATE_VERSION)
			return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: unknown version (expected %d)",
					  lineno, FB_OFMF_STATE_VERSION);
		*version = 1;
		return 0;
	}
	for (unsigned i = 0; i < N_FIELDS; i++) {
		const struct field *f = &fields[i];
		if (strlen(f->key) != klen || memcmp(p, f->key, klen) != 0)
			continue;
		if (seen[i])
			return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: %s given twice", lineno, f->key);
		if (vlen >= f->sz || (!vlen && !f->empty_ok))
			return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: %s must be 1..%zu bytes",
					  lineno, f->key, f->sz - 1);
		char *dst = (char *)s + f->off;
		memcpy(dst, v, vlen);
		dst[vlen] = '\0';
		seen[i] = 1;
		return 0;
	}
	return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: unknown key '%.*s'", lineno,
			  (int)(klen > 40 ? 40 : klen), p);
}

int fb_ofmf_state_parse(const char *text, size_t n, struct fb_ofmf_state *out, char *err,
			size_t errsz)
{
	struct fb_ofmf_state s;
	memset(&s, 0, sizeof(s));
	int seen[N_FIELDS] = { 0 }, version = 0;
	unsigned lineno = 0;
	size_t i = 0;
	while (i < n) {
		const char *p = text + i, *nl = memchr(p, '\n', n - i);
		size_t len = nl ? (size_t)(nl - p) : n - i;
		i += len + (nl != NULL);
		lineno++;
		if (len > LINE_MAX_)
			return fb_err_set(err, errsz, FB_EMALFORMED, "line %u: longer than %d bytes", lineno,
					  LINE_MAX_);
		if (!len || p[0] == '#')
			continue;
		int rc = parse_line(p, len, lineno, &s, seen, &version, err, errsz);
		if (rc)
			return rc;
	}
	if (!version)
		return fb_err_set(err, errsz, FB_EMALFORMED, "no version line");
	for (unsigned k = 0; k < N_FIELDS; k++)
		if (!seen[k])
			return fb_err_set(err, errsz, FB_EMALFORMED, "%s is missing", fields[k].key);
	*out = s;
	return 0;
}

int fb_ofmf_state_format(const struct fb_ofmf_state *s, char *out, size_t outsz)
{
	for (unsigned k = 0; k < N_FIELDS; k++) {
		const char *v = (const char *)s + fields[k].off;
		if (!fb_ofmf_state_value_ok(v, fields[k].sz) || (!v[0] && !fields[k].empty_ok))
			return FB_EMALFORMED;
	}
	int n = snprintf(out, outsz,
			 "# fabricbusd's registration with an OFMF core (docs/ofmf.md); rewritten by "
			 "fabricbusd\nversion=%d\ncore=%s\nconnection_method=%s\nbase=%s\ncontext=%s\n",
			 FB_OFMF_STATE_VERSION, s->core, s->connection_method, s->base, s->context);
	if (n < 0 || (size_t)n >= outsz)
		return FB_ETOOBIG;
	return n;
}

int fb_ofmf_state_load(const char *path, struct fb_ofmf_state *out, char *err, size_t errsz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[FILE_MAX];
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == sizeof(buf)) {
			close(fd);
			return fb_err_set(err, errsz, FB_EMALFORMED, "larger than %d bytes", FILE_MAX);
		}
	}
	close(fd);
	return fb_ofmf_state_parse(buf, n, out, err, errsz);
}

int fb_ofmf_state_save(const char *path, const struct fb_ofmf_state *s, const char **step)
{
	char buf[FILE_MAX];
	int n = fb_ofmf_state_format(s, buf, sizeof(buf));
	if (n < 0) {
		if (step)
			*step = "format";
		return -EINVAL;
	}
	return fb_file_replace(path, buf, (size_t)n, 0600, step);
}
