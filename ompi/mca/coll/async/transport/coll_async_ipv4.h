/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: IPv4 subnets, as the transports that pair their endpoints by
 * subnet (TCP links, verbs ports) and the interface filters see them.
 */

#ifndef MCA_COLL_ASYNC_IPV4_H
#define MCA_COLL_ASYNC_IPV4_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* The mask of a prefix length (0 to 32), in host byte order. */
static inline uint32_t coll_async_ipv4_mask(unsigned prefix)
{
    return 0 == prefix ? 0 : 0xffffffffu << (32 - prefix);
}

/* The prefix length of an interface's netmask (getifaddrs); 32, a subnet of one
 * address, when it has none. */
static inline uint8_t coll_async_ipv4_prefix(const struct sockaddr *netmask)
{
    uint32_t mask;
    uint8_t prefix = 0;

    if (NULL == netmask || AF_INET != netmask->sa_family) {
        return 32;
    }
    mask = ntohl(((const struct sockaddr_in *) netmask)->sin_addr.s_addr);
    while (mask & 0x80000000u) {
        ++prefix;
        mask <<= 1;
    }
    return prefix;
}

/* Whether a and b are on one subnet, under the shorter of their prefixes. */
static inline bool coll_async_ipv4_same_subnet(struct in_addr a, unsigned a_prefix,
                                               struct in_addr b, unsigned b_prefix)
{
    uint32_t mask = coll_async_ipv4_mask(a_prefix < b_prefix ? a_prefix : b_prefix);

    return 0 == ((ntohl(a.s_addr) ^ ntohl(b.s_addr)) & mask);
}

#endif /* MCA_COLL_ASYNC_IPV4_H */
