/* fb_hc.c - libcurl multi on libevent (fb_hc.h). */
#include "fb_hc.h"

#include "fb_err.h"
#include "fb_log.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct fb_hc_xfer {
	struct fb_hc *hc;
	CURL *easy;
	struct curl_slist *headers;
	fb_hc_done_fn done;
	void *arg;
	char *body;
	size_t len, cap;
	char location[1024];
	char error[CURL_ERROR_SIZE];
	struct fb_hc_xfer *prev, *next;
};

struct fb_hc {
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	struct fb_hc_opts o;
	char ca_file[4096];
	struct fb_hc_xfer *xfers; /* in flight */
	size_t n;
};

/* One watched socket: its event, kept in curl's socket pointer. */
struct sock {
	struct event *ev;
	struct fb_hc *hc;
};

static void finish(struct fb_hc *hc);

static void sock_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fb_hc *hc = arg;
	int action = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
	int running;
	curl_multi_socket_action(hc->multi, fd, action, &running);
	finish(hc);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct fb_hc *hc = arg;
	int running;
	curl_multi_socket_action(hc->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	finish(hc);
}

static int socket_fn(CURL *easy, curl_socket_t s, int what, void *userp, void *socketp)
{
	(void)easy;
	struct fb_hc *hc = userp;
	struct sock *sk = socketp;
	if (what == CURL_POLL_REMOVE) {
		if (sk) {
			event_free(sk->ev);
			free(sk);
		}
		curl_multi_assign(hc->multi, s, NULL);
		return 0;
	}
	short kind = (short)((what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0) |
			     EV_PERSIST);
	if (!sk) {
		sk = calloc(1, sizeof(*sk));
		if (!sk)
			return -1;
		sk->hc = hc;
		curl_multi_assign(hc->multi, s, sk);
	} else {
		event_del(sk->ev);
		event_free(sk->ev);
	}
	sk->ev = event_new(hc->base, s, kind, sock_cb, hc);
	if (!sk->ev || event_add(sk->ev, NULL) != 0)
		return -1;
	return 0;
}

static int timer_fn(CURLM *multi, long timeout_ms, void *userp)
{
	(void)multi;
	struct fb_hc *hc = userp;
	if (timeout_ms < 0)
		return evtimer_del(hc->timer);
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	return evtimer_add(hc->timer, &tv);
}

int fb_hc_new(struct event_base *base, const struct fb_hc_opts *o, struct fb_hc **out)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	struct fb_hc *hc = calloc(1, sizeof(*hc));
	if (!hc)
		return -ENOMEM;
	hc->base = base;
	hc->o = *o;
	if (o->ca_file)
		snprintf(hc->ca_file, sizeof(hc->ca_file), "%s", o->ca_file);
	hc->o.ca_file = hc->ca_file;
	if (!hc->o.connect_timeout_ms)
		hc->o.connect_timeout_ms = 5000;
	if (!hc->o.timeout_ms)
		hc->o.timeout_ms = 30000;
	if (!hc->o.max_body)
		hc->o.max_body = 1u << 20;
	hc->multi = curl_multi_init();
	hc->timer = evtimer_new(base, timer_cb, hc);
	if (!hc->multi || !hc->timer) {
		fb_hc_free(hc);
		return -ENOMEM;
	}
	curl_multi_setopt(hc->multi, CURLMOPT_SOCKETFUNCTION, socket_fn);
	curl_multi_setopt(hc->multi, CURLMOPT_SOCKETDATA, hc);
	curl_multi_setopt(hc->multi, CURLMOPT_TIMERFUNCTION, timer_fn);
	curl_multi_setopt(hc->multi, CURLMOPT_TIMERDATA, hc);
	curl_multi_setopt(hc->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 8L);
	*out = hc;
	return 0;
}

static void xfer_free(struct fb_hc *hc, struct fb_hc_xfer *x)
{
	if (x->prev)
		x->prev->next = x->next;
	else
		hc->xfers = x->next;
	if (x->next)
		x->next->prev = x->prev;
	hc->n--;
	curl_multi_remove_handle(hc->multi, x->easy);
	curl_easy_cleanup(x->easy);
	curl_slist_free_all(x->headers);
	free(x->body);
	free(x);
}

void fb_hc_free(struct fb_hc *hc)
{
	if (!hc)
		return;
	while (hc->xfers)
		xfer_free(hc, hc->xfers);
	if (hc->multi)
		curl_multi_cleanup(hc->multi); /* closes sockets: socket_fn frees their events */
	if (hc->timer)
		event_free(hc->timer);
	free(hc);
	curl_global_cleanup();
}

static size_t write_fn(char *p, size_t size, size_t nmemb, void *arg)
{
	struct fb_hc_xfer *x = arg;
	size_t n = size * nmemb, keep = n;
	if (x->len + keep > x->hc->o.max_body)
		keep = x->hc->o.max_body - x->len;
	if (keep) {
		if (x->len + keep + 1 > x->cap) {
			size_t cap = (x->len + keep + 1) * 2;
			char *b = realloc(x->body, cap);
			if (!b)
				return 0; /* curl fails the request: CURLE_WRITE_ERROR */
			x->body = b;
			x->cap = cap;
		}
		memcpy(x->body + x->len, p, keep);
		x->len += keep;
		x->body[x->len] = '\0';
	}
	return n;
}

static size_t header_fn(char *p, size_t size, size_t nmemb, void *arg)
{
	struct fb_hc_xfer *x = arg;
	size_t n = size * nmemb;
	if (n > 9 && strncasecmp(p, "Location:", 9) == 0) {
		const char *v = p + 9;
		size_t l = n - 9;
		while (l && (*v == ' ' || *v == '\t'))
			v++, l--;
		while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
			l--;
		if (l >= sizeof(x->location))
			l = sizeof(x->location) - 1;
		memcpy(x->location, v, l);
		x->location[l] = '\0';
	}
	return n;
}

static int setup(struct fb_hc *hc, struct fb_hc_xfer *x, const struct fb_hc_req *r)
{
	CURL *e = x->easy;
	int has_type = 0;
	for (size_t i = 0; i < r->n_headers; i++) {
		has_type |= strncasecmp(r->headers[i], "Content-Type:", 13) == 0;
		struct curl_slist *l = curl_slist_append(x->headers, r->headers[i]);
		if (!l)
			return -ENOMEM;
		x->headers = l;
	}
	static const char *const fixed[] = { "Expect:", "Content-Type: application/json",
					     "Accept: application/json" };
	for (size_t i = has_type ? 1 : 0; i < 3; i++) {
		if (i == 1 && (has_type || !r->body))
			continue;
		struct curl_slist *l = curl_slist_append(x->headers, fixed[i]);
		if (!l)
			return -ENOMEM;
		x->headers = l;
	}
	CURLcode c = curl_easy_setopt(e, CURLOPT_URL, r->url);
	if (c == CURLE_OK)
		c = curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c != CURLE_OK)
		return -EINVAL;
	curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->error);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_fn);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_fn);
	curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, hc->o.connect_timeout_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, r->timeout_ms ? r->timeout_ms : hc->o.timeout_ms);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "fabricbusd/" FB_VERSION);
	if (hc->ca_file[0])
		curl_easy_setopt(e, CURLOPT_CAINFO, hc->ca_file);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, r->no_verify ? 0L : 1L);
	curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, r->no_verify ? 0L : 2L);
	if (r->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, r->body_len ? r->body : "");
	}
	const char *m = r->method ? r->method : (r->body ? "POST" : "GET");
	if (strcmp(m, "GET") == 0 && !r->body)
		curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
	else if (strcmp(m, "POST") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, m);
	return 0;
}

int fb_hc_send(struct fb_hc *hc, const struct fb_hc_req *r, fb_hc_done_fn done, void *arg,
	       struct fb_hc_xfer **out)
{
	struct fb_hc_xfer *x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->hc = hc;
	x->done = done;
	x->arg = arg;
	x->easy = curl_easy_init();
	int rc = x->easy ? setup(hc, x, r) : -ENOMEM;
	if (!rc && curl_multi_add_handle(hc->multi, x->easy) != CURLM_OK)
		rc = -ENOMEM;
	if (rc) {
		if (x->easy)
			curl_easy_cleanup(x->easy);
		curl_slist_free_all(x->headers);
		free(x);
		return rc;
	}
	x->next = hc->xfers;
	if (hc->xfers)
		hc->xfers->prev = x;
	hc->xfers = x;
	hc->n++;
	if (out)
		*out = x;
	return 0;
}

void fb_hc_cancel(struct fb_hc *hc, struct fb_hc_xfer *x)
{
	if (x)
		xfer_free(hc, x);
}

size_t fb_hc_in_flight(const struct fb_hc *hc) { return hc->n; }

/* Hand every finished transfer to its caller. */
static void finish(struct fb_hc *hc)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(hc->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		struct fb_hc_xfer *x = NULL;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
		if (!x)
			continue;
		struct fb_hc_resp r = { 0 };
		char err[CURL_ERROR_SIZE], loc[sizeof(x->location)];
		CURLcode res = m->data.result;
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &r.status);
		curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME, &r.seconds);
		if (res != CURLE_OK) {
			r.status = 0;
			r.no_reply = res == CURLE_GOT_NOTHING;
			fb_err_set(err, sizeof(err), 0, "%s",
				   x->error[0] ? x->error : curl_easy_strerror(res));
			r.error = err;
		} else {
			r.error = "";
		}
		r.ok = r.status >= 200 && r.status < 300;
		r.body = x->body ? x->body : "";
		r.body_len = x->len;
		memcpy(loc, x->location, sizeof(loc));
		r.location = loc;
		fb_hc_done_fn done = x->done;
		void *arg = x->arg;
		/* Keep the body alive through the callback, then free the rest. */
		char *body = x->body;
		x->body = NULL;
		xfer_free(hc, x);
		done(arg, &r);
		free(body);
	}
}
