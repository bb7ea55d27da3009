/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: interface selection for the TCP transport. See coll_async_tcp_if.h.
 */

#define _GNU_SOURCE

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_async_filter_lists.h"
#include "coll_async_ipv4.h"
#include "coll_async_tcp_if.h"

/* "a.b.c.d" or "a.b.c.d/n", entry being length bytes of a longer string. */
static int parse_subnet(const char *entry, size_t length, struct coll_async_tcp_if_rule *rule)
{
    char text[32], *slash, *end;
    struct in_addr addr;
    long prefix = 32;

    if (length >= sizeof(text)) {
        return -EINVAL;
    }
    memcpy(text, entry, length);
    text[length] = '\0';
    slash = strchr(text, '/');
    if (NULL != slash) {
        *slash = '\0';
        if (!isdigit((unsigned char) slash[1])) {
            return -EINVAL;
        }
        prefix = strtol(slash + 1, &end, 10);
        if ('\0' != *end || prefix > 32) {
            return -EINVAL;
        }
    }
    if (1 != inet_pton(AF_INET, text, &addr)) {
        return -EINVAL;
    }
    rule->subnet = true;
    rule->mask = coll_async_ipv4_mask((unsigned) prefix);
    rule->net = ntohl(addr.s_addr) & rule->mask;
    return 0;
}

static int parse_name(const char *entry, size_t length, struct coll_async_tcp_if_rule *rule)
{
    if (length >= IF_NAMESIZE) {
        return -EINVAL;
    }
    for (size_t i = 0; i < length; ++i) {
        if (!isgraph((unsigned char) entry[i]) || '/' == entry[i]) {
            return -EINVAL;
        }
    }
    rule->subnet = false;
    memcpy(rule->name, entry, length);
    rule->name[length] = '\0';
    return 0;
}

/* An entry that starts with a digit is a subnet: interface names do not. */
static int parse_entry(void *context, int index, const char *entry, size_t length)
{
    struct coll_async_tcp_if_rule *rule = &((struct coll_async_tcp_if_filter *) context)->rules[index];

    return isdigit((unsigned char) entry[0]) ? parse_subnet(entry, length, rule)
                                             : parse_name(entry, length, rule);
}

static const struct coll_async_filter_lists if_lists = {
    .max_entries = COLL_ASYNC_TCP_IF_MAX_RULES,
    .parse_entry = parse_entry,
    .entry_is = "an interface name nor an IPv4 subnet a.b.c.d/n",
};

int coll_async_tcp_if_parse(const char *include, const char *exclude,
                            struct coll_async_tcp_if_filter *filter, char *why, size_t why_len)
{
    memset(filter, 0, sizeof(*filter));
    return coll_async_filter_lists_parse(&if_lists, include, exclude, filter, &filter->include,
                                         &filter->count, why, why_len);
}

int coll_async_tcp_if_discover(struct coll_async_tcp_if *ifs, int max)
{
    struct ifaddrs *all, *ifa;
    int count = 0;

    if (0 != getifaddrs(&all)) {
        return -errno;
    }
    for (ifa = all; NULL != ifa && count < max; ifa = ifa->ifa_next) {
        struct coll_async_tcp_if *one = &ifs[count];

        if (NULL == ifa->ifa_addr || AF_INET != ifa->ifa_addr->sa_family
            || !(ifa->ifa_flags & IFF_UP)) {
            continue;
        }
        memset(one, 0, sizeof(*one));
        snprintf(one->name, sizeof(one->name), "%s", ifa->ifa_name);
        one->addr = ((const struct sockaddr_in *) ifa->ifa_addr)->sin_addr;
        one->prefix = coll_async_ipv4_prefix(ifa->ifa_netmask);
        one->loopback = 0 != (ifa->ifa_flags & IFF_LOOPBACK);
        ++count;
    }
    freeifaddrs(all);
    return count;
}

static bool rule_matches(const struct coll_async_tcp_if_rule *rule,
                         const struct coll_async_tcp_if *one)
{
    if (rule->subnet) {
        return (ntohl(one->addr.s_addr) & rule->mask) == rule->net;
    }
    return 0 == strcmp(rule->name, one->name);
}

static bool filter_matches(const struct coll_async_tcp_if_filter *filter,
                           const struct coll_async_tcp_if *one)
{
    for (int i = 0; i < filter->count; ++i) {
        if (rule_matches(&filter->rules[i], one)) {
            return true;
        }
    }
    return false;
}

/* Compacts ifs to the entries the filter keeps, less loopback ones if drop_loopback. */
static int keep_if(struct coll_async_tcp_if *ifs, int count, bool drop_loopback,
                   const struct coll_async_tcp_if_filter *filter)
{
    int kept = 0;

    for (int i = 0; i < count; ++i) {
        bool keep = filter->include == filter_matches(filter, &ifs[i]);

        if (keep && !(drop_loopback && ifs[i].loopback)) {
            ifs[kept++] = ifs[i];
        }
    }
    return kept;
}

int coll_async_tcp_if_apply(const struct coll_async_tcp_if_filter *filter,
                            struct coll_async_tcp_if *ifs, int count)
{
    bool other = false;

    if (filter->include) {
        return keep_if(ifs, count, false, filter);
    }
    for (int i = 0; i < count; ++i) {
        other = other || (!ifs[i].loopback && !filter_matches(filter, &ifs[i]));
    }
    return keep_if(ifs, count, other, filter);
}
