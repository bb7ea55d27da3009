/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_topology.c: NUMA domains and NICs read from the XML
 * fixtures of test/fixtures (and from this machine), the NUMA domain of a rank's
 * binding, the hierarchy and leaders of communicators of various shapes, and the
 * summary line.
 *
 * COLL_ASYNC_FIXTURES, set by the Makefile, is the fixtures' directory.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_topology.h"

#define NONE COLL_ASYNC_TOPOLOGY_NUMA_NONE
#define SEVERAL COLL_ASYNC_TOPOLOGY_NUMA_SEVERAL
#define NETWORK COLL_ASYNC_TOPOLOGY_NIC_NETWORK
#define OPENFABRICS COLL_ASYNC_TOPOLOGY_NIC_OPENFABRICS
#define COUNT(a) ((int) (sizeof(a) / sizeof((a)[0])))

static const char *fixture_path(const char *name)
{
    static char path[4096];

    snprintf(path, sizeof(path), "%s/%s", COLL_ASYNC_FIXTURES, name);
    return path;
}

/* The topology of a fixture (NULL: this machine), read and built; hwloc's own is gone. */
static struct coll_async_topology *load(const char *name)
{
    struct coll_async_topology *topo = NULL;
    hwloc_topology_t topology;

    assert_int_equal(coll_async_topology_load(NULL != name ? fixture_path(name) : NULL, &topology),
                     0);
    assert_int_equal(coll_async_topology_build(topology, &topo), 0);
    hwloc_topology_destroy(topology);
    return topo;
}

static void assert_nic(const struct coll_async_topology *topo, int i, const char *name,
                       const char *netdev, enum coll_async_topology_nic_kind kind, int numa)
{
    assert_string_equal(topo->nics[i].name, name);
    assert_string_equal(topo->nics[i].netdev, netdev);
    assert_int_equal(topo->nics[i].kind, kind);
    assert_int_equal(topo->nics[i].numa, numa);
}

static int numa_of(const struct coll_async_topology *topo, const char *list)
{
    int numa = 12345;

    assert_int_equal(coll_async_topology_numa_of_list(topo, list, &numa), 0);
    return numa;
}

static void assert_summary(const struct coll_async_topology *topo, int nodes, const char *expected)
{
    char line[256];

    assert_int_equal(coll_async_topology_summary(topo, nodes, line, sizeof(line)),
                     (int) strlen(expected));
    assert_string_equal(line, expected);
}

/* Fixtures */

static void test_two_socket_four_nics(void **state)
{
    struct coll_async_topology *topo = load("two-socket-4nic.xml");
    (void) state;

    assert_int_equal(topo->numa_count, 2);
    assert_int_equal(topo->numa[0].os_index, 0);
    assert_int_equal(topo->numa[1].os_index, 1);
    assert_int_equal(hwloc_bitmap_weight(topo->numa[0].cpuset), 8);
    assert_int_equal(hwloc_bitmap_first(topo->numa[1].cpuset), 8);
    assert_true(topo->io_known);
    assert_int_equal(topo->nic_count, 4);
    assert_nic(topo, 0, "eth0", "eth0", NETWORK, 0);
    assert_nic(topo, 1, "eth1", "eth1", NETWORK, 0);
    assert_nic(topo, 2, "mlx5_0", "eth2", OPENFABRICS, 1);
    assert_nic(topo, 3, "mlx5_1", "eth3", OPENFABRICS, 1);
    assert_summary(topo, 2, "2 nodes, 2 NUMA/node, 4 NICs/node: eth0@numa0 eth1@numa0 "
                            "mlx5_0/eth2@numa1 mlx5_1/eth3@numa1");
    coll_async_topology_free(topo);
}

static void test_two_socket_bindings(void **state)
{
    struct coll_async_topology *topo = load("two-socket-4nic.xml");
    hwloc_bitmap_t binding = hwloc_bitmap_alloc();
    int numa;
    (void) state;

    assert_int_equal(numa_of(topo, "0"), 0);
    assert_int_equal(numa_of(topo, "0-7"), 0);
    assert_int_equal(numa_of(topo, "2,5"), 0);
    assert_int_equal(numa_of(topo, "8"), 1);
    assert_int_equal(numa_of(topo, "9-15"), 1);
    assert_int_equal(numa_of(topo, "7-8"), SEVERAL);   /* straddles the sockets */
    assert_int_equal(numa_of(topo, "0-15"), SEVERAL);  /* unbound */
    assert_int_equal(numa_of(topo, "16-31"), NONE);    /* not this machine's CPUs */
    assert_int_equal(numa_of(topo, ""), NONE);
    assert_int_equal(coll_async_topology_numa_of_list(topo, "zero", &numa), -EINVAL);

    hwloc_bitmap_set_range(binding, 12, 13);
    assert_int_equal(coll_async_topology_numa_of(topo, binding), 1);
    hwloc_bitmap_free(binding);
    coll_async_topology_free(topo);
}

static void test_one_numa_one_nic(void **state)
{
    struct coll_async_topology *topo = load("one-numa-1nic.xml");
    (void) state;

    assert_int_equal(topo->numa_count, 1);
    assert_int_equal(topo->nic_count, 1);
    assert_nic(topo, 0, "eth0", "eth0", NETWORK, 0); /* on the Machine, whose only domain is 0 */
    assert_int_equal(numa_of(topo, "0-3"), 0);
    assert_int_equal(numa_of(topo, "0-63"), 0); /* touches no other domain */
    assert_summary(topo, 1, "1 node, 1 NUMA/node, 1 NIC/node: eth0@numa0");
    coll_async_topology_free(topo);
}

static void test_no_nic(void **state)
{
    struct coll_async_topology *topo = load("no-nic.xml");
    (void) state;

    assert_int_equal(topo->numa_count, 1);
    assert_true(topo->io_known);
    assert_int_equal(topo->nic_count, 0);
    assert_int_equal(numa_of(topo, "1"), 0);
    assert_summary(topo, 3, "3 nodes, 1 NUMA/node, 0 NICs/node");
    coll_async_topology_free(topo);
}

static void test_nic_of_several_domains(void **state)
{
    struct coll_async_topology *topo = load("two-numa-machine-nic.xml");
    (void) state;

    assert_int_equal(topo->numa_count, 2);
    assert_int_equal(topo->nic_count, 1);
    assert_nic(topo, 0, "eth0", "eth0", NETWORK, SEVERAL);
    assert_int_equal(numa_of(topo, "2-3"), 1);
    assert_summary(topo, 2, "2 nodes, 2 NUMA/node, 1 NIC/node: eth0@several");
    coll_async_topology_free(topo);
}

/* Open MPI may load its topology without I/O: then no NIC says nothing. */
static void test_without_io(void **state)
{
    struct coll_async_topology *topo = NULL;
    hwloc_topology_t topology;
    (void) state;

    assert_int_equal(hwloc_topology_init(&topology), 0);
    assert_int_equal(hwloc_topology_set_xml(topology, fixture_path("two-socket-4nic.xml")), 0);
    assert_int_equal(hwloc_topology_load(topology), 0); /* hwloc's default: no I/O */
    assert_int_equal(coll_async_topology_build(topology, &topo), 0);
    hwloc_topology_destroy(topology);
    assert_false(topo->io_known);
    assert_int_equal(topo->nic_count, 0);
    assert_summary(topo, 1, "1 node, 2 NUMA/node, NICs unknown");
    coll_async_topology_free(topo);
}

static void test_load_errors(void **state)
{
    hwloc_topology_t topology;
    (void) state;

    assert_true(coll_async_topology_load(fixture_path("no-such-file.xml"), &topology) < 0);
    assert_true(coll_async_topology_load(fixture_path("make-fixtures"), &topology) < 0);
}

static void test_live_machine(void **state)
{
    struct coll_async_topology *topo = load(NULL);
    hwloc_topology_t topology;
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    char line[512];
    (void) state;

    assert_true(topo->numa_count >= 1);
    for (int i = 0; i < topo->numa_count; ++i) {
        assert_false(hwloc_bitmap_iszero(topo->numa[i].cpuset));
    }
    assert_true(topo->io_known);
    assert_int_equal(coll_async_topology_load(NULL, &topology), 0);
    assert_int_equal(hwloc_get_cpubind(topology, mine, HWLOC_CPUBIND_PROCESS), 0);
    assert_int_not_equal(coll_async_topology_numa_of(topo, mine), NONE);
    assert_true(coll_async_topology_summary(topo, 1, line, sizeof(line)) > 0);
    print_message("live: %s\n", line);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topology);
    coll_async_topology_free(topo);
}

static void test_summary_cut(void **state)
{
    struct coll_async_topology *topo = load("two-socket-4nic.xml");
    char line[10];
    int full;
    (void) state;

    full = coll_async_topology_summary(topo, 2, line, sizeof(line));
    assert_int_equal(full, (int) strlen("2 nodes, 2 NUMA/node, 4 NICs/node: eth0@numa0 eth1@numa0 "
                                        "mlx5_0/eth2@numa1 mlx5_1/eth3@numa1"));
    assert_string_equal(line, "2 nodes, ");
    assert_int_equal(coll_async_topology_summary(topo, 2, NULL, 0), full);
    coll_async_topology_free(topo);
}

/* Hierarchy */

static struct coll_async_topology_hierarchy *
build(const struct coll_async_topology_place *places, int nranks,
      const struct coll_async_topology_node_desc *nodes, int node_count)
{
    struct coll_async_topology_hierarchy *hier = NULL;

    assert_int_equal(coll_async_topology_hierarchy_build(places, nranks, nodes, node_count, &hier),
                     0);
    assert_int_equal(hier->node_count, node_count);
    return hier;
}

static void assert_ints(const int *got, const int *expected, int count)
{
    for (int i = 0; i < count; ++i) {
        if (got[i] != expected[i]) {
            fail_msg("entry %d: %d, expected %d", i, got[i], expected[i]);
        }
    }
}

/* ranks, numa_first (numa_count + 2) and nic_leaders of one node. */
static void assert_node(const struct coll_async_topology_node *node, int leader, const int *ranks,
                        int rank_count, const int *numa_first, const int *nic_leaders)
{
    assert_int_equal(node->leader, leader);
    assert_int_equal(node->rank_count, rank_count);
    assert_ints(node->ranks, ranks, rank_count);
    assert_ints(node->numa_first, numa_first, node->numa_count + 2);
    assert_ints(node->nic_leaders, nic_leaders, node->nic_count);
}

static const int four_nics[] = {0, 0, 1, 1}; /* the two-socket fixture's */

/* 2 nodes x 2 domains x 2 ranks, four NICs each: every NIC its own leader, near it. */
static void test_hierarchy_regular(void **state)
{
    const struct coll_async_topology_place places[] = {{0, 0}, {0, 0}, {0, 1}, {0, 1},
                                                       {1, 0}, {1, 0}, {1, 1}, {1, 1}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 4, four_nics}, {2, 4, four_nics}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 0, (int[]){0, 1, 2, 3}, 4, (int[]){0, 2, 4, 4},
                (int[]){0, 1, 2, 3});
    assert_node(&hier->nodes[1], 4, (int[]){4, 5, 6, 7}, 4, (int[]){0, 2, 4, 4},
                (int[]){4, 5, 6, 7});
    coll_async_topology_hierarchy_free(hier);
}

/* Ranks dealt round-robin over nodes and domains, as a reordered communicator has them. */
static void test_hierarchy_interleaved(void **state)
{
    const struct coll_async_topology_place places[] = {{1, 1}, {0, 1}, {1, 0}, {0, 0}, {1, 1},
                                                       {0, 1}, {1, 0}, {0, 0}, {1, SEVERAL}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 4, four_nics}, {2, 4, four_nics}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 1, (int[]){3, 7, 1, 5}, 4, (int[]){0, 2, 4, 4},
                (int[]){3, 7, 1, 5});
    assert_node(&hier->nodes[1], 0, (int[]){2, 6, 0, 4, 8}, 5, (int[]){0, 2, 4, 5},
                (int[]){2, 6, 0, 4});
    coll_async_topology_hierarchy_free(hier);
}

/* One NIC, on the domain of the higher ranks: not the node leader. */
static void test_leaders_one_nic(void **state)
{
    const int nic[] = {1};
    const struct coll_async_topology_place places[] = {{0, 0}, {0, 0}, {0, 1}, {0, 1}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 1, nic}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 0, (int[]){0, 1, 2, 3}, 4, (int[]){0, 2, 4, 4}, (int[]){2});
    coll_async_topology_hierarchy_free(hier);
}

/* Two NICs, one per domain, but every rank in domain 0: distinct leaders still. */
static void test_leaders_domain_without_rank(void **state)
{
    const int nics[] = {1, 0};
    const struct coll_async_topology_place places[] = {{0, 0}, {0, 0}, {0, 0}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 2, nics}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    /* NIC 1 first takes rank 0 of its domain; NIC 0 then the lowest free one */
    assert_node(&hier->nodes[0], 0, (int[]){0, 1, 2}, 3, (int[]){0, 3, 3, 3}, (int[]){1, 0});
    coll_async_topology_hierarchy_free(hier);
}

/* A node with one rank leads all its NICs with it; the other node has three ranks
 * for four NICs: the domain with one rank shares it, the other NICs get their own. */
static void test_leaders_uneven(void **state)
{
    const struct coll_async_topology_place places[] = {{0, 1}, {1, 0}, {1, 1}, {1, 1}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 4, four_nics}, {2, 4, four_nics}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 0, (int[]){0}, 1, (int[]){0, 0, 1, 1}, (int[]){0, 0, 0, 0});
    assert_node(&hier->nodes[1], 1, (int[]){1, 2, 3}, 3, (int[]){0, 1, 3, 3},
                (int[]){1, 1, 2, 3});
    coll_async_topology_hierarchy_free(hier);
}

/* A NIC of no single domain must not take the rank another NIC sits next to. */
static void test_leaders_nic_of_several_domains(void **state)
{
    const int nics[] = {SEVERAL, 0};
    const struct coll_async_topology_place places[] = {{0, 0}, {0, 1}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 2, nics}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 0, (int[]){0, 1}, 2, (int[]){0, 1, 2, 2}, (int[]){1, 0});
    coll_async_topology_hierarchy_free(hier);
}

/* Ranks bound across domains sit in the last group; they come before ranks of
 * another domain as leaders of a NIC whose domain has none left. */
static void test_leaders_spread_ranks(void **state)
{
    const int nic[] = {0};
    const struct coll_async_topology_place places[] = {{0, 1}, {0, SEVERAL}, {0, NONE}};
    const struct coll_async_topology_node_desc nodes[] = {{2, 1, nic}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 0, (int[]){0, 1, 2}, 3, (int[]){0, 0, 1, 3}, (int[]){1});
    coll_async_topology_hierarchy_free(hier);
}

/* Three nodes of different shapes, an odd communicator, a node with no NIC. */
static void test_hierarchy_heterogeneous(void **state)
{
    const int one_nic[] = {0};
    const struct coll_async_topology_place places[] = {{2, 0}, {0, 0}, {1, 3}, {0, 1},
                                                       {2, 0}, {1, 0}, {0, 1}};
    const struct coll_async_topology_node_desc nodes[] = {
        {2, 4, four_nics}, {4, 0, NULL}, {1, 1, one_nic}};
    struct coll_async_topology_hierarchy *hier = build(places, COUNT(places), nodes, COUNT(nodes));
    (void) state;

    assert_node(&hier->nodes[0], 1, (int[]){1, 3, 6}, 3, (int[]){0, 1, 3, 3},
                (int[]){1, 1, 3, 6});
    assert_node(&hier->nodes[1], 2, (int[]){5, 2}, 2, (int[]){0, 1, 1, 1, 2, 2}, NULL);
    assert_node(&hier->nodes[2], 0, (int[]){0, 4}, 2, (int[]){0, 2, 2}, (int[]){0});
    coll_async_topology_hierarchy_free(hier);
}

static void test_hierarchy_invalid(void **state)
{
    const struct coll_async_topology_place one[] = {{0, 0}};
    const struct coll_async_topology_place bad_node[] = {{0, 0}, {2, 0}};
    const struct coll_async_topology_place bad_numa[] = {{0, 2}};
    const int bad_nic[] = {5};
    const struct coll_async_topology_node_desc nodes[] = {{2, 0, NULL}, {2, 0, NULL}};
    const struct coll_async_topology_node_desc bad_desc[] = {{2, 1, bad_nic}};
    struct coll_async_topology_hierarchy *hier = NULL;
    (void) state;

    assert_int_equal(coll_async_topology_hierarchy_build(one, 1, nodes, 2, &hier), -EINVAL);
    assert_int_equal(coll_async_topology_hierarchy_build(bad_node, 2, nodes, 2, &hier), -EINVAL);
    assert_int_equal(coll_async_topology_hierarchy_build(bad_numa, 1, nodes, 1, &hier), -EINVAL);
    assert_int_equal(coll_async_topology_hierarchy_build(one, 1, bad_desc, 1, &hier), -EINVAL);
    assert_int_equal(coll_async_topology_hierarchy_build(one, 0, nodes, 1, &hier), -EINVAL);
    assert_null(hier);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_socket_four_nics),
        cmocka_unit_test(test_two_socket_bindings),
        cmocka_unit_test(test_one_numa_one_nic),
        cmocka_unit_test(test_no_nic),
        cmocka_unit_test(test_nic_of_several_domains),
        cmocka_unit_test(test_without_io),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_live_machine),
        cmocka_unit_test(test_summary_cut),
        cmocka_unit_test(test_hierarchy_regular),
        cmocka_unit_test(test_hierarchy_interleaved),
        cmocka_unit_test(test_leaders_one_nic),
        cmocka_unit_test(test_leaders_domain_without_rank),
        cmocka_unit_test(test_leaders_uneven),
        cmocka_unit_test(test_leaders_nic_of_several_domains),
        cmocka_unit_test(test_leaders_spread_ranks),
        cmocka_unit_test(test_hierarchy_heterogeneous),
        cmocka_unit_test(test_hierarchy_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
