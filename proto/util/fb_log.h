/* fb_log.h - the process-wide logger (stderr or syslog).
 *
 * One of the two pieces of global state we allow (the other is the loaded
 * config). Safe to call from any thread: each line is written with a single
 * write so lines from the libevent loop and the libwebsockets thread never
 * interleave mid-line.
 */
#ifndef FB_LOG_H
#define FB_LOG_H

enum fb_log_level { FB_LOG_ERR = 0, FB_LOG_WARN, FB_LOG_INFO, FB_LOG_DEBUG };

/* ident: program name for syslog and the stderr prefix. */
void fb_log_init(const char *ident, int use_syslog, int level);
void fb_log_set_level(int level);
int fb_log_level(void);
/* "error", "warn", "info", "debug" -> level, or -1. */
int fb_log_level_parse(const char *name);

void fb_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define fb_log_err(...) fb_log(FB_LOG_ERR, __VA_ARGS__)
#define fb_log_warn(...) fb_log(FB_LOG_WARN, __VA_ARGS__)
#define fb_log_info(...) fb_log(FB_LOG_INFO, __VA_ARGS__)
#define fb_log_debug(...) \
	do { if (fb_log_level() >= FB_LOG_DEBUG) fb_log(FB_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
