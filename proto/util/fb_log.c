#include "fb_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static struct {
	char ident[32];
	int use_syslog;
	int level;
} g_log = { "fabricbus", 0, FB_LOG_INFO };

static const char *const level_names[] = { "error", "warn", "info", "debug" };

void fb_log_init(const char *ident, int use_syslog, int level)
{
	snprintf(g_log.ident, sizeof(g_log.ident), "%s", ident ? ident : "fabricbus");
	g_log.use_syslog = use_syslog;
	g_log.level = level;
	if (use_syslog)
		openlog(g_log.ident, LOG_PID, LOG_DAEMON);
}

void fb_log_set_level(int level) { g_log.level = level; }
int fb_log_level(void) { return g_log.level; }

int fb_log_level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (strcasecmp(name, level_names[i]) == 0)
			return i;
	if (strcasecmp(name, "warning") == 0)
		return FB_LOG_WARN;
	return -1;
}

void fb_log(int level, const char *fmt, ...)
{
	if (level > g_log.level)
		return;
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level < 0)
		level = 0;
	if (level > FB_LOG_DEBUG)
		level = FB_LOG_DEBUG;
	if (g_log.use_syslog) {
		static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
		syslog(prio[level], "%s", msg);
		return;
	}
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	char line[1200];
	int n = snprintf(line, sizeof(line), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: %s\n",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ts.tv_nsec / 1000000, g_log.ident, (int)getpid(),
			 level_names[level], msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* One write per line keeps threads from interleaving; a short write to a
	 * log is not worth retrying. */
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}
