/* node_eth.c - the local Ethernet interfaces, read through rtnetlink. */
#include "node_eth.h"

#include "fb_log.h"

#include <errno.h>
#include <linux/if.h>
#include <linux/if_arp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NL_BUF 32768
#define DUMP_WAIT_MS 2000

/* Linux IF_OPER_* to IF-MIB ifOperStatus (up 1, down 2, testing 3,
 * unknown 4, dormant 5, notPresent 6, lowerLayerDown 7). */
static uint8_t if_mib_oper(unsigned oper)
{
	switch (oper) {
	case IF_OPER_UP: return 1;
	case IF_OPER_DOWN: return 2;
	case IF_OPER_TESTING: return 3;
	case IF_OPER_DORMANT: return 5;
	case IF_OPER_NOTPRESENT: return 6;
	case IF_OPER_LOWERLAYERDOWN: return 7;
	default: return 4;
	}
}

/* One RTM_NEWLINK into p; 0 if it is an Ethernet port to report, else -1.
 * The attributes are walked with the RTA_OK/RTA_NEXT bounds checks. */
static int parse_link(const struct nlmsghdr *nh, struct node_port *p)
{
	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return -1;
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	if (ifi->ifi_type != ARPHRD_ETHER || (ifi->ifi_flags & IFF_LOOPBACK))
		return -1;
	memset(p, 0, sizeof(*p));
	p->tech = FB_TECH_ETH;
	p->ifindex = (uint32_t)ifi->ifi_index;
	unsigned oper = IF_OPER_UNKNOWN;
	int have_mac = 0;
	int len = (int)(nh->nlmsg_len - NLMSG_LENGTH(sizeof(*ifi)));
	for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t plen = RTA_PAYLOAD(a);
		const unsigned char *d = RTA_DATA(a);
		if (a->rta_type == IFLA_IFNAME && plen > 0) {
			size_t l = strnlen((const char *)d, plen);
			if (l >= sizeof(p->device))
				l = sizeof(p->device) - 1;
			memcpy(p->device, d, l);
			p->device[l] = '\0';
		} else if (a->rta_type == IFLA_ADDRESS && plen == 6) {
			snprintf(p->mac, sizeof(p->mac), "%02x:%02x:%02x:%02x:%02x:%02x", d[0], d[1], d[2],
				 d[3], d[4], d[5]);
			have_mac = 1;
		} else if (a->rta_type == IFLA_OPERSTATE && plen >= 1) {
			oper = d[0];
		}
	}
	if (!have_mac || !p->device[0])
		return -1;
	p->port_state = if_mib_oper(oper);
	/* Drivers without operstate support (dummy, some virtual) say UNKNOWN;
	 * then the carrier flag decides. */
	p->up = oper == IF_OPER_UP ||
		(oper == IF_OPER_UNKNOWN && (ifi->ifi_flags & IFF_UP) && (ifi->ifi_flags & IFF_LOWER_UP));
	return 0;
}

static int send_dump(int fd)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
	} req = { 0 };
	req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifi));
	req.nh.nlmsg_type = RTM_GETLINK;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.ifi.ifi_family = AF_UNSPEC;
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

/* Read dump answers until NLMSG_DONE. */
static int read_dump(int fd, struct node_port *out, size_t max, size_t *n)
{
	static char buf[NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int pr = poll(&pfd, 1, DUMP_WAIT_MS);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return pr < 0 ? -errno : -ETIMEDOUT;
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* unsigned: NLMSG_OK compares it with the u32 nlmsg_len */
		unsigned int len = (unsigned int)got;
		for (const struct nlmsghdr *nh = (const struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len)) {
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);
				return nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ? e->error : -EIO;
			}
			if (nh->nlmsg_type != RTM_NEWLINK)
				continue;
			if (*n == max) {
				fb_log_warn("more than %zu Ethernet interfaces: the rest are not reported", max);
				continue;
			}
			if (parse_link(nh, &out[*n]) == 0)
				(*n)++;
		}
	}
}

int node_eth_scan(struct node_port *out, size_t max, size_t *n)
{
	*n = 0;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	int rc = send_dump(fd);
	if (rc == 0)
		rc = read_dump(fd, out, max, n);
	close(fd);
	return rc;
}

int node_eth_monitor_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int node_eth_monitor_drain(int fd)
{
	static char buf[NL_BUF];
	int any = 0;
	for (;;) {
		ssize_t got = recv(fd, buf, sizeof(buf), 0);
		if (got > 0) {
			any = 1;
			continue;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return any;
		if (got < 0 && errno == ENOBUFS)
			return 1; /* overrun: rescan covers it */
		return got < 0 ? -errno : any;
	}
}
