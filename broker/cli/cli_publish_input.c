/* cli_publish_input.c - the events `fabricbus publish` sends: JSON lines
 * from arguments, a file or stdin, or copies of a --count template.
 *
 * Every event is parsed and checked here exactly as the broker will check
 * it, so bad input is reported by argument or FILE:LINE before a connection
 * is made. A regular file is read twice (validate, then send) so its size is
 * not limited by memory; a pipe cannot be re-read, so the lines validated
 * first are stashed and put back in front of the rest.
 */
#include "cli_publish.h"

#include "fb_err.h"
#include "fb_event_json.h"

#include <errno.h>
#include <event2/buffer.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINE_MAX_BYTES (1u << 20)

/* One read into the buffer: 1 got bytes, 0 end of file, -1 error. */
static int lines_fill(struct fb_pub_lines *l)
{
	int n = evbuffer_read(l->buf, l->fd, 65536);
	if (n > 0)
		return 1;
	if (n == 0) {
		l->eof = 1;
		return 0;
	}
	if (errno == EINTR || errno == EAGAIN)
		return 1;
	return -1;
}

/* Next line (malloc'd, caller frees): 1 got one, 0 would block, -1 end,
 * -2 read error (message in err). */
static int lines_next(struct fb_pub_lines *l, int may_block, char **line, size_t *n, char *err,
		      size_t errsz)
{
	if (l->argv) {
		if (l->argi >= l->argc)
			return -1;
		*line = strdup(l->argv[l->argi++]);
		*n = *line ? strlen(*line) : 0;
		l->lineno++;
		return *line ? 1 : -2;
	}
	for (;;) {
		*line = evbuffer_readln(l->buf, n, EVBUFFER_EOL_LF);
		if (*line) {
			l->lineno++;
			if (l->stash && (evbuffer_add(l->stash, *line, *n) ||
					 evbuffer_add(l->stash, "\n", 1)))
				return -2;
			return 1;
		}
		size_t left = evbuffer_get_length(l->buf);
		if (l->eof) {
			if (!left)
				return -1;
			*line = malloc(left + 1); /* last line without a newline */
			if (!*line)
				return -2;
			evbuffer_remove(l->buf, *line, left);
			(*line)[left] = '\0';
			if (l->stash && evbuffer_add(l->stash, *line, left))
				return -2;
			*n = left;
			l->lineno++;
			return 1;
		}
		if (left > LINE_MAX_BYTES)
			return fb_err_set(err, errsz, -2,
					  "%s:%lu: line longer than %u bytes", l->name,
					  l->lineno + 1, LINE_MAX_BYTES);
		if (!may_block && !l->regular && !l->readable)
			return 0;
		l->readable = 0;
		if (lines_fill(l) < 0)
			return fb_err_set(err, errsz, -2,
					  "reading %s: %s", l->name, strerror(errno));
	}
}

static void where(const struct fb_pub_lines *l, unsigned long line, char *out, size_t outsz)
{
	if (l->argv)
		snprintf(out, outsz, "argument %lu", line);
	else
		snprintf(out, outsz, "%s:%lu", l->name, line);
}

/* Parse one line into in->cur. 1 parsed, 0 blank, -1 bad (message in in->bad). */
static int parse_line(struct fb_pub_input *in, const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
		i++;
	if (i == n)
		return 0;
	char at[300];
	json_error_t je;
	where(&in->src, in->src.lineno, at, sizeof(at));
	json_t *j = json_loadb(line, n, 0, &je);
	if (!j) {
		snprintf(in->bad, sizeof(in->bad), "%s: invalid JSON at column %d: %s", at,
			 je.column, je.text);
		return -1;
	}
	if (!json_is_object(j) && !json_is_array(j)) {
		json_decref(j);
		snprintf(in->bad, sizeof(in->bad), "%s: want a JSON object or an array of objects",
			 at);
		return -1;
	}
	in->cur = j;
	in->cur_idx = 0;
	in->cur_line = in->src.lineno;
	return 1;
}

/* Next event of the current line: 1 got, 0 line used up, -1 bad. */
static int take_from_line(struct fb_pub_input *in, struct fb_event *ev)
{
	json_t *o = in->cur;
	size_t idx = in->cur_idx;
	if (json_is_array(in->cur)) {
		if (idx >= json_array_size(in->cur))
			goto used_up;
		o = json_array_get(in->cur, idx);
	} else if (idx > 0) {
		goto used_up;
	}
	in->cur_idx++;
	char at[300], msg[256] = "";
	where(&in->src, in->cur_line, at, sizeof(at));
	if (json_is_array(in->cur))
		snprintf(at + strlen(at), sizeof(at) - strlen(at), " element %zu", idx + 1);
	memset(ev, 0, sizeof(*ev));
	const char *why = NULL;
	if (!json_is_object(o)) {
		snprintf(in->bad, sizeof(in->bad), "%s: not a JSON object", at);
		return -1;
	}
	if (fb_event_from_json(o, ev, msg, sizeof(msg)) != 0) {
		snprintf(in->bad, sizeof(in->bad), "%s: %s", at, msg[0] ? msg : "invalid event");
		return -1;
	}
	uint64_t seq = ev->seq;
	ev->seq = 1; /* the session numbers it; check the rest as the broker will */
	if (fb_event_check(ev, &why) != 0) {
		snprintf(in->bad, sizeof(in->bad), "%s: %s", at, why ? why : "invalid event");
		return -1;
	}
	ev->seq = seq;
	return 1;
used_up:
	json_decref(in->cur);
	in->cur = NULL;
	return 0;
}

int fb_pub_input_next(struct fb_pub_input *in, int may_block, struct fb_event *ev)
{
	if (in->gen_count) {
		if (in->produced >= in->gen_count)
			return -1;
		*ev = in->tmpl;
		ev->ts_ns = 0; /* the session stamps it */
		if (!in->tmpl.subj.port)
			ev->subj.port = (uint16_t)(in->produced % 36 + 1);
		in->produced++;
		return 1;
	}
	for (;;) {
		if (in->cur) {
			int r = take_from_line(in, ev);
			if (r == 1) {
				in->produced++;
				return 1;
			}
			if (r < 0)
				return -2;
			if (in->src.stash && in->src.lineno >= STREAM_AFTER)
				return -3; /* validated enough of the pipe */
		}
		char *line = NULL;
		size_t n = 0;
		int r = lines_next(&in->src, may_block, &line, &n, in->bad, sizeof(in->bad));
		if (r != 1)
			return r;
		r = parse_line(in, line, n);
		free(line);
		if (r < 0)
			return -2;
	}
}

long long fb_pub_input_validate(struct fb_pub_input *in, int *streaming, struct evbuffer *stash)
{
	long long count = 0;
	struct fb_event ev;
	*streaming = 0;
	if (!in->src.argv && !in->src.regular)
		in->src.stash = stash;
	for (;;) {
		int r = fb_pub_input_next(in, 1, &ev);
		if (r == -3)
			*streaming = 1;
		if (r == -2)
			count = -1;
		if (r != 1)
			break;
		count++;
	}
	in->src.stash = NULL;
	return count;
}

int fb_pub_input_template(struct fb_pub_input *in, const char *json)
{
	struct fb_event *t = &in->tmpl;
	memset(t, 0, sizeof(*t));
	if (!json) {
		t->kind = FB_KIND_TEST;
		t->severity = FB_SEV_OK;
		t->tech = FB_TECH_IB;
		snprintf(t->subj.switch_name, sizeof(t->subj.switch_name), "loadgen");
		snprintf(t->text, sizeof(t->text), "generated by fabricbus publish");
		return 0;
	}
	char *argv1[] = { (char *)json };
	in->src.argv = argv1;
	in->src.argc = 1;
	unsigned long long save = in->gen_count;
	in->gen_count = 0;
	int r = fb_pub_input_next(in, 1, t);
	in->gen_count = save;
	if (in->cur) {
		json_decref(in->cur);
		in->cur = NULL;
	}
	in->src.argv = NULL;
	if (r != 1) {
		fprintf(stderr, "fabricbus publish: --template: %s\n",
			in->bad[0] ? in->bad + strlen("argument 1: ") : "no event");
		return 2;
	}
	in->produced = 0;
	return 0;
}

int fb_pub_input_open(struct fb_pub_input *in, int nargs, char **args, const char *file)
{
	if (nargs > 0) {
		in->src.argv = args;
		in->src.argc = nargs;
		return 0;
	}
	in->src.fd = STDIN_FILENO;
	in->src.name = "stdin";
	if (file && strcmp(file, "-") != 0) {
		in->src.fd = open(file, O_RDONLY | O_CLOEXEC);
		if (in->src.fd < 0) {
			fprintf(stderr, "fabricbus publish: cannot open %s: %s\n", file,
				strerror(errno));
			return 2;
		}
		in->src.name = file;
	}
	struct stat sb;
	in->src.regular = fstat(in->src.fd, &sb) == 0 && S_ISREG(sb.st_mode);
	in->src.buf = evbuffer_new();
	return in->src.buf ? 0 : 1;
}

int fb_pub_input_rewind(struct fb_pub_input *in, struct evbuffer *stash)
{
	in->produced = 0;
	in->src.lineno = 0;
	in->src.argi = 0;
	if (in->src.argv)
		return 0;
	if (in->src.regular) {
		evbuffer_drain(in->src.buf, evbuffer_get_length(in->src.buf));
		in->src.eof = 0;
		return lseek(in->src.fd, 0, SEEK_SET) == 0 ? 0 : -1;
	}
	return evbuffer_prepend_buffer(in->src.buf, stash);
}

void fb_pub_input_free(struct fb_pub_input *in)
{
	if (in->cur)
		json_decref(in->cur);
	if (in->src.buf)
		evbuffer_free(in->src.buf);
	if (in->src.fd > STDIN_FILENO)
		close(in->src.fd);
}
