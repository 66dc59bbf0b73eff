/* cli_publish.h - private to `fabricbus publish`: where events come from.
 * The input side (cli_publish_input.c) reads and validates JSON arguments,
 * files and stdin, or makes --count copies of a template; the session side
 * (cli_publish.c) only asks it for the next event, so the rule "validate
 * before sending, except a long pipe" lives in one file.
 */
#ifndef FB_CLI_PUBLISH_H
#define FB_CLI_PUBLISH_H

#include "fb_event.h"

#include <jansson.h>
#include <stddef.h>

struct evbuffer;

#define STREAM_AFTER 100000   /* pipe lines validated before sending starts */

/* A source of lines: arguments, or a file descriptor read through a buffer. */
struct fb_pub_lines {
	char **argv;          /* argument mode when non-NULL */
	int argc, argi;
	int fd;
	int regular;          /* reads never block */
	int readable;         /* the loop said fd is readable */
	int eof;
	struct evbuffer *buf;
	struct evbuffer *stash; /* when set, lines read are also kept here */
	const char *name;     /* "stdin" or the file name, for messages */
	unsigned long lineno;
};

/* The events to publish. Owns cur, src.buf and src.fd (when above stdin);
 * fb_pub_input_free releases them. The caller zeroes it and sets src.fd = -1. */
struct fb_pub_input {
	struct fb_pub_lines src;
	json_t *cur;          /* the parsed line being consumed */
	size_t cur_idx;       /* next element when cur is an array */
	unsigned long cur_line;
	unsigned long long gen_count; /* --count/--generate: events to make */
	struct fb_event tmpl;
	unsigned long long produced;
	char bad[576];        /* the first bad line, once seen: where (300) and why (256) */
};

/* Read the nargs JSON args, else file ('-' or NULL: stdin). 0, 2 when the
 * file cannot be opened (said on stderr), 1 when out of memory. */
int fb_pub_input_open(struct fb_pub_input *in, int nargs, char **args, const char *file);

/* Set the --count template from json (NULL: the built-in test event).
 * 0, or 2 with the reason on stderr. */
int fb_pub_input_template(struct fb_pub_input *in, const char *json);

/* Validate input before connecting: all of it, or the first STREAM_AFTER
 * lines of a pipe, whose lines are kept in stash for the send pass. Returns
 * the event count, or -1 (in->bad says why); *streaming is set when the pipe
 * has more lines than were validated. */
long long fb_pub_input_validate(struct fb_pub_input *in, int *streaming, struct evbuffer *stash);

/* Put the source back to its start for the send pass. 0 or -1 (errno). */
int fb_pub_input_rewind(struct fb_pub_input *in, struct evbuffer *stash);

/* 1 got an event, 0 would block, -1 no more, -2 bad input (in->bad), -3 the
 * validation pass has seen STREAM_AFTER lines of a pipe. */
int fb_pub_input_next(struct fb_pub_input *in, int may_block, struct fb_event *ev);

void fb_pub_input_free(struct fb_pub_input *in);

#endif
