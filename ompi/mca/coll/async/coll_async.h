/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the component, its per-communicator module, and what the glue
 * files share (parameters, counters, paths).
 */

#ifndef MCA_COLL_ASYNC_H
#define MCA_COLL_ASYNC_H

#include "ompi_config.h"

#include "mpi.h"
#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "opal/sys/atomic.h"

#include "coll_async_collectives.h"
#include "coll_async_compat.h"
#include "coll_async_config.h"
#include "coll_async_decision.h"
#include "coll_async_engine.h"
#include "coll_async_failure.h"
#include "coll_async_hier.h"
#include "coll_async_parse.h"
#include "coll_async_say.h"
#include "transport/coll_async_channel.h"

BEGIN_C_DECLS

struct coll_async_topology;
struct coll_async_numa;

/* How one collective on one communicator is executed. */
enum coll_async_path {
    COLL_ASYNC_PATH_DELEGATED, /* handed to the module below */
    COLL_ASYNC_PATH_NATIVE,    /* executed by this component */
    COLL_ASYNC_NUM_PATHS
};

extern const char *const mca_coll_async_path_names[COLL_ASYNC_NUM_PATHS];

typedef struct mca_coll_async_component_t {
    mca_coll_base_component_t super;

    /* MCA parameters, as given */
    int priority;
    int verbose;
    char *progress_cpus_value;
    int algorithm_value[COLL_ASYNC_NUM_FAMILIES]; /* MCA enums from the decision table */
    size_t shm_slot_size;
    size_t shm_piece_size;
    size_t shm_stream_bytes;
    bool shm_cma;
    int shm_setup_timeout;
    size_t shm_reuse_bytes;
    size_t scratch_keep_bytes;
    char *reduce_mode_value;
    size_t small_reduce_bytes;
    int virtual_nodes;
    int virtual_numa;
    char *topology_xml;
    char *tcp_if_include;
    char *tcp_if_exclude;
    int tcp_links;
    int tcp_connect_timeout;
    size_t tcp_staging_limit;
    size_t tcp_rendezvous_bytes;
    size_t tcp_chunk_bytes;
    char *verbs_if_include;
    char *verbs_if_exclude;
    int verbs_ports;
    int leaders;
    size_t multi_leader_bytes;
    bool profile_ring;
    char *tuning_file;
    double mcast_drop_fraction;
    int mcast_min_nodes;
    int mcast_max_nodes;
    size_t mcast_min_bytes;

    /* ... and as understood by mca_coll_async_params_check(): the algorithms
     * (read by the module's entry), and the settings it hands down. */
    enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES];
    struct coll_async_config config;
} mca_coll_async_component_t;

COLL_ASYNC_EXPORT extern mca_coll_async_component_t mca_coll_async_component;

typedef struct mca_coll_async_module_t {
    mca_coll_base_module_t super;

    enum coll_async_path path[COLL_ASYNC_NUM_COLLS];
    /* The algorithm of each family on this communicator: the job's parameters,
     * with the communicator's MPI_Info hints over them (coll_async_hints.c). */
    enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES];

    /* The functions (and their modules) that the components selected below this one
     * installed on the communicator before this module was enabled. */
    mca_coll_base_comm_coll_t below;

    /* Multi-process communicators on one node: the shared-memory channel the native
     * collectives use; across nodes: the hierarchy; and the engine's queue of this
     * communicator's ops. */
    bool has_channel;
    struct coll_async_channel channel;
    struct coll_async_hier *hier;
    /* On one node whose ranks are in several NUMA domains: its split, for the
     * families that run in NUMA stages (NULL: none, or a single domain). */
    struct coll_async_numa *numa;
    struct coll_async_stream stream;
    /* The second half of the channels' set-up, at the first collective
     * (coll_async_settle.c): what failed there, for every collective after. */
    struct coll_async_failure settle_failure;
    struct ompi_communicator_t *settle_comm;
    bool settle_reported; /* the settled channel said at verbose level */
    /* Every rank on the mapper: the hierarchy's, or, on one node, made at the
     * first call that needs it (mca_coll_async_module_peers). */
    struct coll_async_peers *peers;
    struct coll_async_peers own_peers;
    /* MPIX_Comm_agree and _iagree (coll_async_agree.c): their order and their
     * tags, apart from the communicator's collectives; peers made at the first. */
    struct coll_async_stream agree_stream;
    struct coll_async_peers agree_peers;
} mca_coll_async_module_t;

OBJ_CLASS_DECLARATION(mca_coll_async_module_t);

/* coll_async_params.c: the component's MCA parameters, registered into its
 * fields; checked at open, where a bad value is said and component->config is
 * filled from the rest. */
int mca_coll_async_params_register(mca_coll_async_component_t *component);
int mca_coll_async_params_check(mca_coll_async_component_t *component);
/* Frees what the check read (the tuning file's rows); at close. */
void mca_coll_async_params_fini(mca_coll_async_component_t *component);

/* coll_async_pvars.c: MPI_T counters coll_async_<collective>_<path>. */
extern volatile int64_t mca_coll_async_calls[COLL_ASYNC_NUM_COLLS][COLL_ASYNC_NUM_PATHS];
extern volatile int64_t mca_coll_async_reduce_local_calls; /* always native */
extern volatile int64_t mca_coll_async_numa_calls; /* run in NUMA stages */
extern volatile int64_t mca_coll_async_agree_calls; /* agreements run by coll/async */
/* Stages between nodes this process led, by the leaders' algorithm that ran. */
extern volatile int64_t mca_coll_async_between_calls[COLL_ASYNC_NUM_ALGS];
int mca_coll_async_pvars_register(const mca_base_component_t *component);

static inline void mca_coll_async_count(enum coll_async_coll coll, enum coll_async_path path)
{
    OPAL_THREAD_ADD_FETCH64(&mca_coll_async_calls[coll][path], 1);
}

/* coll_async_node.c: whether a process runs on this node (or virtual node), and
 * this node's topology, read once (from config's topology_xml or the machine) at
 * topology_init, which also keeps config's virtual_nodes. */
bool mca_coll_async_on_this_node(struct ompi_proc_t *proc);
#define COLL_ASYNC_NODE_NAME_MAX 96
void mca_coll_async_node_name(char *buf, size_t len); /* this node's, for the others */
int mca_coll_async_node_numa(void); /* the NUMA domain of this process's binding */
const struct coll_async_topology *mca_coll_async_node_topology(void); /* NULL: unknown */
int mca_coll_async_node_topology_init(const struct coll_async_config *config);
void mca_coll_async_node_topology_fini(void);
void mca_coll_async_node_report(struct ompi_communicator_t *comm);

/* Which of a communicator's segments one is: they may have the same members (a
 * node's two ranks are also its NUMA leaders) and live at once. */
enum coll_async_segment_role {
    COLL_ASYNC_SEGMENT_COMM = 'c',         /* the communicator's, on one node */
    COLL_ASYNC_SEGMENT_NODE = 'n',         /* one node's ranks of one spanning nodes */
    COLL_ASYNC_SEGMENT_NUMA_DOMAIN = 'd',  /* one NUMA domain's ranks */
    COLL_ASYNC_SEGMENT_NUMA_LEADERS = 'l', /* the domains' leaders */
};

/* coll_async_segment.c: this rank's half of the set-up of channel over the count
 * ranks of comm on this node (ranks: their ranks in comm, ascending; NULL: all of
 * comm's), this process being the one at index; the one with the lowest process
 * name creates the segment, named from its card, and vote goes to all. Waits for
 * nobody. OMPI_SUCCESS: the channel is to be settled before its first use
 * (mca_coll_async_segment_settle), which fails for every rank alike where one
 * could not attach (this one too: coll_async_channel_failed()); or an error after
 * the failure was reported (a help message from one rank, a verbose line), which
 * every rank meets, and all fall back. */
int mca_coll_async_segment_open(struct coll_async_channel *channel,
                                const struct coll_async_channel_config *config,
                                struct ompi_communicator_t *comm, const int *ranks, int count,
                                int index, enum coll_async_segment_role role, bool vote);
/* Without blocking, from any thread that steps the communicator's ops:
 * COLL_ASYNC_SHM_AGAIN until every rank of the channel has attached; then 0, or
 * for good the error every rank gets alike, recorded in said for the thread that
 * completes the collective to report. */
int mca_coll_async_segment_settle(struct coll_async_channel *channel,
                                  struct ompi_communicator_t *comm,
                                  struct coll_async_failure *said);

/* coll_async_hier.c: the hierarchy of a communicator that spans nodes, from the
 * modex (no message between the ranks but the shared memory of each node's);
 * NULL (after saying why at verbose level) when it cannot be built. */
struct coll_async_hier *mca_coll_async_hier_open(struct ompi_communicator_t *comm,
                                                const struct coll_async_config *config);
void mca_coll_async_hier_close(struct coll_async_hier *hier);

/* coll_async_agree.c: MPIX_Comm_agree (request NULL) and MPIX_Comm_iagree, flag
 * folded with op over comm in an order of their own. */
int mca_coll_async_agree(void *flag, coll_async_count_t count, struct ompi_datatype_t *dtype,
                         struct ompi_op_t *op, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_async_module_t *module);

/* coll_async_settle.c: installs the settling of module's channels before the
 * first op of comm, where it has channels. */
void mca_coll_async_settle_install(mca_coll_async_module_t *module,
                                   struct ompi_communicator_t *comm);
/* coll_async_module.c: once the channels are settled, what they can do, said
 * once at verbose level (from an application thread: the call's). */
void mca_coll_async_module_report_settled(mca_coll_async_module_t *module,
                                          struct ompi_communicator_t *comm);

/* coll_async_numa_split.c: the NUMA split of count ranks of comm on this node
 * (ascending; NULL: all of comm), this process the one at index, when they are in
 * several domains (pretend ones under coll_async_virtual_numa) and a family may
 * run in NUMA stages; NULL otherwise. Opened before their own channel, which
 * carries the split's opened as this rank's vote. The split's ranks are indices
 * into ranks. Said at verbose level 1 (index 0) and 2 (every rank). */
struct coll_async_numa *mca_coll_async_numa_open(struct ompi_communicator_t *comm,
                                                const int *ranks, int count, int index,
                                                const struct coll_async_config *config);
void mca_coll_async_numa_close(struct coll_async_numa *numa);

/* coll_async_hier_multicast.c: whether hier's bcasts use a multicast group (every
 * rank) and the group's state (slot 0's leaders), with no message, kept in its
 * own struct at hier->multicast; its part of the verbose line on bcast (others:
 * what runs instead); leaving the group once every leader has finished with it. */
int mca_coll_async_hier_multicast_open(struct coll_async_hier *hier,
                                       struct ompi_communicator_t *comm,
                                       const struct coll_async_config *config);
int mca_coll_async_hier_multicast_describe(const struct coll_async_hier *hier, const char *others,
                                           char *buf, size_t len);
void mca_coll_async_hier_multicast_close(struct coll_async_hier *hier);
/* Whether a bcast of bytes goes over the group (alike on every rank), and the
 * group (this rank's, when it is one of slot 0's leaders; else NULL). */
bool mca_coll_async_hier_multicast_takes(const struct coll_async_hier *hier, size_t bytes);
struct coll_async_multicast *mca_coll_async_hier_multicast_group(const struct coll_async_hier *hier);
/* Why a bcast a tuning file's multicast row covers goes point to point (where
 * takes said no): for the verbose line. */
const char *mca_coll_async_hier_multicast_rows_off(const struct coll_async_hier *hier);

/* coll_async_profile.c: orders the ring of hier's group of leaders by measured
 * bandwidth; the leaders of a slot meet over TCP, nobody else takes part. The
 * order (node_count entries, the caller's to free) comes back in *ring; NULL
 * where this rank does not take part. */
int mca_coll_async_profile_ring(struct ompi_communicator_t *comm, struct coll_async_hier *hier,
                                int **ring);

/* coll_async_hints.c: comm's MPI_Info hints coll_async_<family>_algorithm over
 * algorithm[] (the job's on entry). A bad value or an unknown key with the
 * prefix is said (rank 0 of comm) and ignored; a hint taken is said at verbose
 * level 1 (rank 0) and 2. */
void mca_coll_async_hints_read(struct ompi_communicator_t *comm,
                               enum coll_async_alg algorithm[COLL_ASYNC_NUM_FAMILIES]);

/* coll_async_module.c */
mca_coll_base_module_t *mca_coll_async_comm_query(struct ompi_communicator_t *comm,
                                                  int *priority);
/* Every rank of comm on the mapper; NULL (said at verbose level 1) when this
 * job has no mapper or a rank cannot be reached. */
struct coll_async_peers *mca_coll_async_module_peers(mca_coll_async_module_t *module,
                                                     struct ompi_communicator_t *comm);

/* coll_async_placement.c: resolves coll_async_progress_cpus for the engine, once;
 * whether this node runs more ranks of the job than the CPUs the job may use. */
void mca_coll_async_place_progress_thread(const struct coll_async_config *config);
bool mca_coll_async_node_oversubscribed(void);

/* coll_async_dispatch.c: installs the entry points of every collective. */
void mca_coll_async_dispatch_install(mca_coll_base_module_t *module);

END_C_DECLS

#endif /* MCA_COLL_ASYNC_H */
