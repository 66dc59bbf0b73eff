/* rf_live.c - the registry of connection-bound EventDestinations (rf_live.h). */
#include "rf_live.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUBS_PATH "/redfish/v1/EventService/Subscriptions/"

struct live {
	char id[FB_RF_LIVE_ID_MAX];
	char *destination, *context, *filter;
	fb_rf_live_close_fn close;
	void *arg;
	struct live *next;
};

struct fb_rf_live {
	pthread_mutex_t mu;
	struct live *head;
	uint64_t next_id;
};

struct fb_rf_live *fb_rf_live_new(void)
{
	struct fb_rf_live *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	pthread_mutex_init(&r->mu, NULL);
	r->next_id = 1;
	return r;
}

static void live_free(struct live *l)
{
	free(l->destination);
	free(l->context);
	free(l->filter);
	free(l);
}

void fb_rf_live_free(struct fb_rf_live *r)
{
	if (!r)
		return;
	while (r->head) {
		struct live *l = r->head;
		r->head = l->next;
		live_free(l);
	}
	pthread_mutex_destroy(&r->mu);
	free(r);
}

int fb_rf_live_add(struct fb_rf_live *r, const struct fb_rf_live_entry *e,
		   char id[FB_RF_LIVE_ID_MAX])
{
	struct live *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->destination = strdup(e->destination ? e->destination : "");
	l->context = strdup(e->context ? e->context : "");
	l->filter = strdup(e->filter ? e->filter : "");
	if (!l->destination || !l->context || !l->filter) {
		live_free(l);
		return -ENOMEM;
	}
	l->close = e->close;
	l->arg = e->arg;
	pthread_mutex_lock(&r->mu);
	snprintf(l->id, sizeof(l->id), "SSE-%" PRIu64, r->next_id++);
	l->next = r->head;
	r->head = l;
	pthread_mutex_unlock(&r->mu);
	memcpy(id, l->id, sizeof(l->id));
	return 0;
}

/* Unlink id; the caller frees. Called with the lock held. */
static struct live *unlink_id(struct fb_rf_live *r, const char *id)
{
	for (struct live **p = &r->head; *p; p = &(*p)->next)
		if (strcmp((*p)->id, id) == 0) {
			struct live *l = *p;
			*p = l->next;
			return l;
		}
	return NULL;
}

void fb_rf_live_remove(struct fb_rf_live *r, const char *id)
{
	pthread_mutex_lock(&r->mu);
	struct live *l = unlink_id(r, id);
	pthread_mutex_unlock(&r->mu);
	if (l)
		live_free(l);
}

int fb_rf_live_close(struct fb_rf_live *r, const char *id)
{
	pthread_mutex_lock(&r->mu);
	struct live *l = unlink_id(r, id);
	pthread_mutex_unlock(&r->mu);
	if (!l)
		return -ENOENT;
	if (l->close)
		l->close(l->arg, l->id);
	live_free(l);
	return 0;
}

int fb_rf_live_has(struct fb_rf_live *r, const char *id)
{
	pthread_mutex_lock(&r->mu);
	int found = 0;
	for (struct live *l = r->head; l && !found; l = l->next)
		found = strcmp(l->id, id) == 0;
	pthread_mutex_unlock(&r->mu);
	return found;
}

static int member(const struct live *l, struct fb_buf *out)
{
	int rc = fb_buf_printf(out,
			       "{\"@odata.id\":\"" SUBS_PATH "%s\",\"@odata.type\":"
			       "\"#EventDestination.v1_15_0.EventDestination\",\"Id\":\"%s\","
			       "\"Name\":\"Server-Sent Events stream %s\",\"Destination\":",
			       l->id, l->id, l->id);
	rc = rc ? rc : fb_buf_put_json_str(out, l->destination);
	rc = rc ? rc : fb_buf_puts(out, ",\"Context\":");
	rc = rc ? rc : fb_buf_put_json_str(out, l->context);
	rc = rc ? rc : fb_buf_puts(out, ",\"Protocol\":\"Redfish\",\"SubscriptionType\":\"SSE\","
				       "\"EventFormatType\":\"Event\",\"HttpHeaders\":[],"
				       "\"Status\":{\"State\":\"Enabled\",\"Health\":\"OK\"},"
				       "\"Oem\":{\"Fabricbus\":{\"@odata.type\":"
				       "\"#FabricbusEventDestination.v1_0_0.EventDestination\","
				       "\"Filter\":");
	rc = rc ? rc : fb_buf_put_json_str(out, l->filter);
	return rc ? rc : fb_buf_puts(out, "}}}");
}

int fb_rf_live_member_json(struct fb_rf_live *r, const char *id, struct fb_buf *out)
{
	pthread_mutex_lock(&r->mu);
	int rc = -ENOENT;
	for (struct live *l = r->head; l; l = l->next)
		if (strcmp(l->id, id) == 0) {
			rc = member(l, out) ? -ENOMEM : 0;
			break;
		}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

int fb_rf_live_members(struct fb_rf_live *r, int sep_first, struct fb_buf *out)
{
	pthread_mutex_lock(&r->mu);
	int n = 0;
	for (struct live *l = r->head; l; l = l->next) {
		if (fb_buf_printf(out, "%s{\"@odata.id\":\"" SUBS_PATH "%s\"}",
				  n == 0 && sep_first ? "" : ",", l->id)) {
			n = -ENOMEM;
			break;
		}
		n++;
	}
	pthread_mutex_unlock(&r->mu);
	return n;
}
