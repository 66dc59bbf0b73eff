/* slurm_pub.c - action events for drains, undrains, skips and the cap. */
#include "slurm_pub.h"

#include "slurm_conf.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void init(struct fb_event *ev, uint8_t sev, const char *node, uint64_t cause_id,
		 const char *jobs)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = fb_now_ns();
	ev->kind = FB_KIND_ACTION;
	ev->severity = sev;
	if (node)
		snprintf(ev->subj.node, sizeof(ev->subj.node), "%s", node);
	(void)fb_event_add_counter(ev, FB_CTR_CAUSE_EVENT_ID, cause_id); /* first: never full */
	if (jobs && strlen(jobs) < sizeof(ev->jobs) && fb_event_jobs_check(jobs, strlen(jobs), NULL) == 0)
		strcpy(ev->jobs, jobs);
}

/* The text, cut with "..." when it does not fit. */
static void text(struct fb_event *ev, int dry_run, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void text(struct fb_event *ev, int dry_run, const char *fmt, ...)
{
	char buf[1024];
	size_t off = (size_t)snprintf(buf, sizeof(buf), "%s", dry_run ? "dry-run " : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + off, sizeof(buf) - off, fmt, ap);
	va_end(ap);
	size_t n = strlen(buf);
	if (n >= sizeof(ev->text)) {
		n = sizeof(ev->text) - 4;
		while (n && (buf[n] & 0xc0) == 0x80)
			n--; /* do not cut a UTF-8 sequence */
		memcpy(buf + n, "...", 4);
		n += 3;
	}
	memcpy(ev->text, buf, n + 1); /* n < sizeof(ev->text) either way */
}

void fbs_pub_drain(struct fb_event *ev, const char *node, const char *reason, uint64_t cause_id,
		   const char *jobs, int dry_run)
{
	init(ev, FB_SEV_WARNING, node, cause_id, jobs);
	text(ev, dry_run, "drain: %s", reason);
}

void fbs_pub_undrain(struct fb_event *ev, const char *node, const char *cause, uint64_t stable_ms,
		     uint64_t cause_id, const char *jobs, int dry_run)
{
	char stable[32];
	fbs_duration_format(stable_ms, stable, sizeof(stable));
	init(ev, FB_SEV_OK, node, cause_id, jobs);
	text(ev, dry_run, "undrain: %s stable for %s", cause, stable);
}

void fbs_pub_skip(struct fb_event *ev, const char *node, const char *reason, uint64_t cause_id,
		  const char *jobs, int dry_run)
{
	init(ev, FB_SEV_OK, node, cause_id, jobs);
	text(ev, dry_run, "skip: %s keeps reason '%s'", node, reason);
}

void fbs_pub_cap(struct fb_event *ev, unsigned count, unsigned limit, const char *hostlist,
		 size_t n_refused, uint64_t cause_id, int dry_run)
{
	init(ev, FB_SEV_CRITICAL, NULL, cause_id, NULL);
	(void)fb_event_add_counter(ev, FB_CTR_NODE_COUNT, n_refused);
	(void)fb_event_add_counter(ev, FB_CTR_NODE_LIMIT, limit);
	text(ev, dry_run, "cap: %u node%s drained by fabricbus, limit %u; not draining %s", count,
	     count == 1 ? "" : "s", limit, hostlist);
}

int fbs_jobs_add(char *jobs, uint32_t job_id)
{
	size_t n = strlen(jobs);
	char id[16];
	int k = snprintf(id, sizeof(id), "%s%" PRIu32, n ? "," : "", job_id);
	if (k < 0 || n + (size_t)k >= FB_JOBS_MAX)
		return -1;
	memcpy(jobs + n, id, (size_t)k + 1);
	return 0;
}
