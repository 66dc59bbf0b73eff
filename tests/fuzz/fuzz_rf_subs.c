/* fuzz_rf_subs.c - libFuzzer target for the Redfish subscription parsers:
 * the store file (rf_sub_store.h), a POST and a PATCH body (rf_sub.h), and
 * the push cursors file (push_cursor.h). The first byte picks which.
 *
 * Whatever the store parser accepts must serialize and parse back to the
 * same bytes (the file is the only copy of the subscriptions); whatever a
 * body builds must render, and the matcher must run on it.
 */
#include "fb_buf.h"
#include "fb_event.h"
#include "fb_log.h"
#include "push_cursor.h"
#include "rf_sub.h"
#include "rf_sub_store.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void exercise(const struct fb_rf_sub *s)
{
	json_t *r = fb_rf_sub_render(s);
	json_decref(r);
	struct fb_rf_facts f;
	fb_rf_facts_init(&f, "Fabric.1.0.PortFailed", FB_SEV_CRITICAL, "Alert",
			 "/redfish/v1/Fabrics/IB/Switches/sw1/Ports/3");
	(void)fb_rf_match(&s->match, &f);
}

static void store(const uint8_t *p, size_t n)
{
	struct fb_rf_store st;
	char err[256];
	fb_rf_store_init(&st, NULL);
	if (fb_rf_store_parse(&st, p, n, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < st.n; i++)
			exercise(st.v[i]);
		struct fb_buf a = FB_BUF_INIT, b = FB_BUF_INIT;
		struct fb_rf_store back;
		fb_rf_store_init(&back, NULL);
		if (fb_rf_store_serialize(&st, &a) == 0) {
			if (fb_rf_store_parse(&back, a.data, a.len, err, sizeof(err)) != 0)
				abort(); /* what we write, we must read */
			if (fb_rf_store_serialize(&back, &b) != 0 || a.len != b.len ||
			    memcmp(a.data, b.data, a.len) != 0)
				abort();
		}
		fb_rf_store_free(&back);
		fb_buf_free(&a);
		fb_buf_free(&b);
	}
	fb_rf_store_free(&st);
}

static void body(const uint8_t *p, size_t n, int patch)
{
	struct fb_rf_sub old, s;
	struct fb_rf_error e;
	static const char base[] = "{\"Destination\":\"http://127.0.0.1:9/x\",\"Context\":\"c\"}";
	if (fb_rf_sub_build_text(base, sizeof(base) - 1, FB_RF_SUB_CREATE, NULL, &old, &e) != 0)
		abort();
	if (fb_rf_sub_build_text((const char *)p, n, patch ? FB_RF_SUB_PATCH : FB_RF_SUB_CREATE,
				 patch ? &old : NULL, &s, &e) == 0) {
		exercise(&s);
		fb_rf_sub_free(&s);
	} else if (!e.key || e.status < 400) {
		abort(); /* every refusal names its Base message */
	}
	fb_rf_sub_free(&old);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		fb_log_init("fuzz_rf_subs", 0, FB_LOG_ERR);
		init = 1;
	}
	if (size < 1)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] & 3) {
	case 0:
		store(p, n);
		break;
	case 1:
		body(p, n, 0);
		break;
	case 2:
		body(p, n, 1);
		break;
	default: {
		struct fb_push_cursor *v;
		size_t k;
		const char *why;
		if (fb_push_cursors_parse(p, n, 0x1234, &v, &k, &why) == 0)
			free(v);
		break;
	}
	}
	return 0;
}
