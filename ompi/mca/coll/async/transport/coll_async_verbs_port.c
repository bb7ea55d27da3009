/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: port discovery for the verbs transport, through the filter of
 * coll_async_port_filter.h. See coll_async_verbs_port.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "coll_async_verbs_port.h"

/* The first line of a sysfs file, without its newline; false when unreadable. */
static bool read_line(const char *path, char *line, size_t size)
{
    FILE *file = fopen(path, "r");
    bool ok;

    if (NULL == file) {
        return false;
    }
    ok = NULL != fgets(line, (int) size, file);
    fclose(file);
    if (ok) {
        line[strcspn(line, "\n")] = '\0';
    }
    return ok && '\0' != line[0];
}

void coll_async_verbs_port_sysfs(const char *root, struct coll_async_verbs_port_info *port)
{
    char path[512], line[64];

    port->numa = -1;
    port->netdev[0] = '\0';
    snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/numa_node", root, port->device);
    if (read_line(path, line, sizeof(line))) {
        long node = strtol(line, NULL, 10);

        port->numa = node >= 0 && node < 4096 ? (int) node : -1;
    }
    /* RoCE ports name the netdev behind each GID; GID 0 is the port's own address. */
    snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%d/gid_attrs/ndevs/0", root,
             port->device, port->port);
    if (read_line(path, line, sizeof(line)) && strlen(line) < sizeof(port->netdev)) {
        strcpy(port->netdev, line);
    }
}

/* Appends the device's active ports that the filter keeps; the new count. */
static int device_ports(struct ibv_device *device, const struct coll_async_port_filter *filter,
                        struct coll_async_verbs_port_info *ports, int count, int max)
{
    struct ibv_context *context = ibv_open_device(device);
    struct ibv_device_attr attr;
    const char *name = ibv_get_device_name(device);

    if (NULL == context) {
        return count;
    }
    if (0 == ibv_query_device(context, &attr)) {
        for (int p = 1; p <= attr.phys_port_cnt && count < max; ++p) {
            struct ibv_port_attr port_attr;
            struct coll_async_verbs_port_info *port = &ports[count];

            if (0 != ibv_query_port(context, (uint8_t) p, &port_attr)
                || IBV_PORT_ACTIVE != port_attr.state
                || strlen(name) >= sizeof(port->device)
                || !coll_async_port_filter_keeps(filter, name, p)) {
                continue;
            }
            memset(port, 0, sizeof(*port));
            strcpy(port->device, name);
            port->port = p;
            coll_async_verbs_port_sysfs("/sys", port);
            ++count;
        }
    }
    ibv_close_device(context);
    return count;
}

int coll_async_verbs_discover(const char *include, const char *exclude,
                              struct coll_async_verbs_port_info *ports, int max, char *why,
                              size_t why_len)
{
    struct coll_async_port_filter filter;
    struct ibv_device **devices;
    int ndevices = 0, count = 0, rc;

    rc = coll_async_port_filter_parse(include, exclude, &filter, why, why_len);
    if (0 != rc) {
        return rc;
    }
    devices = ibv_get_device_list(&ndevices);
    if (NULL == devices) {
        snprintf(why, why_len, "libibverbs lists no device: %s", strerror(errno));
        return 0;
    }
    for (int i = 0; i < ndevices && count < max; ++i) {
        count = device_ports(devices[i], &filter, ports, count, max);
    }
    ibv_free_device_list(devices);
    if (0 == count) {
        snprintf(why, why_len,
                 0 == ndevices ? "no RDMA device"
                               : "no active port on the %d RDMA device(s) that the filter keeps",
                 ndevices);
    }
    return count;
}
