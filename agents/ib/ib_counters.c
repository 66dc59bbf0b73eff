/* ib_counters.c - PerfMgt counters of a switch's ports, as rates and events. */
#include "ib_counters.h"

#include "fb_event.h"
#include "fb_log.h"
#include "ib_discover.h"
#include "ib_poll.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const uint16_t err_ctr_id[IB_ERR__N] = {
	[IB_ERR_SYMBOL] = FB_CTR_SYMBOL_ERROR,
	[IB_ERR_LINK_RECOVERY] = FB_CTR_LINK_ERROR_RECOVERY,
	[IB_ERR_LINK_DOWNED] = FB_CTR_LINK_DOWNED,
	[IB_ERR_RCV] = FB_CTR_RCV_ERRORS,
	[IB_ERR_XMIT_DISCARDS] = FB_CTR_XMIT_DISCARDS,
};

void ib_ctr_cfg_default(struct ib_ctr_cfg *cfg, unsigned interval_ms)
{
	cfg->interval_ms = interval_ms;
	cfg->err_rate[IB_ERR_SYMBOL] = 10;
	cfg->err_rate[IB_ERR_LINK_RECOVERY] = 1;
	cfg->err_rate[IB_ERR_LINK_DOWNED] = 1;
	cfg->err_rate[IB_ERR_RCV] = 10;
	cfg->err_rate[IB_ERR_XMIT_DISCARDS] = 100;
	cfg->congestion_ppm = 100000;
	cfg->tick_ns = 4;
}

const char *ib_ctr_err_name(unsigned err)
{
	return err < IB_ERR__N ? fb_counter_name(err_ctr_id[err]) : NULL;
}

int ib_ctr_parse_threshold(struct ib_ctr_cfg *cfg, const char *spec)
{
	return fb_threshold_parse(spec, ib_ctr_err_name, IB_ERR__N, cfg->err_rate);
}

uint64_t ib_ctr_delta(uint64_t prev, uint64_t now)
{
	return now >= prev ? now - prev : now;
}

uint64_t ib_ctr_congestion_ppm(uint64_t delta_ticks, uint64_t interval_ms, unsigned tick_ns)
{
	if (!interval_ms)
		return 0;
	/* ticks * tick_ns is ns of waiting; the interval has interval_ms * 1e6
	 * ns; ppm = 1e6 * wait / interval = ticks * tick_ns / interval_ms.
	 * A 32-bit delta times a tick of <= 1000 ns cannot overflow. */
	uint64_t ppm = (delta_ticks * tick_ns + interval_ms / 2) / interval_ms;
	return ppm > 1000000 ? 1000000 : ppm;
}

static uint64_t err_value(const struct ib_pma_counters *pc, unsigned err)
{
	switch (err) {
	case IB_ERR_SYMBOL: return pc->symbol_error;
	case IB_ERR_LINK_RECOVERY: return pc->link_error_recovery;
	case IB_ERR_LINK_DOWNED: return pc->link_downed;
	case IB_ERR_RCV: return pc->rcv_errors;
	default: return pc->xmit_discards;
	}
}

static void add(struct fb_event *ev, uint16_t id, uint64_t v)
{
	(void)fb_event_add_counter(ev, id, v); /* at most 4 counters: never full */
}

static void emit_err(struct ib_poll_ctx *c, const struct ib_switch *sw, unsigned port,
		     unsigned err, int dir, uint64_t delta, uint64_t ms)
{
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, dir > 0 ? FB_KIND_COUNTER_THRESHOLD : FB_KIND_COUNTER_CLEARED,
		     dir > 0 ? FB_SEV_WARNING : FB_SEV_OK);
	fb_threshold_describe(&ev, err_ctr_id[err], ib_ctr_err_name(err), dir, delta,
			      c->ctr->err_rate[err], ms);
	fb_log_info("%s: switch '%s' (GUID 0x%016" PRIx64 ") port %u: %s", fb_kind_name(ev.kind),
		    sw->desc, sw->guid, port, ev.text);
	c->emit(c->emit_arg, &ev);
}

static void emit_cong(struct ib_poll_ctx *c, const struct ib_switch *sw, unsigned port, int dir,
		      uint64_t ppm, uint64_t delta, uint64_t ms)
{
	struct fb_event ev;
	ib_poll_fill(&ev, c, sw, port, dir > 0 ? FB_KIND_CONGESTION : FB_KIND_CONGESTION_CLEARED,
		     dir > 0 ? FB_SEV_WARNING : FB_SEV_OK);
	add(&ev, FB_CTR_CONGESTION_PPM, ppm);
	add(&ev, FB_CTR_XMIT_WAIT, delta);
	add(&ev, FB_CTR_INTERVAL_MS, ms);
	add(&ev, FB_CTR_THRESHOLD, c->ctr->congestion_ppm);
	snprintf(ev.text, sizeof(ev.text), "PortXmitWait +%" PRIu64 " ticks of %u ns in %" PRIu64
		 " ms = %" PRIu64 " ppm", delta, c->ctr->tick_ns, ms, ppm);
	fb_log_info("%s: switch '%s' (GUID 0x%016" PRIx64 ") port %u: %s", fb_kind_name(ev.kind),
		    sw->desc, sw->guid, port, ev.text);
	c->emit(c->emit_arg, &ev);
}

/* A new reading of one port: deltas against the previous one, then the
 * thresholds. The first reading is only a baseline. */
static void diff_port(struct ib_poll_ctx *c, const struct ib_switch *sw, unsigned port,
		      struct ib_ctr_port *cp, const struct ib_pma_counters *now, uint64_t t_ms)
{
	struct ib_pma_counters was = cp->prev;
	uint64_t ms = t_ms - cp->t_ms;
	int had = cp->have;
	cp->prev = *now;
	cp->t_ms = t_ms;
	cp->have = 1;
	if (!had || ms == 0)
		return;
	for (unsigned e = 0; e < IB_ERR__N; e++) {
		uint64_t d = ib_ctr_delta(err_value(&was, e), err_value(now, e));
		int dir = fb_threshold_update(&cp->err_h[e], d, ms, c->ctr->err_rate[e]);
		if (dir)
			emit_err(c, sw, port, e, dir, d, ms);
	}
	uint64_t dw = ib_ctr_delta(was.xmit_wait, now->xmit_wait);
	uint64_t ppm = ib_ctr_congestion_ppm(dw, ms, c->ctr->tick_ns);
	int dir = fb_hyst_update(&cp->cong_h, ppm >= c->ctr->congestion_ppm);
	if (dir)
		emit_cong(c, sw, port, dir, ppm, dw, ms);
}

/* The data counters carry no events (yet): kept for rates in the debug log. */
static void diff_ext(const struct ib_switch *sw, unsigned port, struct ib_ctr_port *cp,
		     const struct ib_pma_ext *now, uint64_t ms)
{
	if (cp->have_ext && ms)
		fb_log_debug("switch '%s' port %u: xmit %" PRIu64 " rcv %" PRIu64 " bytes/s", sw->desc,
			     port, fb_rate_per_s(ib_ctr_delta(cp->prev_ext.xmit_data, now->xmit_data) * 4, ms),
			     fb_rate_per_s(ib_ctr_delta(cp->prev_ext.rcv_data, now->rcv_data) * 4, ms));
	cp->prev_ext = *now;
	cp->have_ext = 1;
}

/* The switch's LID, and whether its PMA has PortCountersExtended. 0 when
 * counters can be read. */
static int refresh_lid(struct ib_poll_ctx *c, struct ib_switch *sw)
{
	struct ib_ctr_switch *cs = &sw->ctr;
	uint16_t lid = 0;
	int rc = ib_mad_switch_lid(c->mad, &sw->dr, &lid);
	if (rc)
		return rc;
	if (lid == 0) {
		if (!cs->no_lid_logged)
			fb_log_warn("switch '%s' (GUID 0x%016" PRIx64 ") has no LID (no subnet manager "
				    "yet?): its PortCounters are skipped until it has one", sw->desc,
				    sw->guid);
		cs->no_lid_logged = 1;
		return -ENOENT;
	}
	if (lid != cs->lid) {
		if (cs->lid || cs->no_lid_logged)
			fb_log_info("switch '%s' (GUID 0x%016" PRIx64 ") LID is now %u", sw->desc,
				    sw->guid, lid);
		cs->lid = lid;
		cs->have_capmask = 0;
		cs->no_lid_logged = 0;
	}
	if (!cs->have_capmask && ib_mad_pma_capmask(c->mad, lid, &cs->capmask) == 0) {
		cs->have_capmask = 1;
		fb_log_debug("switch '%s' LID %u PerfMgt CapabilityMask 0x%04x", sw->desc, lid,
			     cs->capmask);
	}
	return 0;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int ib_counters_switch(struct ib_poll_ctx *c, struct ib_switch *sw)
{
	/* A switch that just lost a PortInfo MAD would only cost timeouts. */
	if (sw->unreachable || sw->fails || refresh_lid(c, sw) != 0)
		return 0;
	int ext = sw->ctr.have_capmask &&
		  (sw->ctr.capmask & (IB_PMA_CAP_EXT_WIDTH | IB_PMA_CAP_EXT_WIDTH_NOIETF));
	int answered = 0;
	for (unsigned port = 1; port <= sw->nports; port++) {
		if (c->stop && atomic_load(c->stop))
			break;
		struct ib_ctr_port *cp = &sw->ports[port].ctr;
		struct ib_pma_counters pc;
		if (ib_mad_pma_counters(c->mad, sw->ctr.lid, port, &pc) != 0) {
			/* Keep the old reading: the next delta spans the gap, and the
			 * rate uses the measured time, so nothing is counted twice. */
			fb_log_debug("switch '%s' LID %u port %u: PortCounters lost; rest of the "
				     "switch skipped this round", sw->desc, sw->ctr.lid, port);
			return answered;
		}
		uint64_t t = mono_ms();
		uint64_t ms = t - cp->t_ms;
		answered++;
		diff_port(c, sw, port, cp, &pc, t);
		struct ib_pma_ext pe;
		if (ext && ib_mad_pma_counters_ext(c->mad, sw->ctr.lid, port, &pe) == 0) {
			answered++;
			diff_ext(sw, port, cp, &pe, ms);
		}
	}
	return answered;
}
