/* ws_fabric_map.c - the body of GET /fabric/map, whole or for ?nodes=
 * (see ws_fabric_map.h). ws_fabric.c does the HTTP and streams it.
 *
 * A body is a list of pieces: most point into the snapshot (which the body
 * holds a reference to), the rest into the body's own buffer. A ?nodes=
 * request is answered from the snapshot's index (fabric_map.h): the
 * requested names are sorted, looked up by binary search, and the body is
 * the node and switch members between a few bytes of its own, copied out a
 * chunk at a time like the whole map. The work and memory go with the
 * request's size (a 1000-node job start: a few ms), not the map's (several
 * MB). No lws call here, so tests and fuzzers drive it directly.
 */
#include "ws_fabric_map.h"

#include "fabric_map.h"
#include "fb_buf.h"
#include "fb_hostlist.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct piece {
	const char *p;
	size_t n;
};

struct fb_ws_map_body {
	struct fb_fabric_snap *snap; /* a reference: most pieces point into it */
	struct piece *pieces;
	size_t n_pieces, cap;
	struct fb_buf own;           /* our bytes ("Missing"..."Nodes":{), whole before used */
	size_t len, at, at_off;      /* bytes in all; the next piece, bytes of it read */
};

static int add_piece(struct fb_ws_map_body *b, const char *p, size_t n)
{
	if (b->n_pieces == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct piece *np = realloc(b->pieces, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		b->pieces = np;
		b->cap = cap;
	}
	b->pieces[b->n_pieces++] = (struct piece){ p, n };
	b->len += n;
	return 0;
}

static struct fb_ws_map_body *body_new(struct fb_fabric_snap *snap)
{
	struct fb_ws_map_body *b = calloc(1, sizeof(*b));
	if (b)
		b->snap = fb_fabric_snap_ref(snap);
	return b;
}

void fb_ws_map_body_free(struct fb_ws_map_body *b)
{
	if (!b)
		return;
	fb_fabric_snap_unref(b->snap);
	free(b->pieces);
	fb_buf_free(&b->own);
	free(b);
}

size_t fb_ws_map_body_len(const struct fb_ws_map_body *b) { return b->len; }

size_t fb_ws_map_body_read(struct fb_ws_map_body *b, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n && b->at < b->n_pieces) {
		const struct piece *pc = &b->pieces[b->at];
		size_t k = pc->n - b->at_off < n - got ? pc->n - b->at_off : n - got;
		memcpy((char *)buf + got, pc->p + b->at_off, k);
		got += k;
		b->at_off += k;
		if (b->at_off == pc->n) {
			b->at++;
			b->at_off = 0;
		}
	}
	return got;
}

int fb_ws_fabric_whole(struct fb_fabric_snap *snap, struct fb_ws_map_body **out)
{
	struct fb_ws_map_body *b = body_new(snap);
	if (!b || add_piece(b, snap->json, snap->len)) {
		fb_ws_map_body_free(b);
		return -ENOMEM;
	}
	*out = b;
	return 0;
}

/* The requested names: their bytes, then pointers to them, sorted, unique. */
struct wanted {
	struct fb_buf bytes, offs;
	const char **names;
	size_t n;
};

static int want_name(void *arg, const char *name, size_t len)
{
	struct wanted *w = arg;
	size_t off = w->bytes.len;
	return fb_buf_put(&w->bytes, name, len + 1) || fb_buf_put(&w->offs, &off, sizeof(off))
		       ? -ENOMEM : 0;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int sort_wanted(struct wanted *w)
{
	size_t n = w->offs.len / sizeof(size_t);
	if (!(w->names = malloc(n * sizeof(*w->names))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		w->names[i] = (const char *)w->bytes.data + ((const size_t *)w->offs.data)[i];
	qsort(w->names, n, sizeof(*w->names), cmp_strp);
	w->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!w->n || strcmp(w->names[w->n - 1], w->names[i]))
			w->names[w->n++] = w->names[i];
	return 0;
}

static const struct fb_fabric_frag *find_node(const struct fb_fabric_snap *s, const char *name)
{
	size_t lo = 0, hi = s->n_nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, s->names + s->nodes[mid].name_off);
		if (!c)
			return &s->nodes[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static int cmp_u32(const void *pa, const void *pb)
{
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	return a < b ? -1 : a > b;
}

/* The found nodes' members (ascending: the names are sorted) and their
 * switches; the others into b->own as "Missing". */
struct found {
	const struct fb_fabric_frag **nodes;
	size_t n;
	uint32_t *sws;
	size_t n_sws;
};

static int look_up(struct fb_ws_map_body *b, const struct wanted *w, struct found *f)
{
	const struct fb_fabric_snap *s = b->snap;
	size_t missing = 0, cap_sws = 0;
	int rc = fb_buf_puts(&b->own, "\"Missing\":[");
	if (rc || !(f->nodes = malloc((w->n ? w->n : 1) * sizeof(*f->nodes))))
		return -ENOMEM;
	for (size_t i = 0; i < w->n && !rc; i++) {
		const struct fb_fabric_frag *x = find_node(s, w->names[i]);
		if (!x) {
			if (missing++ < FB_WS_MAP_MISSING_MAX)
				rc = fb_buf_puts(&b->own, missing > 1 ? "," : "") ||
				     fb_buf_put_json_str(&b->own, w->names[i]);
			continue;
		}
		f->nodes[f->n++] = x;
		if (!x->sw_n) /* a node known only by its jobs */
			continue;
		if (f->n_sws + x->sw_n > cap_sws) {
			cap_sws = 2 * (f->n_sws + x->sw_n);
			uint32_t *ns = realloc(f->sws, cap_sws * sizeof(*ns));
			if (!ns)
				return -ENOMEM;
			f->sws = ns;
		}
		memcpy(f->sws + f->n_sws, s->sw_of + x->sw_first, x->sw_n * sizeof(*f->sws));
		f->n_sws += x->sw_n;
	}
	if (rc || fb_buf_printf(&b->own, "],\"MissingCount\":%zu,\"Nodes\":{", missing))
		return -ENOMEM;
	if (f->n_sws > 1)
		qsort(f->sws, f->n_sws, sizeof(*f->sws), cmp_u32);
	return 0;
}

/* head, our part, the nodes, the switches (each once, in GUID order). */
static int assemble(struct fb_ws_map_body *b, const struct found *f)
{
	const struct fb_fabric_snap *s = b->snap;
	int rc = add_piece(b, s->json, s->head_len) ||
		 add_piece(b, (const char *)b->own.data, b->own.len);
	for (size_t i = 0; i < f->n && !rc; i++)
		rc = (i && add_piece(b, ",", 1)) ||
		     add_piece(b, s->json + f->nodes[i]->off, f->nodes[i]->len);
	rc = rc || add_piece(b, "},\"Switches\":{", 14);
	for (size_t i = 0, k = 0; i < f->n_sws && !rc; i++) {
		if (i && f->sws[i] == f->sws[i - 1])
			continue;
		const struct fb_fabric_frag *x = &s->sws[f->sws[i]];
		rc = (k++ && add_piece(b, ",", 1)) || add_piece(b, s->json + x->off, x->len);
	}
	return rc || add_piece(b, "}}", 2) ? -ENOMEM : 0;
}

int fb_ws_fabric_select(struct fb_fabric_snap *snap, const char *expr, size_t len,
			struct fb_ws_map_body **out, char *why, size_t whysz)
{
	struct wanted w = { FB_BUF_INIT, FB_BUF_INIT, NULL, 0 };
	struct found f = { 0 };
	char reason[200];
	struct fb_ws_map_body *b = body_new(snap);
	int rc = b ? fb_hostlist_expand(expr, len, FB_WS_MAP_NODES_MAX, want_name, &w, NULL, reason,
					sizeof(reason))
		   : -ENOMEM;
	if (rc && rc != -ENOMEM)
		snprintf(why, whysz, "nodes: %s", reason);
	if (!rc)
		rc = sort_wanted(&w);
	if (!rc)
		rc = look_up(b, &w, &f);
	if (!rc)
		rc = assemble(b, &f);
	fb_buf_free(&w.bytes);
	fb_buf_free(&w.offs);
	free(w.names);
	free(f.nodes);
	free(f.sws);
	if (rc) {
		fb_ws_map_body_free(b);
		return rc;
	}
	*out = b;
	return 0;
}
