/* fb_usage.h - how every fabricbus program refuses its command line, so that
 * an operator (or a wrapper script) sees one form from all of them:
 *
 *   fabricbus-agent-ib: unknown option '--bogus' (try: fabricbus-agent-ib --help)
 *
 * prog is what the operator typed before the options ("fabricbus-slurm",
 * "fabricbus status"). Exit status 2 is the usage error of every man page.
 */
#ifndef FB_USAGE_H
#define FB_USAGE_H

/* "prog: <fmt...> (try: prog --help)" on stderr; returns 2. */
int fb_usage_error(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
