/* snmp_poll.c - the IF-MIB poller on the agent's libevent loop. */
#include "snmp_poll.h"

#include "fb_err.h"

#include <net-snmp/library/large_fd_set.h>
#include "fb_log.h"

#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The walked columns, numerically (Debian ships no MIB files). */
enum { C_ADMIN, C_OPER, C_IN_DISC, C_IN_ERR, C_OUT_DISC, C_OUT_ERR, C_HC_IN, C_HC_OUT, C_NAME,
       C__N };
static const oid col_oid[C__N][11] = {
	[C_ADMIN] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 7 },
	[C_OPER] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 8 },
	[C_IN_DISC] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 13 },
	[C_IN_ERR] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 14 },
	[C_OUT_DISC] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 19 },
	[C_OUT_ERR] = { 1, 3, 6, 1, 2, 1, 2, 2, 1, 20 },
	[C_HC_IN] = { 1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6 },
	[C_HC_OUT] = { 1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 10 },
	[C_NAME] = { 1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1 },
};
static const size_t col_len[C__N] = { 10, 10, 10, 10, 10, 10, 11, 11, 11 };
static const int col_ctr[C__N] = { -1, -1, SNMP_IFC_IN_DISC, SNMP_IFC_IN_ERR, SNMP_IFC_OUT_DISC,
				   SNMP_IFC_OUT_ERR, -1, -1, -1 };
static const oid sys_uptime[] = { 1, 3, 6, 1, 2, 1, 1, 3 };          /* .0 */
static const oid if_table_last_change[] = { 1, 3, 6, 1, 2, 1, 31, 1, 5 }; /* .0 */
#define REPS 10         /* rows per GETBULK: 9 columns x 10 fit a 1472-byte reply */
#define MAX_PAGES 4096  /* per round: a table that never ends is a broken agent */

struct target {
	struct snmp_poll *p;
	const struct snmp_conf_poll *cp;
	void *sessp;
	int fd;
	struct event *rd;
	netsnmp_large_fd_set fds;
	struct snmp_ifc_switch sw;
	int resync;             /* diff against the broker after the next round */
	/* the MAC walk (snmp_mac.h), after an IF-MIB round once mac_interval_ms passed */
	int mac_busy;
	uint64_t mac_last_ms;
	oid mnext[SNMP_MAC_C__N][MAX_OID_LEN];
	size_t mnext_len[SNMP_MAC_C__N];
	unsigned mdone;
	struct snmp_mac_tab mtab;
	/* the round in progress */
	int busy, first, names, pages;
	oid next[C__N][MAX_OID_LEN];
	size_t next_len[C__N];
	unsigned done;          /* columns finished, a bit each */
	struct snmp_ifc_row *rows;
	size_t n_rows, cap;
	struct snmp_ifc_round round;
};

struct snmp_poll {
	struct snmp_poll_cfg cfg;
	struct target *t;
	size_t n;
	struct event *tick, *timeouts;
	uint64_t events;
	int stopping;
};

void snmp_poll_cfg_default(struct snmp_poll_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ms = 10000;
	cfg->timeout_ms = 1000;
	cfg->retries = 1;
	cfg->mac_interval_ms = 60000;
	snmp_ifc_cfg_default(&cfg->ifc);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void emit(void *arg, const struct fb_event *ev)
{
	struct snmp_poll *p = arg;
	p->events++;
	p->cfg.emit(p->cfg.emit_arg, ev);
}

static struct snmp_ifc_row *row_of(struct target *t, uint32_t ifindex)
{
	/* Columns come in ifIndex order, so the row is nearly always the last
	 * or a recent one: search from the end. */
	for (size_t i = t->n_rows; i-- > 0;)
		if (t->rows[i].ifindex == ifindex)
			return &t->rows[i];
	if (t->n_rows == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct snmp_ifc_row *r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		t->rows = r;
		t->cap = cap;
	}
	struct snmp_ifc_row *r = &t->rows[t->n_rows++];
	memset(r, 0, sizeof(*r));
	r->ifindex = ifindex;
	return r;
}

static int send_page(struct target *t);

/* One GETBULK of the n columns not done yet, each from where it stopped
 * (next[c]), after sysUpTime.0 and ifTableLastChange.0 when scalars. */
static int send_bulk(struct target *t, oid (*next)[MAX_OID_LEN], const size_t *next_len, int n,
		     unsigned done, int scalars, netsnmp_callback cb)
{
	netsnmp_pdu *pdu = snmp_pdu_create(SNMP_MSG_GETBULK);
	if (!pdu)
		return -ENOMEM;
	pdu->non_repeaters = scalars ? 2 : 0;
	pdu->max_repetitions = REPS;
	if (scalars) {
		snmp_add_null_var(pdu, sys_uptime, 8);
		snmp_add_null_var(pdu, if_table_last_change, 9);
	}
	for (int c = 0; c < n; c++)
		if (!(done & (1u << c)))
			snmp_add_null_var(pdu, next[c], next_len[c]);
	if (snmp_sess_async_send(t->sessp, pdu, cb, t) == 0) {
		snmp_free_pdu(pdu);
		return -EIO;
	}
	return 0;
}

/* Why a response cannot be used, or NULL. */
static const char *response_error(int op, const netsnmp_pdu *pdu)
{
	if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE)
		return "timed out";
	if (pdu->command != SNMP_MSG_RESPONSE || pdu->errstat != SNMP_ERR_NOERROR)
		return pdu->errstat ? snmp_errstring((int)pdu->errstat) : "not a response";
	return NULL;
}

static void round_failed(struct target *t, const char *why)
{
	t->busy = 0;
	fb_log_debug("switch '%s' (%s): poll round failed: %s", t->sw.name, t->sw.addr, why);
	snmp_ifc_failed(&t->sw, &t->p->cfg.ifc, emit, t->p);
}

static void start_mac_walk(struct target *t);

/* The diff against the broker, if one is due (first round, reconnect). A
 * map that cannot be read gets the recorded peers sent as they are. */
static void resync_if_due(struct target *t)
{
	if (!t->resync || !t->p->cfg.resync)
		return;
	t->resync = 0;
	if (t->p->cfg.resync(t->p->cfg.emit_arg, &t->sw, emit, t->p) < 0)
		snmp_ifc_send_peers(&t->sw, emit, t->p);
}

static void round_done(struct target *t)
{
	t->busy = 0;
	t->round.rows = t->rows;
	t->round.n_rows = t->n_rows;
	t->round.have_names = t->names;
	t->round.t_ms = mono_ms();
	if (snmp_ifc_update(&t->sw, &t->p->cfg.ifc, &t->round, emit, t->p) != 0) {
		fb_log_warn("switch '%s': out of memory keeping its ports; round ignored", t->sw.name);
		return;
	}
	uint64_t now = t->round.t_ms;
	if (t->p->cfg.mac_interval_ms &&
	    (!t->mac_last_ms || now - t->mac_last_ms >= t->p->cfg.mac_interval_ms)) {
		/* the resync waits for it: it diffs the peers too */
		start_mac_walk(t);
		return;
	}
	resync_if_due(t);
}

/* ---- the MAC walk: LLDP, FDB and ARP tables (snmp_mac.h) ---- */

static void mac_walk_done(struct target *t, const char *failed)
{
	t->busy = 0;
	t->mac_busy = 0;
	t->mac_last_ms = mono_ms();
	if (failed) {
		fb_log_debug("switch '%s' (%s): MAC walk failed: %s", t->sw.name, t->sw.addr, failed);
	} else {
		struct snmp_mac_port *mp = NULL;
		size_t n = 0;
		if (snmp_mac_resolve(&t->mtab, &mp, &n) != 0)
			fb_log_warn("switch '%s': out of memory resolving its MAC tables", t->sw.name);
		/* With a resync to come, it sends what the broker's map lacks:
		 * a restarted agent does not repeat every peer. */
		int quiet = t->resync && t->p->cfg.resync;
		size_t ev = snmp_ifc_set_peers(&t->sw, mp, n, quiet ? NULL : emit, t->p);
		fb_log_debug("switch '%s' (%s): MAC walk: %llu rows (%llu ignored, %llu over the cap), "
			     "%zu ports with a source, %zu new peers", t->sw.name, t->sw.addr,
			     (unsigned long long)t->mtab.taken, (unsigned long long)t->mtab.ignored,
			     (unsigned long long)t->mtab.dropped, n, ev);
		free(mp);
	}
	snmp_mac_tab_free(&t->mtab);
	resync_if_due(t);
}

static int mac_send_page(struct target *t);

/* One page: the active columns' varbinds in turn, as take_page. */
static void mac_take_page(struct target *t, const netsnmp_pdu *pdu)
{
	int active[SNMP_MAC_C__N], n = 0;
	for (int c = 0; c < SNMP_MAC_C__N; c++)
		if (!(t->mdone & (1u << c)))
			active[n++] = c;
	unsigned ended = 0;
	int i = 0;
	for (const netsnmp_variable_list *v = pdu->variables; v && n; v = v->next_variable,
	     i = (i + 1) % n) {
		int c = active[i];
		const struct snmp_mac_col_def *d = &snmp_mac_cols[c];
		if (ended & (1u << c))
			continue;
		if (v->type == SNMP_ENDOFMIBVIEW || v->type == SNMP_NOSUCHOBJECT ||
		    v->type == SNMP_NOSUCHINSTANCE || v->name_length > MAX_OID_LEN ||
		    netsnmp_oid_is_subtree(d->oid, d->len, v->name, v->name_length) != 0 ||
		    snmp_oid_compare(v->name, v->name_length, t->mnext[c], t->mnext_len[c]) <= 0) {
			ended |= 1u << c;
			continue;
		}
		memcpy(t->mnext[c], v->name, v->name_length * sizeof(oid));
		t->mnext_len[c] = v->name_length;
		if (snmp_mac_take(&t->mtab, v) < 0)
			ended |= 1u << c; /* out of memory: this column stops here */
	}
	t->mdone |= ended;
}

static int on_mac_response(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu,
			   void *magic)
{
	(void)sess;
	(void)reqid;
	struct target *t = magic;
	if (t->p->stopping || !t->mac_busy)
		return 1;
	const char *why = response_error(op, pdu);
	if (why) {
		mac_walk_done(t, why);
		return 1;
	}
	unsigned before = t->mdone;
	mac_take_page(t, pdu);
	unsigned all = (1u << SNMP_MAC_C__N) - 1;
	if (t->mdone == all || (t->mdone == before && !pdu->variables))
		mac_walk_done(t, NULL);
	else if (++t->pages >= MAX_PAGES)
		mac_walk_done(t, NULL); /* what it has: a table that never ends is broken */
	else if (mac_send_page(t) != 0)
		mac_walk_done(t, "cannot send");
	return 1;
}

static int mac_send_page(struct target *t)
{
	return send_bulk(t, t->mnext, t->mnext_len, SNMP_MAC_C__N, t->mdone, 0, on_mac_response);
}

/* The switch stays busy (no IF-MIB round starts) until the walk is done. */
static void start_mac_walk(struct target *t)
{
	t->busy = 1;
	t->mac_busy = 1;
	t->pages = 0;
	t->mdone = 0;
	snmp_mac_tab_free(&t->mtab);
	for (int c = 0; c < SNMP_MAC_C__N; c++) {
		memcpy(t->mnext[c], snmp_mac_cols[c].oid, snmp_mac_cols[c].len * sizeof(oid));
		t->mnext_len[c] = snmp_mac_cols[c].len;
	}
	if (mac_send_page(t) != 0)
		mac_walk_done(t, "cannot send");
}

void snmp_poll_resync(struct snmp_poll *p)
{
	for (size_t i = 0; p && i < p->n; i++)
		p->t[i].resync = 1;
}

/* One varbind of column c: 0 taken, 1 the column ended. */
static int take(struct target *t, int c, const netsnmp_variable_list *v)
{
	if (v->type == SNMP_ENDOFMIBVIEW || v->type == SNMP_NOSUCHOBJECT ||
	    v->type == SNMP_NOSUCHINSTANCE || v->name_length != col_len[c] + 1 ||
	    netsnmp_oid_is_subtree(col_oid[c], col_len[c], v->name, v->name_length) != 0 ||
	    snmp_oid_compare(v->name, v->name_length, t->next[c], t->next_len[c]) <= 0)
		return 1;
	memcpy(t->next[c], v->name, v->name_length * sizeof(oid));
	t->next_len[c] = v->name_length;
	oid idx = v->name[col_len[c]];
	if (idx == 0 || idx > INT32_MAX)
		return 0;
	struct snmp_ifc_row *r = row_of(t, (uint32_t)idx);
	if (!r)
		return 0;
	if (c == C_NAME) {
		if (v->type == ASN_OCTET_STR && v->val.string) {
			size_t n = v->val_len < sizeof(r->name) - 1 ? v->val_len : sizeof(r->name) - 1;
			for (size_t i = 0; i < n; i++)
				r->name[i] = v->val.string[i] >= 0x20 && v->val.string[i] < 0x7f
						     ? (char)v->val.string[i] : '?';
			r->name[n] = '\0';
			r->have |= SNMP_IFC_HAVE_NAME;
		}
	} else if (c == C_HC_IN || c == C_HC_OUT) {
		if (v->type == ASN_COUNTER64 && v->val.counter64) {
			uint64_t x = ((uint64_t)v->val.counter64->high << 32) | v->val.counter64->low;
			if (c == C_HC_IN) {
				r->hc_in = x;
				r->have |= SNMP_IFC_HAVE_HC_IN;
			} else {
				r->hc_out = x;
				r->have |= SNMP_IFC_HAVE_HC_OUT;
			}
		}
	} else if (v->val.integer && (v->type == ASN_INTEGER || v->type == ASN_COUNTER)) {
		long x = *v->val.integer;
		if (c == C_ADMIN) {
			r->admin = (int)x;
			r->have |= SNMP_IFC_HAVE_ADMIN;
		} else if (c == C_OPER) {
			r->oper = (int)x;
			r->have |= SNMP_IFC_HAVE_OPER;
		} else {
			r->ctr[col_ctr[c]] = (uint32_t)x;
			r->have |= SNMP_IFC_HAVE_CTR0 << col_ctr[c];
		}
	}
	return 0;
}

static void take_scalars(struct target *t, const netsnmp_variable_list **v)
{
	for (int i = 0; i < 2 && *v; i++, *v = (*v)->next_variable) {
		const netsnmp_variable_list *x = *v;
		if (x->type != ASN_TIMETICKS || !x->val.integer)
			continue;
		if (x->name_length == 9 && netsnmp_oid_is_subtree(sys_uptime, 8, x->name, 9) == 0) {
			t->round.uptime_cs = (uint32_t)*x->val.integer;
			t->round.have_uptime = 1;
		} else if (x->name_length == 10 &&
			   netsnmp_oid_is_subtree(if_table_last_change, 9, x->name, 10) == 0) {
			t->round.last_change = (uint32_t)*x->val.integer;
			t->round.have_last_change = 1;
		}
	}
}

static void take_page(struct target *t, const netsnmp_pdu *pdu)
{
	const netsnmp_variable_list *v = pdu->variables;
	int active[C__N], n = 0;
	for (int c = 0; c < C__N; c++)
		if (!(t->done & (1u << c)))
			active[n++] = c;
	if (t->first)
		take_scalars(t, &v);
	t->first = 0;
	unsigned ended = 0;
	for (int i = 0; v && n; v = v->next_variable, i = (i + 1) % n)
		if (!(ended & (1u << active[i])) && take(t, active[i], v))
			ended |= 1u << active[i];
	/* A column that answered nothing new this page has ended too. */
	t->done |= ended;
}

static int on_response(int op, netsnmp_session *sess, int reqid, netsnmp_pdu *pdu, void *magic)
{
	(void)sess;
	(void)reqid;
	struct target *t = magic;
	if (t->p->stopping || !t->busy)
		return 1;
	const char *why = response_error(op, pdu);
	if (why) {
		round_failed(t, why);
		return 1;
	}
	unsigned before = t->done;
	take_page(t, pdu);
	if (t->done == before && !pdu->variables) {
		round_failed(t, "empty response");
		return 1;
	}
	unsigned all = (1u << C__N) - 1;
	if (t->done == all || ++t->pages >= MAX_PAGES)
		round_done(t);
	else if (send_page(t) != 0)
		round_failed(t, "cannot send");
	return 1;
}

static int send_page(struct target *t)
{
	return send_bulk(t, t->next, t->next_len, C__N, t->done, t->first, on_response);
}

static void start_round(struct target *t)
{
	t->busy = 1;
	t->first = 1;
	t->pages = 0;
	t->n_rows = 0;
	t->names = snmp_ifc_need_names(&t->sw);
	t->done = t->names ? 0 : 1u << C_NAME;
	memset(&t->round, 0, sizeof(t->round));
	for (int c = 0; c < C__N; c++) {
		memcpy(t->next[c], col_oid[c], col_len[c] * sizeof(oid));
		t->next_len[c] = col_len[c];
	}
	if (send_page(t) != 0)
		round_failed(t, "cannot send");
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct snmp_poll *p = arg;
	for (size_t i = 0; i < p->n; i++)
		if (!p->t[i].busy)
			start_round(&p->t[i]);
}

static void on_timeouts(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct snmp_poll *p = arg;
	for (size_t i = 0; i < p->n; i++)
		if (p->t[i].busy)
			snmp_sess_timeout(p->t[i].sessp);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	struct target *t = arg;
	for (int i = 0; i < 64; i++) {
		errno = 0;
		NETSNMP_LARGE_FD_SET(t->fd, &t->fds); /* net-snmp clears it after a read */
		if (snmp_sess_read2(t->sessp, &t->fds) < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
	}
}

/* "0x8000..." -> bytes; the length, or 0. */
static size_t engine_bytes(const char *hex, u_char *out, size_t max)
{
	size_t n = 0;
	for (const char *h = hex + 2; h[0] && h[1] && n < max; h += 2) {
		unsigned b;
		if (sscanf(h, "%2x", &b) != 1)
			return 0;
		out[n++] = (u_char)b;
	}
	return n;
}

/* SNMPv3 authPriv as User= line u says: its keys from the passphrases, and
 * with its ENGINEID (the switch's) no engine discovery, which would block
 * snmp_sess_open for up to timeout x (retries + 1). */
static int v3_session(netsnmp_session *s, const struct snmp_conf_poll *cp,
		      const struct snmp_conf_user *u, u_char *engine, size_t engine_max, char *err,
		      size_t errsz)
{
	size_t alen = 0, plen = 0;
	oid *ao = sc_get_auth_oid(usm_lookup_auth_type(u->auth), &alen);
	oid *po = sc_get_priv_oid(usm_lookup_priv_type(u->priv), &plen);
	if (!ao || !po)
		return fb_err_set(err, errsz, FB_ECONFIG, "Poll=%s v3 %s: net-snmp has no %s or %s",
				  cp->addr, u->name, u->auth, u->priv);
	s->version = SNMP_VERSION_3;
	s->securityModel = USM_SEC_MODEL_NUMBER;
	s->securityName = (char *)u->name;
	s->securityNameLen = strlen(u->name);
	s->securityLevel = SNMP_SEC_LEVEL_AUTHPRIV;
	s->securityAuthProto = ao;
	s->securityAuthProtoLen = alen;
	s->securityAuthKeyLen = USM_AUTH_KU_LEN;
	s->securityPrivProto = po;
	s->securityPrivProtoLen = plen;
	s->securityPrivKeyLen = USM_PRIV_KU_LEN;
	if (generate_Ku(ao, (u_int)alen, (const u_char *)u->authpass, strlen(u->authpass),
			s->securityAuthKey, &s->securityAuthKeyLen) != SNMPERR_SUCCESS ||
	    generate_Ku(ao, (u_int)alen, (const u_char *)u->privpass, strlen(u->privpass),
			s->securityPrivKey, &s->securityPrivKeyLen) != SNMPERR_SUCCESS)
		return fb_err_set(err, errsz, FB_ECONFIG, "Poll=%s v3 %s: cannot derive its keys",
				  cp->addr, u->name);
	size_t elen = u->engine[0] ? engine_bytes(u->engine, engine, engine_max) : 0;
	if (elen) {
		s->securityEngineID = s->contextEngineID = engine;
		s->securityEngineIDLen = s->contextEngineIDLen = elen;
		s->flags |= SNMP_FLAGS_DONT_PROBE;
	}
	return 0;
}

static int open_target(struct snmp_poll *p, struct event_base *base, struct target *t,
		       const struct snmp_conf_poll *cp, char *err, size_t errsz)
{
	netsnmp_session s;
	u_char engine[32];
	snmp_sess_init(&s);
	s.peername = (char *)cp->peer;
	s.version = SNMP_VERSION_2c;
	s.community = (u_char *)cp->community;
	s.community_len = strlen(cp->community);
	if (cp->user[0]) {
		const struct snmp_conf_user *u = snmp_conf_user(p->cfg.conf, cp->user);
		if (!u)
			return fb_err_set(err, errsz, FB_ECONFIG, "Poll=%s v3 %s: no User=%s line in "
					  "the config", cp->addr, cp->user, cp->user);
		int rc = v3_session(&s, cp, u, engine, sizeof(engine), err, errsz);
		if (rc)
			return rc;
	}
	s.timeout = (long)p->cfg.timeout_ms * 1000;
	s.retries = (int)p->cfg.retries;
	s.callback = on_response;
	s.callback_magic = t;
	t->p = p;
	t->cp = cp;
	t->sessp = snmp_sess_open(&s);
	memset(s.securityAuthKey, 0, sizeof(s.securityAuthKey));
	memset(s.securityPrivKey, 0, sizeof(s.securityPrivKey));
	if (!t->sessp)
		return fb_err_set(err, errsz, -EINVAL, "Poll=%s: cannot open an SNMP session: %s%s",
				  cp->addr, snmp_api_errstring(snmp_errno),
				  cp->user[0] ? " (SNMPv3: without the switch's ENGINEID on its User= "
						"line the agent discovers it at start, so the switch "
						"must answer then)" : "");
	netsnmp_transport *tr = snmp_sess_transport(t->sessp);
	t->fd = tr->sock;
	int fl = fcntl(t->fd, F_GETFL);
	if (fl < 0 || fcntl(t->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return fb_err_set(err, errsz, -errno, "Poll=%s: %s", cp->addr, strerror(errno));
	netsnmp_large_fd_set_init(&t->fds, t->fd + 1);
	NETSNMP_LARGE_FD_SET(t->fd, &t->fds);
	t->rd = event_new(base, t->fd, EV_READ | EV_PERSIST, on_read, t);
	if (!t->rd || event_add(t->rd, NULL))
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	const struct snmp_conf_switch *sw = snmp_conf_switch(p->cfg.conf, cp->addr);
	snprintf(t->sw.addr, sizeof(t->sw.addr), "%s", cp->addr);
	snprintf(t->sw.name, sizeof(t->sw.name), "%s", sw ? sw->name : cp->addr);
	snprintf(t->sw.fabric, sizeof(t->sw.fabric), "%s", p->cfg.fabric ? p->cfg.fabric : "");
	t->sw.link_class = sw && sw->link_class != 0xff ? sw->link_class : p->cfg.conf->link_class;
	t->resync = 1; /* after the first round: what changed while we were away */
	return 0;
}

int snmp_poll_start(struct event_base *base, const struct snmp_poll_cfg *cfg,
		    struct snmp_poll **out, char *err, size_t errsz)
{
	struct snmp_poll *p = calloc(1, sizeof(*p));
	if (!p)
		return fb_err_set(err, errsz, -ENOMEM, "out of memory");
	p->cfg = *cfg;
	p->n = cfg->conf->n_polls;
	p->t = calloc(p->n ? p->n : 1, sizeof(*p->t));
	int rc = p->t ? 0 : fb_err_set(err, errsz, -ENOMEM, "out of memory");
	for (size_t i = 0; rc == 0 && i < p->n; i++)
		rc = open_target(p, base, &p->t[i], &cfg->conf->polls[i], err, errsz);
	struct timeval iv = { cfg->interval_ms / 1000, (cfg->interval_ms % 1000) * 1000 };
	unsigned tms = cfg->timeout_ms / 4 ? cfg->timeout_ms / 4 : 1;
	if (tms > 100)
		tms = 100;
	struct timeval tv = { 0, tms * 1000 };
	if (rc == 0) {
		p->tick = event_new(base, -1, EV_PERSIST, on_tick, p);
		p->timeouts = event_new(base, -1, EV_PERSIST, on_timeouts, p);
		if (!p->tick || !p->timeouts || event_add(p->tick, &iv) || event_add(p->timeouts, &tv))
			rc = fb_err_set(err, errsz, -ENOMEM, "out of memory");
	}
	if (rc) {
		snmp_poll_free(p);
		return rc;
	}
	on_tick(-1, 0, p); /* the first round now: its names and baseline */
	*out = p;
	return 0;
}

uint64_t snmp_poll_peer(void *arg, const char *addr, uint32_t ifindex)
{
	struct snmp_poll *p = arg;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->t[i].sw.addr, addr) == 0)
			return snmp_ifc_peer(&p->t[i].sw, ifindex);
	return 0;
}

const char *snmp_poll_ifname(void *arg, const char *addr, uint32_t ifindex)
{
	struct snmp_poll *p = arg;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->t[i].sw.addr, addr) == 0)
			return snmp_ifc_name(&p->t[i].sw, ifindex);
	return NULL;
}

uint64_t snmp_poll_events(const struct snmp_poll *p)
{
	return p->events;
}

void snmp_poll_stop(struct snmp_poll *p)
{
	if (!p)
		return;
	p->stopping = 1;
	if (p->tick)
		event_del(p->tick);
	if (p->timeouts)
		event_del(p->timeouts);
}

void snmp_poll_free(struct snmp_poll *p)
{
	if (!p)
		return;
	p->stopping = 1;
	for (size_t i = 0; p->t && i < p->n; i++) {
		struct target *t = &p->t[i];
		if (t->rd)
			event_free(t->rd);
		if (t->sessp) {
			snmp_sess_close(t->sessp);
			netsnmp_large_fd_set_cleanup(&t->fds);
		}
		snmp_ifc_switch_free(&t->sw);
		snmp_mac_tab_free(&t->mtab);
		free(t->rows);
	}
	free(p->t);
	if (p->tick)
		event_free(p->tick);
	if (p->timeouts)
		event_free(p->timeouts);
	free(p);
}
