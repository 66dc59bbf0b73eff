/* snmp_mac.c - MAC -> switch port from LLDP, FDB and ARP tables (see
 * snmp_mac.h). */
#include "snmp_mac.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numeric OIDs (Debian ships no MIB files). */
const struct snmp_mac_col_def snmp_mac_cols[SNMP_MAC_C__N] = {
	[SNMP_MAC_C_BASEPORT] = { { 1, 3, 6, 1, 2, 1, 17, 1, 4, 1, 2 }, 11 },
	[SNMP_MAC_C_FDB] = { { 1, 3, 6, 1, 2, 1, 17, 4, 3, 1, 2 }, 11 },
	[SNMP_MAC_C_QFDB] = { { 1, 3, 6, 1, 2, 1, 17, 7, 1, 2, 2, 1, 2 }, 13 },
	[SNMP_MAC_C_LLDP_CSUB] = { { 1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 4 }, 11 },
	[SNMP_MAC_C_LLDP_CID] = { { 1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 5 }, 11 },
	[SNMP_MAC_C_LLDP_PSUB] = { { 1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 6 }, 11 },
	[SNMP_MAC_C_LLDP_PID] = { { 1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 7 }, 11 },
	[SNMP_MAC_C_ARP] = { { 1, 3, 6, 1, 2, 1, 4, 35, 1, 4 }, 10 },
	[SNMP_MAC_C_ARP_OLD] = { { 1, 3, 6, 1, 2, 1, 4, 22, 1, 2 }, 10 },
};

#define LLDP_PORTID_MAC 3    /* LldpPortIdSubtype macAddress(3) */
#define LLDP_CHASSISID_MAC 4 /* LldpChassisIdSubtype macAddress(4) */

int snmp_mac_col_of(const oid *name, size_t len)
{
	for (int c = 0; c < SNMP_MAC_C__N; c++) {
		const struct snmp_mac_col_def *d = &snmp_mac_cols[c];
		if (len <= d->len || memcmp(name, d->oid, d->len * sizeof(oid)) != 0)
			continue;
		return c;
	}
	return -1;
}

/* 48 bits of a unicast MAC, or 0 (multicast, broadcast and zero are no host). */
static uint64_t unicast(uint64_t m)
{
	return (m >> 40) & 1 ? 0 : m;
}

static uint64_t mac_of_str(const netsnmp_variable_list *v)
{
	if (v->type != ASN_OCTET_STR || v->val_len != 6 || !v->val.string)
		return 0;
	uint64_t m = 0;
	for (int i = 0; i < 6; i++)
		m = m << 8 | v->val.string[i];
	return unicast(m);
}

static uint64_t mac_of_index(const oid *idx)
{
	uint64_t m = 0;
	for (int i = 0; i < 6; i++) {
		if (idx[i] > 255)
			return 0;
		m = m << 8 | idx[i];
	}
	return unicast(m);
}

static int int_of(const netsnmp_variable_list *v, long *x)
{
	if (v->type != ASN_INTEGER || !v->val.integer)
		return -1;
	*x = *v->val.integer;
	return 0;
}

/* A new zeroed element at the end of a table, or NULL: the table is full
 * (counted in *dropped, *rc 0) or out of memory (*rc -ENOMEM). */
static void *slot(void **arr, size_t *n, size_t *cap, size_t elem, uint64_t *dropped, int *rc)
{
	*rc = 0;
	if (*n >= SNMP_MAC_ROWS_MAX) {
		(*dropped)++;
		return NULL;
	}
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		void *p = realloc(*arr, nc * elem);
		if (!p) {
			*rc = -ENOMEM;
			return NULL;
		}
		*arr = p;
		*cap = nc;
	}
	char *e = (char *)*arr + (*n)++ * elem;
	memset(e, 0, elem);
	return e;
}

#define SLOT(t, f, rc) slot((void **)&(t)->f, &(t)->n_##f, &(t)->cap_##f, sizeof(*(t)->f), \
			    &(t)->dropped, rc)

static int add_base(struct snmp_mac_tab *t, uint32_t port, uint32_t ifindex)
{
	int rc;
	__typeof__(t->base) e = SLOT(t, base, &rc);
	if (e)
		*e = (__typeof__(*e)){ port, ifindex };
	return rc;
}

static int add_fdb(struct snmp_mac_tab *t, uint64_t mac, uint32_t port)
{
	int rc;
	__typeof__(t->fdb) e = SLOT(t, fdb, &rc);
	if (e)
		*e = (__typeof__(*e)){ mac, port };
	return rc;
}

static int add_arp(struct snmp_mac_tab *t, uint32_t ifindex, uint64_t mac)
{
	int rc;
	__typeof__(t->arp) e = SLOT(t, arp, &rc);
	if (e)
		*e = (__typeof__(*e)){ ifindex, mac };
	return rc;
}

/* The lldpRemTable row (local port, remote index); the columns come in
 * index order, so it is nearly always the last one or a recent one. NULL:
 * full or out of memory (*rc says which). */
static struct snmp_mac_lldp *lldp_row(struct snmp_mac_tab *t, uint32_t port, uint32_t rem, int *rc)
{
	for (size_t i = t->n_lldp; i-- > 0;)
		if (t->lldp[i].local_port == port && t->lldp[i].rem_index == rem)
			return &t->lldp[i];
	struct snmp_mac_lldp *r = SLOT(t, lldp, rc);
	if (!r)
		return NULL;
	r->local_port = port;
	r->rem_index = rem;
	return r;
}

static int take_lldp(struct snmp_mac_tab *t, int c, const oid *idx, size_t n,
		     const netsnmp_variable_list *v)
{
	/* index: lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex */
	if (n != 3 || idx[1] == 0 || idx[1] > UINT32_MAX || idx[2] > UINT32_MAX)
		return 1;
	long x = 0;
	uint64_t mac = 0;
	if (c == SNMP_MAC_C_LLDP_CSUB || c == SNMP_MAC_C_LLDP_PSUB) {
		if (int_of(v, &x))
			return 1;
	} else if (v->type != ASN_OCTET_STR) {
		return 1;
	} else {
		mac = mac_of_str(v);
	}
	int rc = 0;
	struct snmp_mac_lldp *r = lldp_row(t, (uint32_t)idx[1], (uint32_t)idx[2], &rc);
	if (!r)
		return rc;
	switch (c) {
	case SNMP_MAC_C_LLDP_CSUB: r->csub = (int)x; break;
	case SNMP_MAC_C_LLDP_PSUB: r->psub = (int)x; break;
	case SNMP_MAC_C_LLDP_CID: r->cmac = mac; break;
	default: r->pmac = mac; break;
	}
	return 0;
}

int snmp_mac_take(struct snmp_mac_tab *t, const netsnmp_variable_list *v)
{
	int c = v && v->name ? snmp_mac_col_of(v->name, v->name_length) : -1;
	if (c < 0) {
		t->ignored++;
		return 1;
	}
	size_t skip = snmp_mac_cols[c].len;
	const oid *idx = v->name + skip;
	size_t n = v->name_length - skip;
	long x = 0;
	int rc = 1;
	switch (c) {
	case SNMP_MAC_C_BASEPORT:
		if (n == 1 && idx[0] && idx[0] <= UINT32_MAX && !int_of(v, &x) && x > 0 &&
		    x <= INT32_MAX)
			rc = add_base(t, (uint32_t)idx[0], (uint32_t)x);
		break;
	case SNMP_MAC_C_FDB:
	case SNMP_MAC_C_QFDB: {
		const oid *m = c == SNMP_MAC_C_QFDB ? idx + 1 : idx;
		uint64_t mac = n == (c == SNMP_MAC_C_QFDB ? 7u : 6u) ? mac_of_index(m) : 0;
		if (mac && !int_of(v, &x) && x > 0 && x <= INT32_MAX)
			rc = add_fdb(t, mac, (uint32_t)x);
		break;
	}
	case SNMP_MAC_C_ARP:
	case SNMP_MAC_C_ARP_OLD: {
		/* ipNetToPhysical: ifIndex, type, length, address bytes;
		 * ipNetToMedia: ifIndex, four address bytes. */
		int ok = c == SNMP_MAC_C_ARP ? n >= 3 && idx[2] == n - 3 : n == 5;
		uint64_t mac = mac_of_str(v);
		if (ok && mac && idx[0] && idx[0] <= INT32_MAX)
			rc = add_arp(t, (uint32_t)idx[0], mac);
		break;
	}
	default:
		rc = take_lldp(t, c, idx, n, v);
	}
	if (rc == 0)
		t->taken++;
	else if (rc > 0)
		t->ignored++;
	return rc;
}

/* The ifIndex of a bridge port, or 0. */
static uint32_t base_ifindex(const struct snmp_mac_tab *t, uint32_t port)
{
	for (size_t i = 0; i < t->n_base; i++)
		if (t->base[i].port == port)
			return t->base[i].ifindex;
	return 0;
}

struct seen {
	uint32_t ifindex;
	uint8_t src;
	uint64_t mac;
};

/* By ifIndex, best source first, then MAC. */
static int cmp_seen(const void *pa, const void *pb)
{
	const struct seen *a = pa, *b = pb;
	if (a->ifindex != b->ifindex)
		return a->ifindex < b->ifindex ? -1 : 1;
	if (a->src != b->src)
		return a->src > b->src ? -1 : 1;
	return (a->mac > b->mac) - (a->mac < b->mac);
}

int snmp_mac_resolve(const struct snmp_mac_tab *t, struct snmp_mac_port **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	size_t total = t->n_lldp + t->n_fdb + t->n_arp, k = 0;
	if (!total)
		return 0;
	struct seen *s = malloc(total * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_lldp; i++) {
		const struct snmp_mac_lldp *r = &t->lldp[i];
		uint64_t mac = r->psub == LLDP_PORTID_MAC && r->pmac ? r->pmac
			       : r->csub == LLDP_CHASSISID_MAC ? r->cmac : 0;
		uint32_t ifx = base_ifindex(t, r->local_port);
		if (mac)
			s[k++] = (struct seen){ ifx ? ifx : r->local_port, SNMP_MAC_LLDP, mac };
	}
	for (size_t i = 0; i < t->n_fdb; i++) {
		uint32_t ifx = base_ifindex(t, t->fdb[i].port);
		if (ifx)
			s[k++] = (struct seen){ ifx, SNMP_MAC_FDB, t->fdb[i].mac };
	}
	for (size_t i = 0; i < t->n_arp; i++)
		s[k++] = (struct seen){ t->arp[i].ifindex, SNMP_MAC_ARP, t->arp[i].mac };
	qsort(s, k, sizeof(*s), cmp_seen);
	struct snmp_mac_port *p = calloc(k ? k : 1, sizeof(*p));
	if (!p) {
		free(s);
		return -ENOMEM;
	}
	size_t np = 0;
	for (size_t i = 0; i < k;) {
		/* s[i] is the port's best source: count its distinct MACs. */
		size_t j = i + 1;
		uint32_t distinct = 1;
		for (; j < k && s[j].ifindex == s[i].ifindex && s[j].src == s[i].src; j++)
			distinct += s[j].mac != s[j - 1].mac;
		p[np++] = (struct snmp_mac_port){ s[i].ifindex, distinct == 1 ? s[i].mac : 0, s[i].src,
						  distinct };
		while (j < k && s[j].ifindex == s[i].ifindex)
			j++; /* worse sources of the same port */
		i = j;
	}
	free(s);
	*out = p;
	*n = np;
	return 0;
}

void snmp_mac_tab_free(struct snmp_mac_tab *t)
{
	free(t->base);
	free(t->fdb);
	free(t->arp);
	free(t->lldp);
	memset(t, 0, sizeof(*t));
}

void snmp_mac_format(uint64_t m, char out[SNMP_MAC_STR])
{
	snprintf(out, SNMP_MAC_STR, "%02x:%02x:%02x:%02x:%02x:%02x", (unsigned)(m >> 40) & 0xff,
		 (unsigned)(m >> 32) & 0xff, (unsigned)(m >> 24) & 0xff, (unsigned)(m >> 16) & 0xff,
		 (unsigned)(m >> 8) & 0xff, (unsigned)m & 0xff);
}

const char *snmp_mac_src_name(unsigned src)
{
	switch (src) {
	case SNMP_MAC_LLDP: return "lldp";
	case SNMP_MAC_FDB: return "fdb";
	case SNMP_MAC_ARP: return "arp";
	default: return "none";
	}
}
