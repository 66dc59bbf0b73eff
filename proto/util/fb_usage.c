/* fb_usage.c - the command-line refusal of every program (see fb_usage.h). */
#include "fb_usage.h"

#include <stdarg.h>
#include <stdio.h>

int fb_usage_error(const char *prog, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try: %s --help)\n", prog);
	return 2;
}
