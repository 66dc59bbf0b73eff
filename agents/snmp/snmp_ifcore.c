/* snmp_ifcore.c - what an IF-MIB poll round means: the poller's pure logic. */
#include "snmp_ifcore.h"

#include "fb_log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const uint16_t ctr_id[SNMP_IFC__N] = {
	[SNMP_IFC_IN_ERR] = FB_CTR_IF_IN_ERRORS,
	[SNMP_IFC_OUT_ERR] = FB_CTR_IF_OUT_ERRORS,
	[SNMP_IFC_IN_DISC] = FB_CTR_IF_IN_DISCARDS,
	[SNMP_IFC_OUT_DISC] = FB_CTR_IF_OUT_DISCARDS,
};

void snmp_ifc_cfg_default(struct snmp_ifc_cfg *cfg)
{
	cfg->rate[SNMP_IFC_IN_ERR] = 10;
	cfg->rate[SNMP_IFC_OUT_ERR] = 10;
	cfg->rate[SNMP_IFC_IN_DISC] = 100;
	cfg->rate[SNMP_IFC_OUT_DISC] = 100;
	cfg->unreachable_after = 3;
}

static const char *ctr_name(unsigned i)
{
	return fb_counter_name(ctr_id[i]);
}

int snmp_ifc_parse_threshold(struct snmp_ifc_cfg *cfg, const char *spec)
{
	return fb_threshold_parse(spec, ctr_name, SNMP_IFC__N, cfg->rate);
}

uint32_t snmp_ifc_delta32(uint32_t prev, uint32_t now)
{
	return now - prev; /* Counter32 arithmetic is modulo 2^32 (RFC 2578 7.1.6) */
}

int snmp_ifc_need_names(const struct snmp_ifc_switch *sw)
{
	return !sw->have_round || sw->names_stale;
}

static struct snmp_ifc_port *find(const struct snmp_ifc_switch *sw, uint32_t ifindex)
{
	size_t lo = 0, hi = sw->n_ports;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sw->ports[mid].ifindex == ifindex)
			return &sw->ports[mid];
		if (sw->ports[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static struct snmp_ifc_port *get(struct snmp_ifc_switch *sw, uint32_t ifindex)
{
	struct snmp_ifc_port *p = find(sw, ifindex);
	if (p)
		return p;
	p = realloc(sw->ports, (sw->n_ports + 1) * sizeof(*p));
	if (!p)
		return NULL;
	sw->ports = p;
	size_t at = 0;
	while (at < sw->n_ports && sw->ports[at].ifindex < ifindex)
		at++;
	memmove(&sw->ports[at + 1], &sw->ports[at], (sw->n_ports - at) * sizeof(*p));
	sw->n_ports++;
	memset(&sw->ports[at], 0, sizeof(*p));
	sw->ports[at].ifindex = ifindex;
	return &sw->ports[at];
}

const char *snmp_ifc_name(const struct snmp_ifc_switch *sw, uint32_t ifindex)
{
	const struct snmp_ifc_port *p = find(sw, ifindex);
	return p && p->name[0] ? p->name : NULL;
}

static void fill(struct fb_event *ev, const struct snmp_ifc_switch *sw,
		 const struct snmp_ifc_port *p, uint8_t kind, uint8_t sev)
{
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = fb_now_ns();
	ev->kind = kind;
	ev->severity = sev;
	ev->tech = FB_TECH_ETH;
	ev->link_class = p ? sw->link_class : FB_LINK_UNKNOWN;
	(void)fb_strlcpy_field(ev->subj.fabric, sizeof(ev->subj.fabric), sw->fabric);
	(void)fb_strlcpy_field(ev->subj.switch_name, sizeof(ev->subj.switch_name), sw->name);
	(void)fb_strlcpy_field(ev->subj.addr, sizeof(ev->subj.addr), sw->addr);
	if (p) {
		ev->subj.ifindex = p->ifindex;
		(void)fb_strlcpy_field(ev->subj.device, sizeof(ev->subj.device), p->name);
		ev->port_state = p->oper > 0 && p->oper < 256 ? (uint8_t)p->oper : 0;
		snmp_ifc_put_peer(ev, p->peer_mac);
	}
}

void snmp_ifc_put_peer(struct fb_event *ev, uint64_t mac)
{
	if (!mac)
		return;
	char s[SNMP_MAC_STR];
	snmp_mac_format(mac, s);
	ev->subj.peer_guid = mac;
	(void)fb_strlcpy_field(ev->subj.peer_name, sizeof(ev->subj.peer_name), s);
}

uint64_t snmp_ifc_peer(const struct snmp_ifc_switch *sw, uint32_t ifindex)
{
	const struct snmp_ifc_port *p = find(sw, ifindex);
	return p ? p->peer_mac : 0;
}

static void peer_event(const struct snmp_ifc_switch *sw, const struct snmp_ifc_port *p,
		       const char *why, snmp_ifc_emit_fn emit, void *arg)
{
	struct fb_event ev;
	char mac[SNMP_MAC_STR];
	fill(&ev, sw, p, FB_KIND_TOPOLOGY, FB_SEV_OK);
	snmp_mac_format(p->peer_mac, mac);
	/* 5 + 17 + 8 + 63 + 2 + 4 + 1 + 17 bytes at most: fits the 127 */
	snprintf(ev.text, sizeof(ev.text), "mac: %s behind %.63s (%.4s)%.17s", mac,
		 p->name[0] ? p->name : "?", snmp_mac_src_name(p->peer_src), why);
	fb_log_info("topology: switch '%s' (%s) ifIndex %u: %s", sw->name, sw->addr, p->ifindex,
		    ev.text);
	emit(arg, &ev);
}

size_t snmp_ifc_set_peers(struct snmp_ifc_switch *sw, const struct snmp_mac_port *mp, size_t n,
			  snmp_ifc_emit_fn emit, void *arg)
{
	size_t out = 0;
	for (size_t i = 0; i < n; i++) {
		struct snmp_ifc_port *p = find(sw, mp[i].ifindex);
		if (!p || !mp[i].mac) {
			if (p && mp[i].n_macs > 1)
				fb_log_debug("switch '%s' ifIndex %u: %u MACs (%s): not a host port",
					     sw->name, mp[i].ifindex, mp[i].n_macs,
					     snmp_mac_src_name(mp[i].src));
			continue;
		}
		if (p->peer_mac == mp[i].mac) {
			p->peer_src = mp[i].src;
			continue;
		}
		/* a moved cable: the host's old port no longer has it */
		for (size_t k = 0; k < sw->n_ports; k++)
			if (sw->ports[k].peer_mac == mp[i].mac)
				sw->ports[k].peer_mac = 0;
		p->peer_mac = mp[i].mac;
		p->peer_src = mp[i].src;
		if (emit) {
			peer_event(sw, p, "", emit, arg);
			out++;
		}
	}
	return out;
}

size_t snmp_ifc_send_peers(const struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit, void *arg)
{
	size_t n = 0;
	for (size_t i = 0; i < sw->n_ports; i++)
		if (sw->ports[i].peer_mac) {
			peer_event(sw, &sw->ports[i], "", emit, arg);
			n++;
		}
	return n;
}

static void oper_changed(struct snmp_ifc_switch *sw, struct snmp_ifc_port *p, int was,
			 snmp_ifc_emit_fn emit, void *arg)
{
	struct fb_event ev;
	const char *port = p->name[0] ? p->name : "?";
	if (p->oper == 1) {
		fill(&ev, sw, p, FB_KIND_LINK_UP, FB_SEV_OK);
		snprintf(ev.text, sizeof(ev.text), "poll: %s ifOperStatus %d -> 1", port, was);
	} else if (was == 1 && p->admin != 2) {
		fill(&ev, sw, p, FB_KIND_LINK_DOWN, FB_SEV_WARNING);
		snprintf(ev.text, sizeof(ev.text), "poll: %s ifOperStatus 1 -> %d", port, p->oper);
	} else {
		fill(&ev, sw, p, FB_KIND_PORT_STATE, FB_SEV_OK);
		snprintf(ev.text, sizeof(ev.text), "poll: %s ifOperStatus %d -> %d%s", port, was,
			 p->oper, p->admin == 2 ? " (administratively down)" : "");
	}
	fb_log_info("%s: switch '%s' (%s) ifIndex %u: %s", fb_kind_name(ev.kind), sw->name, sw->addr,
		    p->ifindex, ev.text);
	emit(arg, &ev);
}

static void threshold(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		      struct snmp_ifc_port *p, unsigned c, uint64_t d, uint64_t ms,
		      snmp_ifc_emit_fn emit, void *arg)
{
	int dir = fb_threshold_update(&p->h[c], d, ms, cfg->rate[c]);
	if (!dir)
		return;
	struct fb_event ev;
	fill(&ev, sw, p, dir > 0 ? FB_KIND_COUNTER_THRESHOLD : FB_KIND_COUNTER_CLEARED,
	     dir > 0 ? FB_SEV_WARNING : FB_SEV_OK);
	fb_threshold_describe(&ev, ctr_id[c], fb_counter_name(ctr_id[c]), dir, d, cfg->rate[c], ms);
	fb_log_info("%s: switch '%s' ifIndex %u: %s", fb_kind_name(ev.kind), sw->name, p->ifindex,
		    ev.text);
	emit(arg, &ev);
}

static void counters(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		     struct snmp_ifc_port *p, const struct snmp_ifc_row *row, uint64_t t_ms,
		     int baseline, snmp_ifc_emit_fn emit, void *arg)
{
	uint64_t ms = t_ms - p->t_ms;
	if (p->have_ctr && !baseline && ms) {
		for (unsigned c = 0; c < SNMP_IFC__N; c++)
			if (row->have & (SNMP_IFC_HAVE_CTR0 << c))
				threshold(sw, cfg, p, c, snmp_ifc_delta32(p->prev[c], row->ctr[c]), ms,
					  emit, arg);
		if ((row->have & SNMP_IFC_HAVE_HC_IN) && (row->have & SNMP_IFC_HAVE_HC_OUT))
			fb_log_debug("switch '%s' ifIndex %u: in %" PRIu64 " out %" PRIu64 " bytes/s",
				     sw->name, p->ifindex, fb_rate_per_s(row->hc_in - p->hc_in, ms),
				     fb_rate_per_s(row->hc_out - p->hc_out, ms));
	}
	memcpy(p->prev, row->ctr, sizeof(p->prev));
	p->hc_in = row->hc_in;
	p->hc_out = row->hc_out;
	p->t_ms = t_ms;
	p->have_ctr = 1;
}

/* sysUpTime below the last one is a restart, unless it is the 497-day
 * wrap of a TimeTicks value near its top. */
static int restarted(const struct snmp_ifc_switch *sw, const struct snmp_ifc_round *r)
{
	if (!sw->have_round || !r->have_uptime || r->uptime_cs >= sw->uptime_cs)
		return 0;
	return !(sw->uptime_cs > 0xF0000000u && r->uptime_cs < 0x10000000u);
}

static void reachable(struct snmp_ifc_switch *sw, snmp_ifc_emit_fn emit, void *arg)
{
	sw->fails = 0;
	if (!sw->unreachable)
		return;
	sw->unreachable = 0;
	struct fb_event ev;
	fill(&ev, sw, NULL, FB_KIND_SWITCH_REACHABLE, FB_SEV_OK);
	snprintf(ev.text, sizeof(ev.text), "SNMP answers again");
	fb_log_info("switch '%s' (%s) answers SNMP again", sw->name, sw->addr);
	emit(arg, &ev);
}

static void resync_port(const struct snmp_ifc_switch *sw, const struct snmp_ifc_port *p, int known,
			snmp_ifc_emit_fn emit, void *arg)
{
	struct fb_event ev;
	const char *port = p->name[0] ? p->name : "?";
	int up = p->oper == 1;
	if (known < 0) {
		fill(&ev, sw, p, FB_KIND_TOPOLOGY, FB_SEV_OK);
		snprintf(ev.text, sizeof(ev.text), "poll: %s ifOperStatus %d (baseline)", port, p->oper);
		emit(arg, &ev);
		return;
	}
	if (known == up)
		return;
	if (up)
		fill(&ev, sw, p, FB_KIND_LINK_UP, FB_SEV_OK);
	else if (p->admin == 2) /* an operator's shutdown, as oper_changed() says it */
		fill(&ev, sw, p, FB_KIND_PORT_STATE, FB_SEV_OK);
	else
		fill(&ev, sw, p, FB_KIND_LINK_DOWN, FB_SEV_WARNING);
	(void)fb_event_add_counter(&ev, FB_CTR_RESYNC, 1); /* the first counter: never full */
	snprintf(ev.text, sizeof(ev.text), "poll: %s ifOperStatus %d, found at resync (was %s)", port,
		 p->oper, up ? "down" : "up");
	fb_log_info("resync: switch '%s' ifIndex %u: %s", sw->name, p->ifindex, ev.text);
	emit(arg, &ev);
}

size_t snmp_ifc_resync(const struct snmp_ifc_switch *sw, const struct snmp_ifc_known *k,
		       snmp_ifc_emit_fn emit, void *arg)
{
	size_t n = 0;
	struct fb_event ev;
	if (k->reachable == 0) {
		fill(&ev, sw, NULL, FB_KIND_SWITCH_REACHABLE, FB_SEV_OK);
		(void)fb_event_add_counter(&ev, FB_CTR_RESYNC, 1);
		snprintf(ev.text, sizeof(ev.text), "SNMP answers, found at resync");
		emit(arg, &ev);
		n++;
	}
	for (size_t i = 0; i < sw->n_ports; i++) {
		const struct snmp_ifc_port *p = &sw->ports[i];
		if (p->oper <= 0 || p->ifindex > 0xffff) /* no state; no port number in the map */
			continue;
		int known = k->port_up(k->arg, p->ifindex);
		if (known < 0 || known != (p->oper == 1)) {
			resync_port(sw, p, known, emit, arg);
			n++;
		}
		/* the baseline topology event above carried the peer already */
		if (known >= 0 && p->peer_mac && k->port_peer &&
		    k->port_peer(k->arg, p->ifindex) != p->peer_mac) {
			peer_event(sw, p, ", found at resync", emit, arg);
			n++;
		}
	}
	return n;
}

int snmp_ifc_update(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		    const struct snmp_ifc_round *r, snmp_ifc_emit_fn emit, void *arg)
{
	int restart = restarted(sw, r);
	if (restart) {
		sw->restarts++;
		sw->names_stale = 1;
		fb_log_info("switch '%s' (%s): sysUpTime went back (%u -> %u cs): its SNMP agent "
			    "restarted; counters start over and ifName is learned again", sw->name,
			    sw->addr, sw->uptime_cs, r->uptime_cs);
	}
	if (sw->have_round && r->have_last_change && r->last_change != sw->last_change)
		sw->names_stale = 1;
	reachable(sw, emit, arg);
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct snmp_ifc_row *row = &r->rows[i];
		struct snmp_ifc_port *p = get(sw, row->ifindex);
		if (!p)
			return -ENOMEM;
		int known = p->oper != 0;
		if (row->have & SNMP_IFC_HAVE_NAME)
			snprintf(p->name, sizeof(p->name), "%s", row->name);
		if (row->have & SNMP_IFC_HAVE_ADMIN)
			p->admin = row->admin;
		if (row->have & SNMP_IFC_HAVE_OPER) {
			int was = p->oper;
			p->oper = row->oper;
			if (known && was != p->oper)
				oper_changed(sw, p, was, emit, arg);
		}
		counters(sw, cfg, p, row, r->t_ms, restart, emit, arg);
	}
	if (r->have_names && !restart)
		sw->names_stale = 0;
	if (r->have_uptime)
		sw->uptime_cs = r->uptime_cs;
	if (r->have_last_change)
		sw->last_change = r->last_change;
	sw->have_round = 1;
	return 0;
}

void snmp_ifc_failed(struct snmp_ifc_switch *sw, const struct snmp_ifc_cfg *cfg,
		     snmp_ifc_emit_fn emit, void *arg)
{
	if (sw->unreachable || ++sw->fails < cfg->unreachable_after)
		return;
	sw->unreachable = 1;
	struct fb_event ev;
	fill(&ev, sw, NULL, FB_KIND_SWITCH_UNREACHABLE, FB_SEV_CRITICAL);
	snprintf(ev.text, sizeof(ev.text), "no SNMP answer to %u polls in a row", sw->fails);
	fb_log_warn("switch '%s' (%s): no SNMP answer to %u polls in a row", sw->name, sw->addr,
		    sw->fails);
	emit(arg, &ev);
}

void snmp_ifc_switch_free(struct snmp_ifc_switch *sw)
{
	free(sw->ports);
	sw->ports = NULL;
	sw->n_ports = 0;
}
