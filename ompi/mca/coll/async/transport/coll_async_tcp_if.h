/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: which IPv4 interfaces the TCP transport listens on.
 *
 * Lists the machine's interfaces that are up (getifaddrs) and filters them with an
 * include or an exclude list in the form of Open MPI's btl_tcp_if_include /
 * btl_tcp_if_exclude: comma-separated interface names ("eth0") or CIDR subnets
 * ("10.0.0.0/8"; a bare address means /32). The two lists are mutually exclusive.
 * Loopback interfaces are dropped unless an include list names them or nothing
 * else is left. Tests present made-up interfaces by filling the array themselves.
 *
 * Pure C with no Open MPI dependency.
 */

#ifndef MCA_COLL_ASYNC_TCP_IF_H
#define MCA_COLL_ASYNC_TCP_IF_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_ASYNC_TCP_MAX_IFS 8      /* listening sockets per process */
#define COLL_ASYNC_TCP_IF_MAX_RULES 16

struct coll_async_tcp_if {
    char name[IF_NAMESIZE];
    struct in_addr addr; /* network byte order */
    uint8_t prefix;      /* netmask length */
    bool loopback;
};

struct coll_async_tcp_if_rule {
    bool subnet;             /* a CIDR subnet, else an interface name */
    char name[IF_NAMESIZE];
    uint32_t net, mask;      /* host byte order */
};

struct coll_async_tcp_if_filter {
    bool include; /* keep what the rules match; else drop it */
    int count;    /* 0 with include false: no list given */
    struct coll_async_tcp_if_rule rules[COLL_ASYNC_TCP_IF_MAX_RULES];
};

/*
 * Parses the two lists (NULL or "" when not given). 0, or -EINVAL with a one-line
 * reason in why.
 */
int coll_async_tcp_if_parse(const char *include, const char *exclude,
                            struct coll_async_tcp_if_filter *filter, char *why, size_t why_len);

/* Fills ifs with the up IPv4 interfaces, at most max of them; the count or -errno. */
int coll_async_tcp_if_discover(struct coll_async_tcp_if *ifs, int max);

/* Keeps, in place and in order, the interfaces the filter selects; returns how many. */
int coll_async_tcp_if_apply(const struct coll_async_tcp_if_filter *filter,
                            struct coll_async_tcp_if *ifs, int count);

#endif /* MCA_COLL_ASYNC_TCP_IF_H */
