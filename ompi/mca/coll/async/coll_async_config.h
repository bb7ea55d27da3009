/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the settings below the glue works with, as understood (not the
 * MCA strings as given). coll_async_params.c fills them once, when it checks the
 * parameters at component open; the component and the module's entry hand them
 * down as a const pointer to what they open (the node, the placement of the
 * progress thread, the segments, the hierarchy and its multicast group), so no
 * file below them reads the component's global.
 */

#ifndef MCA_COLL_ASYNC_CONFIG_H
#define MCA_COLL_ASYNC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "coll_async_collectives.h"
#include "coll_async_decision.h"
#include "coll_async_parse.h"
#include "coll_async_tuning.h"
#include "transport/coll_async_channel.h"

struct coll_async_config {
    /* Each node's shared-memory channel. */
    struct coll_async_channel_config channel;

    /* The node: 0 or a number of pretend nodes the world's ranks are split into;
     * the hwloc XML file its topology is read from ("": this machine). */
    int virtual_nodes;
    const char *topology_xml;
    /* 0 or a number of pretend NUMA domains each node's ranks are split into. */
    int virtual_numa;

    /* Where the progress thread runs, and the list as given (for messages). */
    struct coll_async_cpuset progress_cpus;
    const char *progress_cpus_value;

    /* Across nodes: leaders per node (0: one per NIC), the size from which an
     * allreduce is split over them, the algorithm of each family (the hierarchy
     * keeps its own copy), and whether the ring of leaders is ordered by measured
     * bandwidth. */
    int leaders;
    size_t multi_leader_bytes;
    enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES];
    bool profile_ring;
    /* The tuning file's rows, read once at open (NULL: no file, or one refused),
     * and its name as given; a communicator uses them where every rank read the
     * same rows (coll_async_hier.c). */
    const struct coll_async_tuning *tuning;
    const char *tuning_file;

    /* The transports between nodes: TCP's interfaces (lists as given, "": all),
     * connections per peer (0: one per interface pair), connection deadline,
     * staging bound, rendezvous size (0: never) and frame size; the verbs ports
     * (lists as given) and how many to use (0: all). */
    struct {
        const char *include, *exclude;
        int links;
        int connect_timeout_s;
        size_t staging_limit;
        size_t rendezvous_bytes;
        size_t chunk_bytes;
    } tcp;
    struct {
        const char *include, *exclude;
        int ports;
    } verbs;

    /* The leaders' multicast group for bcast. */
    struct {
        const char *include, *exclude; /* verbs ports, as the TCP/verbs filters read */
        double drop_fraction;          /* of packets dropped on purpose (tests) */
        int min_nodes;                 /* auto takes multicast from this many nodes; 0: never */
        int max_nodes;                 /* ... up to this many; 0: no bound */
        size_t min_bytes;              /* ... and from this many bytes */
    } multicast;
};

#endif /* MCA_COLL_ASYNC_CONFIG_H */
