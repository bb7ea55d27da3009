/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of transport/coll_async_verbs_port.c, coll_async_port_filter.c and
 * the verbs transport's paths that need no RDMA device: device:port filters, what sysfs says about a
 * port (read from a made-up tree), discovery on this machine, and create()
 * failing cleanly (no port, bad filters, bad configuration). Runs anywhere;
 * test_verbs runs the transport itself where a port exists.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/transport/coll_async_verbs.h"
#include "../../ompi/mca/coll/async/transport/coll_async_verbs_port.h"

/* Applies include/exclude to a made-up machine; returns the ports kept, "a:1,b:2". */
static const char *select_ports(const char *include, const char *exclude, char *out, size_t size)
{
    static const struct {
        const char *device;
        int port;
    } machine[] = {{"mlx5_0", 1}, {"mlx5_0", 2}, {"mlx5_1", 1}, {"rxe0", 1}};
    struct coll_async_port_filter filter;
    char why[256];

    assert_int_equal(coll_async_port_filter_parse(include, exclude, &filter, why, sizeof(why)),
                     0);
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(machine) / sizeof(machine[0]); ++i) {
        if (coll_async_port_filter_keeps(&filter, machine[i].device, machine[i].port)) {
            snprintf(out + strlen(out), size - strlen(out), "%s%s:%d", out[0] ? "," : "",
                     machine[i].device, machine[i].port);
        }
    }
    return out;
}

static void assert_parse_fails(const char *include, const char *exclude, const char *reason)
{
    struct coll_async_port_filter filter;
    char why[256] = "";

    assert_int_equal(coll_async_port_filter_parse(include, exclude, &filter, why, sizeof(why)),
                     -EINVAL);
    if (NULL == strstr(why, reason)) {
        fail_msg("include \"%s\" exclude \"%s\": \"%s\" does not say \"%s\"",
                 include ? include : "", exclude ? exclude : "", why, reason);
    }
}

static void test_filter(void **state)
{
    char kept[256];

    (void) state;
    assert_string_equal(select_ports(NULL, NULL, kept, sizeof(kept)),
                        "mlx5_0:1,mlx5_0:2,mlx5_1:1,rxe0:1");
    assert_string_equal(select_ports("", "", kept, sizeof(kept)),
                        "mlx5_0:1,mlx5_0:2,mlx5_1:1,rxe0:1");
    assert_string_equal(select_ports("mlx5_0", NULL, kept, sizeof(kept)), "mlx5_0:1,mlx5_0:2");
    assert_string_equal(select_ports("mlx5_0:2,rxe0", NULL, kept, sizeof(kept)),
                        "mlx5_0:2,rxe0:1");
    assert_string_equal(select_ports("mlx5_0:3", NULL, kept, sizeof(kept)), "");
    assert_string_equal(select_ports("mlx5", NULL, kept, sizeof(kept)), ""); /* whole names */
    assert_string_equal(select_ports(NULL, "mlx5_0:1", kept, sizeof(kept)),
                        "mlx5_0:2,mlx5_1:1,rxe0:1");
    assert_string_equal(select_ports(NULL, "mlx5_0,mlx5_1", kept, sizeof(kept)), "rxe0:1");

    assert_parse_fails("rxe0", "rxe1", "mutually exclusive");
    assert_parse_fails("rxe0:", NULL, "\"rxe0:\"");
    assert_parse_fails("rxe0:0", NULL, "\"rxe0:0\"");
    assert_parse_fails("rxe0:x", NULL, "\"rxe0:x\"");
    assert_parse_fails("rxe0:1x", NULL, "\"rxe0:1x\"");
    assert_parse_fails(":1", NULL, "\":1\"");
    assert_parse_fails(NULL, "rxe0,,rxe1", "exclude list: \"\"");
    assert_parse_fails(NULL, "rxe0,", "exclude list");
    assert_parse_fails("a-device-name-much-longer-than-sixty-three-characters-is-not-a-name",
                       NULL, "include list");
    assert_parse_fails("rx e0", NULL, "\"rx e0\"");
    assert_parse_fails("a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", NULL, "more than 16");
}

static void write_file(const char *root, const char *path, const char *text)
{
    char full[512], *slash;
    FILE *file;

    snprintf(full, sizeof(full), "%s/%s", root, path);
    for (slash = strchr(full + strlen(root) + 1, '/'); NULL != slash;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        (void) mkdir(full, 0755);
        *slash = '/';
    }
    file = fopen(full, "w");
    assert_non_null(file);
    fputs(text, file);
    fclose(file);
}

static struct coll_async_verbs_port_info sysfs_port(const char *root, const char *device, int port)
{
    struct coll_async_verbs_port_info info;

    memset(&info, 0x55, sizeof(info));
    snprintf(info.device, sizeof(info.device), "%s", device);
    info.port = port;
    coll_async_verbs_port_sysfs(root, &info);
    return info;
}

static void test_sysfs(void **state)
{
    char root[] = "/tmp/test_verbs_port.XXXXXX";
    struct coll_async_verbs_port_info info;
    char command[128];

    (void) state;
    assert_non_null(mkdtemp(root));
    write_file(root, "class/infiniband/mlx5_3/device/numa_node", "1\n");
    write_file(root, "class/infiniband/mlx5_3/ports/1/gid_attrs/ndevs/0", "enp65s0f0np0\n");
    write_file(root, "class/infiniband/mlx5_3/ports/2/gid_attrs/ndevs/0", "enp65s0f1np1\n");
    write_file(root, "class/infiniband/mlx4_0/device/numa_node", "-1\n"); /* no NUMA */
    write_file(root, "class/infiniband/rxe0/ports/1/gid_attrs/ndevs/0", "veth0\n");

    info = sysfs_port(root, "mlx5_3", 2);
    assert_int_equal(info.numa, 1);
    assert_string_equal(info.netdev, "enp65s0f1np1");
    info = sysfs_port(root, "mlx4_0", 1); /* InfiniBand: no netdev under the port */
    assert_int_equal(info.numa, -1);
    assert_string_equal(info.netdev, "");
    info = sysfs_port(root, "rxe0", 1); /* soft-RoCE: no parent device */
    assert_int_equal(info.numa, -1);
    assert_string_equal(info.netdev, "veth0");
    info = sysfs_port(root, "gone0", 1);
    assert_int_equal(info.numa, -1);
    assert_string_equal(info.netdev, "");

    snprintf(command, sizeof(command), "rm -rf '%s'", root);
    assert_int_equal(system(command), 0);
}

/* This machine's ports, whatever they are: a consistent answer. */
static void test_discover_here(void **state)
{
    struct coll_async_verbs_port_info ports[COLL_ASYNC_VERBS_MAX_PORTS];
    char why[256] = "";
    int count;

    (void) state;
    count = coll_async_verbs_discover(NULL, NULL, ports, COLL_ASYNC_VERBS_MAX_PORTS, why,
                                      sizeof(why));
    print_message("%d port(s)%s%s\n", count, 0 == count ? ": " : "", 0 == count ? why : "");
    assert_true(count >= 0);
    for (int i = 0; i < count; ++i) {
        print_message("%s:%d netdev \"%s\" numa %d\n", ports[i].device, ports[i].port,
                      ports[i].netdev, ports[i].numa);
        assert_true(ports[i].port >= 1 && '\0' != ports[i].device[0]);
    }
    assert_int_equal(coll_async_verbs_discover("no_such_device0", NULL, ports,
                                               COLL_ASYNC_VERBS_MAX_PORTS, why, sizeof(why)),
                     0);
    assert_true('\0' != why[0]);
    assert_int_equal(coll_async_verbs_discover("a", "b", ports, COLL_ASYNC_VERBS_MAX_PORTS, why,
                                               sizeof(why)),
                     -EINVAL);
    assert_non_null(strstr(why, "mutually exclusive"));
}

/* create() without a usable port, or with a bad configuration, fails and leaks
 * nothing (run under valgrind on a host without RDMA). */
static void test_create_fails_cleanly(void **state)
{
    struct coll_async_verbs_config config = {.include = "no_such_device0", .self = 0, .nprocs = 2};
    struct coll_async_verbs *verbs = (void *) 1;
    char why[256] = "";

    (void) state;
    assert_int_equal(coll_async_verbs_create(&verbs, &config, why, sizeof(why)), -ENODEV);
    assert_null(verbs);
    print_message("no port: %s\n", why);
    assert_true('\0' != why[0]);

    config.exclude = "rxe0";
    assert_int_equal(coll_async_verbs_create(&verbs, &config, why, sizeof(why)), -EINVAL);
    assert_non_null(strstr(why, "mutually exclusive"));

    config.include = config.exclude = NULL;
    config.self = 2;
    assert_int_equal(coll_async_verbs_create(&verbs, &config, why, sizeof(why)), -EINVAL);
    assert_null(verbs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_sysfs),
        cmocka_unit_test(test_discover_here),
        cmocka_unit_test(test_create_fails_cleanly),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
