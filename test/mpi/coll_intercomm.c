/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_intercomm: the collectives MPI defines on intercommunicators, checked
 * against what each rank computes itself.
 *
 *   mpirun -np N coll_intercomm [--expect-component=yes|no] [--max-count C]
 *                               [--forms blocking,nonblocking,persistent]
 *                               [--only NAME[,NAME...]] [--skip NAME[,NAME...]]
 *                               [--spawn | --accept FILE | --connect FILE]
 *                               [--verbose] [--thread-multiple]
 *
 * Intercommunicators (N >= 2), each rank's two groups called 0 and 1 everywhere:
 *   split        world ranks 0..k-1 and k..N-1, k = max(1, (N-1)/2): unequal sizes
 *                from N = 3 on (1 + 2, 1 + 3, 2 + 3, ...);
 *   interleaved  even and odd world ranks, the odd ones in reverse world order, so
 *                a fold in world order instead of the group's order is wrong;
 *   re-split     split merged back (MPI_Intercomm_merge, group 1 first) and cut
 *                again by the parity of the merged rank, MPI_Intercomm_create over
 *                the merged communicator rather than MPI_COMM_WORLD.
 * With --mca coll_async_virtual_nodes 2 the groups of split sit on different
 * virtual nodes and those of interleaved straddle them.
 *
 * Collectives: MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Allgather(v),
 * MPI_Alltoall(v,w), MPI_Gather(v), MPI_Scatter(v), MPI_Reduce_scatter_block,
 * MPI_Reduce_scatter, MPI_Barrier, each blocking, nonblocking (MPI_I..., MPI_Wait)
 * and persistent (MPI_..._init, then twice: new data, MPI_Start, MPI_Wait, check;
 * then MPI_Request_free). Rooted ones with the root in either group, first and last
 * rank of it (coll_intercomm_colls.c: the conventions). Reductions: MPI_SUM on
 * MPI_INT and a non-commutative affine op (coll_user_op's) on pairs; each group
 * gets the reduction of the other group's inputs folded in that group's rank
 * order; reduce_scatter(_block) counts make both groups' vectors count*n0*n1 long.
 * Data movement on MPI_INT and on a vector of 2 ints with 4-byte holes (extent
 * 16), counts 0, 1, 7, 1000, 100000. The whole receive buffer and GUARD bytes past
 * it must equal the image each rank builds (holes, gaps, the PROC_NULL ranks'
 * buffers: the fill pattern); send buffers must not change. Barrier: the ranks of
 * one group sleep 50, 80, 110, ... ms before entering, those of the other must not
 * leave before the last of them entered (by one host's clock: one machine).
 *
 * Around every call (every MPI_Start for the persistent form) coll/async's counter
 * coll_async_<name>_native must move by one and coll_async_<name>_delegated not at
 * all (by at most one for a zero count, which Open MPI's bindings may answer);
 * creating a persistent request moves neither. --expect-component=no skips them.
 * --skip takes counter names (ialltoallw, reduce_scatter_init, ...) for what an
 * Open MPI below cannot do on intercommunicators; --only takes family names.
 * Open MPI's own components (4.1.4 and 5.0.7: basic, tuned, inter, libnbc) pass
 * every case but two: libnbc's ibarrier and barrier_init on an intercommunicator
 * let a rank go once the remote group's root entered, before its other ranks did
 * (seen from 2 + 2 ranks on): --skip ibarrier,barrier_init where libnbc runs them.
 * Without coll/inter, coll/basic's allreduce and reduce fold a non-commutative op
 * out of order and its scatter loses data from 8 KiB a rank on (4.1.4).
 *
 * --spawn: MPI_Comm_spawn of 2 more copies of this program, then every case above
 * (every family and form, the counters too) over the parent-child
 * intercommunicator, which coll/async runs natively over TCP; --only, --skip,
 * --forms and --max-count reach the children too.
 *
 * --accept FILE, --connect FILE: two jobs (two mpiruns sharing an ompi-server)
 * meet through MPI_Open_port / MPI_Comm_accept / MPI_Comm_connect, the port's
 * name passed in FILE (written by the accepting job's rank 0, awaited by the
 * connecting job's), then every case above over that intercommunicator, the
 * accepting job group 0. Give both the same options; each job counts its own.
 *
 * COLL_INTERCOMM_BREAK=1 in the environment corrupts one expected value, so the
 * run must fail. Ends with "coll_intercomm: N checks, M failures" (summed over the
 * ranks) on rank 0; the exit status is non-zero on any failure.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll_intercomm.h"
#include "mpi4_persistent.h"
#include "coll_program.h"
#include "pvar_counter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct elemtype elemtypes[NUM_ELEMS] = {
    [E_INT] = {"MPI_INT", MPI_DATATYPE_NULL, 4, 1, {0, 0}},
    [E_GAPS] = {"int vector with holes", MPI_DATATYPE_NULL, 16, 2, {0, 8}},
    [E_PAIR] = {"affine pair", MPI_DATATYPE_NULL, 8, 2, {0, 4}},
};
MPI_Op affine_op = MPI_OP_NULL;

static const char *const form_names[NUM_FORMS] = {"blocking", "nonblocking", "persistent"};
static const int counts[] = {0, 1, 7, 1000, 100000};

static int world_rank, use_counters = 1, verbose, max_count = 100000;
static int form_enabled[NUM_FORMS] = {1, 1, 1};
static int coll_enabled[NUM_COLLS];
static char skip_list[1024];
static struct pvar_families counters;
static long checks, failures;
static int break_reference, broken;
static uint32_t next_salt;

/* --- the affine operation ------------------------------------------------------- */

static void affine_fn(void *invec, void *inoutvec, int *len, MPI_Datatype *dtype)
{
    uint32_t *in = invec, *io = inoutvec;

    (void) dtype;
    for (int i = 0; i < *len; ++i) { /* inout = in, then inout */
        uint32_t a = io[2 * i] * in[2 * i], b = io[2 * i] * in[2 * i + 1] + io[2 * i + 1];

        io[2 * i] = a;
        io[2 * i + 1] = b;
    }
}

static void create_types(void)
{
    MPI_Datatype vec;

    elemtypes[E_INT].dtype = MPI_INT;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 16, &elemtypes[E_GAPS].dtype);
    MPI_Type_free(&vec);
    MPI_Type_commit(&elemtypes[E_GAPS].dtype);
    MPI_Type_contiguous(2, MPI_UINT32_T, &elemtypes[E_PAIR].dtype);
    MPI_Type_commit(&elemtypes[E_PAIR].dtype);
    MPI_Op_create(affine_fn, 0, &affine_op);
}

static void free_types(void)
{
    MPI_Op_free(&affine_op);
    MPI_Type_free(&elemtypes[E_GAPS].dtype);
    MPI_Type_free(&elemtypes[E_PAIR].dtype);
}

/* --- reporting ------------------------------------------------------------------ */

static void call_name(const struct call *c, char *out, size_t len)
{
    snprintf(out, len, "%s%s%s", NONBLOCKING == c->form ? "i" : "", coll_names[c->coll],
             PERSISTENT == c->form ? "_init" : "");
}

static void describe(char *out, size_t len, const struct call *c)
{
    char name[64];
    int n;

    call_name(c, name, sizeof(name));
    n = snprintf(out, len, "%s on %s (group %d of %d+%d ranks, rank %d)", name, c->s->name,
                 c->s->group, c->s->nl, c->s->nr, c->s->me);
    if (BARRIER != c->coll && n > 0 && (size_t) n < len) {
        n += snprintf(out + n, len - (size_t) n, ", %s, count %d", c->t->name, c->count);
    }
    if (rooted(c->coll) && n > 0 && (size_t) n < len) {
        n += snprintf(out + n, len - (size_t) n, ", root: rank %d of group %d", c->root,
                      c->root_group);
    }
    if (PERSISTENT == c->form && n > 0 && (size_t) n < len) {
        snprintf(out + n, len - (size_t) n, ", start %d", c->start + 1);
    }
}

#define FAIL(c, ...)                                                                       \
    do {                                                                                   \
        if (failures++ < 20) {                                                             \
            char what_[320], line_[320];                                                   \
            describe(what_, sizeof(what_), (c));                                           \
            snprintf(line_, sizeof(line_), __VA_ARGS__);                                   \
            fprintf(stderr, PROGRAM ": rank %d: FAIL %s: %s\n", world_rank, what_, line_); \
        }                                                                                  \
    } while (0)

static void fail_rc(const struct call *c, const char *what, int rc)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(rc, text, &len);
    FAIL(c, "%s returned %d (%s)", what, rc, text);
}

/* --- counters --------------------------------------------------------------------- */

static void read_counters(const struct call *c, unsigned long long out[PVAR_PATHS])
{
    out[PVAR_PATH_NATIVE] = out[PVAR_PATH_DELEGATED] = 0;
    if (use_counters) {
        pvar_families_read(&counters, c->coll, c->form, out);
    }
}

/* native must have moved by want (want < 0: by 0 or 1), delegated not at all. */
static void check_counters(const struct call *c, const unsigned long long before[PVAR_PATHS],
                           int want)
{
    unsigned long long now[PVAR_PATHS];
    char name[96];

    if (!use_counters) {
        return;
    }
    pvar_families_read(&counters, c->coll, c->form, now);
    checks += 2;
    if (want < 0 ? now[0] - before[0] > 1 : now[0] - before[0] != (unsigned long long) want) {
        pvar_families_name(&counters, c->coll, c->form, PVAR_PATH_NATIVE, name, sizeof(name));
        FAIL(c, "counter %s moved by %llu, expected %s", name, now[0] - before[0],
             want < 0 ? "0 or 1 (a zero count)" : want ? "1" : "0");
    }
    if (now[1] != before[1]) {
        pvar_families_name(&counters, c->coll, c->form, PVAR_PATH_DELEGATED, name, sizeof(name));
        FAIL(c, "counter %s moved by %llu, expected 0", name, now[1] - before[1]);
    }
}

/* --- one call --------------------------------------------------------------------- */

static void compare(const struct call *c, const char *what, const char *got, const char *want,
                    size_t bytes)
{
    ++checks;
    for (size_t i = 0; i < bytes + GUARD; ++i) {
        if (got[i] != want[i]) {
            if (i >= bytes) {
                FAIL(c, "%s: byte %zu past its end is 0x%02X, expected the 0x%02X pattern",
                     what, i - bytes, (unsigned char) got[i], SENTINEL);
            } else {
                FAIL(c, "%s: byte %zu (element %zu, byte %zu in it) is 0x%02X, expected 0x%02X",
                     what, i, i / c->t->extent, i % c->t->extent, (unsigned char) got[i],
                     (unsigned char) want[i]);
            }
            return;
        }
    }
}

static int skipped(const struct call *c)
{
    char name[64], *at;
    size_t len;

    call_name(c, name, sizeof(name));
    len = strlen(name);
    for (at = strstr(skip_list, name); NULL != at; at = strstr(at + 1, name)) {
        if ((at == skip_list || ',' == at[-1]) && (',' == at[len] || '\0' == at[len])) {
            return 1;
        }
    }
    return 0;
}

static void run_call(struct call *c)
{
    struct args a = {0};
    unsigned long long before[PVAR_PATHS];
    MPI_Request req = MPI_REQUEST_NULL;
    int rc, want;

    call_plan(c, &a);
    want = a.any_data ? 1 : -1;
    for (c->start = 0; c->start < (PERSISTENT == c->form ? 2 : 1); ++c->start) {
        c->salt = next_salt++;
        call_fill(c, &a);
        if (verbose) {
            char what[320];

            describe(what, sizeof(what), c);
            fprintf(stderr, PROGRAM ": rank %d: %s\n", world_rank, what);
        }
        if (PERSISTENT != c->form || 0 == c->start) {
            read_counters(c, before);
            rc = call_issue(c, &a, &req);
            if (MPI_SUCCESS != rc) {
                fail_rc(c, "the call", rc);
                break;
            }
            if (PERSISTENT == c->form) {
                check_counters(c, before, 0); /* creating the request runs nothing */
            }
        }
        if (PERSISTENT == c->form) {
            read_counters(c, before);
            if (MPI_SUCCESS != (rc = MPI_Start(&req))) {
                fail_rc(c, "MPI_Start", rc);
                break;
            }
        }
        if (BLOCKING != c->form && MPI_SUCCESS != (rc = MPI_Wait(&req, MPI_STATUS_IGNORE))) {
            fail_rc(c, "MPI_Wait", rc);
            break;
        }
        check_counters(c, before, want);
        if (break_reference && !broken && ALLREDUCE == c->coll && BLOCKING == c->form
            && 7 == c->count) {
            a.image[3 * c->t->extent] ^= 0x10; /* the deliberate mistake: the run must fail */
            broken = 1;
        }
        compare(c, "the receive buffer", a.rbuf, a.image, a.rbytes);
        compare(c, "the send buffer", a.sbuf, a.scopy, a.sbytes);
    }
    if (PERSISTENT == c->form && MPI_REQUEST_NULL != req) {
        MPI_Request_free(&req);
    }
    call_free(&a);
}

static double now_s(void)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME, &t); /* one clock for every rank of this host */
    return (double) t.tv_sec + 1e-9 * (double) t.tv_nsec;
}

/*
 * One group sleeps, rank i of it 50 + 30 i ms, notes the time and enters; the other
 * enters at once and notes the time it left, which must come after the last entry
 * of the sleepers (MPI_COMM_WORLD tells everyone that time afterwards). The
 * staggered entries catch a barrier that waits for the remote root only.
 */
static void run_barrier(struct call *c, int sleeper)
{
    struct timespec nap = {0, (50 + 30 * (c->s->me % 10)) * 1000000L};
    unsigned long long before[PVAR_PATHS];
    MPI_Request req = MPI_REQUEST_NULL;
    struct args none = {0};
    int rc;

    for (c->start = 0; c->start < (PERSISTENT == c->form ? 2 : 1); ++c->start) {
        double entered = 0, left, last_entry;

        if (PERSISTENT == c->form && 0 == c->start) {
            read_counters(c, before);
            if (MPI_SUCCESS != (rc = call_issue(c, &none, &req))) {
                fail_rc(c, "the call", rc);
                return;
            }
            check_counters(c, before, 0);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* both groups start (about) together */
        read_counters(c, before);
        if (c->s->group == sleeper) {
            nanosleep(&nap, NULL);
            entered = now_s();
        }
        rc = PERSISTENT == c->form ? MPI_Start(&req) : call_issue(c, &none, &req);
        if (MPI_SUCCESS == rc && BLOCKING != c->form) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        left = now_s();
        MPI_Allreduce(&entered, &last_entry, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (MPI_SUCCESS != rc) {
            fail_rc(c, "the barrier", rc);
            break;
        }
        check_counters(c, before, 1);
        ++checks;
        if (c->s->group != sleeper && left < last_entry) {
            FAIL(c, "left %.1f ms before the last rank of group %d entered (its ranks "
                 "slept 50 ms and more first)", (last_entry - left) * 1e3, sleeper);
        }
    }
    if (PERSISTENT == c->form && MPI_REQUEST_NULL != req) {
        MPI_Request_free(&req);
    }
}

/* Every case of one intercommunicator. */
static void run_side(const struct side *s)
{
    for (int k = 0; k < NUM_COLLS; ++k) {
        enum coll coll = (enum coll) k;
        int elems[2] = {E_INT, reduction(coll) ? E_PAIR : E_GAPS};

        if (!coll_enabled[k]) {
            continue;
        }
        for (int m = 0; m < NUM_FORMS; ++m) {
            struct call c = {.coll = coll, .form = (enum form) m, .s = s,
                             .t = &elemtypes[E_INT]};

            if (!form_enabled[m] || skipped(&c)) {
                continue;
            }
            if (BARRIER == coll) {
                run_barrier(&c, 0);
                run_barrier(&c, 1);
                continue;
            }
            for (int e = 0; e < 2; ++e) {
                for (size_t ni = 0; ni < sizeof(counts) / sizeof(counts[0]); ++ni) {
                    for (int rg = 0; rg < (rooted(coll) ? 2 : 1); ++rg) {
                        /* the root group's size: nl where it is ours, else nr */
                        int n = rg == s->group ? s->nl : s->nr;

                        for (int ri = 0; ri < (rooted(coll) && n > 1 ? 2 : 1); ++ri) {
                            if (counts[ni] > max_count) {
                                continue;
                            }
                            c.t = &elemtypes[elems[e]];
                            c.count = counts[ni];
                            c.root_group = rg;
                            c.root = 0 == ri ? 0 : n - 1;
                            run_call(&c);
                        }
                    }
                }
            }
        }
    }
}

/* --- the intercommunicators --------------------------------------------------------- */

static void make_side(struct side *s, const char *name, MPI_Comm peer, int group, int key,
                      int remote_leader)
{
    MPI_Comm local;
    int peer_rank;

    MPI_Comm_rank(peer, &peer_rank);
    MPI_Comm_split(peer, group, key, &local);
    MPI_Intercomm_create(local, 0, peer, remote_leader, 77, &s->comm);
    MPI_Comm_free(&local);
    s->name = name;
    s->group = group;
    MPI_Comm_rank(s->comm, &s->me);
    MPI_Comm_size(s->comm, &s->nl);
    MPI_Comm_remote_size(s->comm, &s->nr);
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
}

static void side_of_comm(struct side *s, MPI_Comm comm, const char *name, int group)
{
    s->comm = comm;
    s->name = name;
    s->group = group;
    MPI_Comm_rank(comm, &s->me);
    MPI_Comm_size(comm, &s->nl);
    MPI_Comm_remote_size(comm, &s->nr);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
}

/* Every case, counters included, on an intercommunicator to another job (spawned,
 * or met by connect/accept): coll/async runs them natively, over TCP. */
static long other_job_cases(const struct side *s)
{
    long before = failures;

    next_salt = 1u << 30; /* parents and children in step */
    run_side(s);
    return failures - before;
}

/* The intercommunicator of --accept FILE or --connect FILE: rank 0 of the
 * accepting job opens a port and writes its name to FILE (through a temporary
 * name, so the reader never sees half of it); rank 0 of the connecting job waits
 * for the file (at most 60 s), reads it and connects. */
static MPI_Comm meet_other_job(const char *accept, const char *connect)
{
    char port[MPI_MAX_PORT_NAME] = "", partial[4096];
    MPI_Comm other;

    if (NULL != accept && 0 == world_rank) {
        FILE *f;

        MPI_Open_port(MPI_INFO_NULL, port);
        snprintf(partial, sizeof(partial), "%s.partial", accept);
        f = fopen(partial, "w");
        if (NULL == f || fprintf(f, "%s\n", port) < 0 || 0 != fclose(f)
            || 0 != rename(partial, accept)) {
            fprintf(stderr, PROGRAM ": cannot write the port's name to %s\n", accept);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (NULL != connect && 0 == world_rank) {
        FILE *f = NULL;

        for (int tries = 0; NULL == f && tries < 600; ++tries) {
            f = fopen(connect, "r");
            if (NULL == f) {
                usleep(100000);
            }
        }
        if (NULL == f || NULL == fgets(port, sizeof(port), f)) {
            fprintf(stderr, PROGRAM ": no port's name in %s\n", connect);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fclose(f);
        port[strcspn(port, "\n")] = '\0';
    }
    if (NULL != accept) {
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
        if (0 == world_rank) {
            MPI_Close_port(port);
        }
    } else {
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &other);
    }
    return other;
}

/* --- main ---------------------------------------------------------------------------- */

/* The program's own options: --only LIST, --skip LIST, --spawn, --accept FILE,
 * --connect FILE. */
struct own_options {
    int spawn;
    const char *accept, *connect;
};

static int read_own(int argc, char **argv, int i, void *context)
{
    struct own_options *own = context;

    if (0 == strcmp(argv[i], "--spawn")) {
        own->spawn = 1;
        return 1;
    }
    if (i + 1 < argc && 0 == strcmp(argv[i], "--accept")) {
        own->accept = argv[i + 1];
        return 2;
    }
    if (i + 1 < argc && 0 == strcmp(argv[i], "--connect")) {
        own->connect = argv[i + 1];
        return 2;
    }
    if (i + 1 < argc && 0 == strcmp(argv[i], "--only")) {
        return coll_program_list(argv[i + 1], coll_names, NUM_COLLS, coll_enabled) ? 2 : 0;
    }
    if (i + 1 < argc && 0 == strcmp(argv[i], "--skip")) {
        snprintf(skip_list, sizeof(skip_list), "%s", argv[i + 1]);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct coll_program_options opt = {.use_counters = 1,
                                       .max_count = 100000,
                                       .form_names = form_names,
                                       .form_enabled = form_enabled,
                                       .num_forms = NUM_FORMS};
    struct own_options own = {0};
    int world_size, spawn;
    long theirs[2] = {0, 0};
    char note[96];
    MPI_Comm parent;

    for (int k = 0; k < NUM_COLLS; ++k) {
        coll_enabled[k] = 1;
    }
    if (!coll_program_start(PROGRAM,
                            "[--only NAME[,NAME...]] [--skip NAME[,NAME...]] "
                            "[--spawn | --accept FILE | --connect FILE]",
                            &argc, &argv, &opt, read_own, &own)) {
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    use_counters = opt.use_counters;
    verbose = opt.verbose;
    max_count = opt.max_count;
    spawn = own.spawn;
    break_reference = coll_program_break("COLL_INTERCOMM_BREAK");
    create_types();
    if (use_counters) {
        pvar_families_open(&counters, coll_names, NUM_COLLS, PROGRAM);
    }

    MPI_Comm_get_parent(&parent);
    if (MPI_COMM_NULL != parent) { /* a spawned child: its part of --spawn, then done */
        struct side s;
        long mine[2];

        side_of_comm(&s, parent, "the parent-child intercommunicator", 1);
        other_job_cases(&s);
        mine[0] = checks;
        mine[1] = failures;
        MPI_Allreduce(mine, theirs, 2, MPI_LONG, MPI_SUM, parent);
        MPI_Comm_disconnect(&parent);
        if (use_counters) {
            pvar_families_close(&counters);
        }
        free_types();
        MPI_Finalize();
        return 0 == failures ? 0 : 1;
    }

    if (world_size >= 2) {
        struct side split, interleaved, resplit;
        int k = (world_size - 1) / 2 > 1 ? (world_size - 1) / 2 : 1;
        int low = world_rank < k, even = 0 == world_rank % 2;
        MPI_Comm merged;
        int mrank;

        make_side(&split, "split", MPI_COMM_WORLD, low ? 0 : 1, world_rank, low ? k : 0);
        make_side(&interleaved, "interleaved", MPI_COMM_WORLD, even ? 0 : 1,
                  even ? world_rank : -world_rank, even ? world_size - 1 - (world_size % 2) : 0);
        MPI_Intercomm_merge(split.comm, 0 == split.group, &merged);
        MPI_Comm_rank(merged, &mrank);
        make_side(&resplit, "re-split", merged, mrank % 2, mrank, 0 == mrank % 2 ? 1 : 0);

        run_side(&split);
        run_side(&interleaved);
        run_side(&resplit);
        MPI_Comm_free(&split.comm);
        MPI_Comm_free(&interleaved.comm);
        MPI_Comm_free(&resplit.comm);
        MPI_Comm_free(&merged);
    } else if (0 == world_rank) {
        fprintf(stderr, PROGRAM ": one rank: no intercommunicator to test\n");
    }

    if (spawn) {
        char **child_argv = calloc((size_t) argc, sizeof(char *));
        MPI_Comm children;
        struct side s;
        int n = 0, errcodes[2];
        long nothing[2] = {0, 0};

        for (int i = 1; i < argc; ++i) {
            if (0 != strcmp(argv[i], "--spawn")) {
                child_argv[n++] = argv[i];
            }
        }
        MPI_Comm_spawn(argv[0], child_argv, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &children,
                       errcodes);
        free(child_argv);
        side_of_comm(&s, children, "the parent-child intercommunicator", 0);
        other_job_cases(&s);
        MPI_Allreduce(nothing, theirs, 2, MPI_LONG, MPI_SUM, children);
        MPI_Comm_disconnect(&children);
    }

    if (NULL != own.accept || NULL != own.connect) {
        struct side s;
        MPI_Comm other = meet_other_job(own.accept, own.connect);

        side_of_comm(&s, other, "the intercommunicator to the connected job",
                     NULL != own.accept ? 0 : 1);
        other_job_cases(&s);
        MPI_Comm_disconnect(&other);
    }

    if (use_counters) {
        pvar_families_close(&counters);
    }
    free_types();
    snprintf(note, sizeof(note), "%s%s",
             spawn ? " and 2 spawned" : NULL != own.accept || NULL != own.connect ? " of one of two connected jobs" : "",
             break_reference ? "; COLL_INTERCOMM_BREAK=1 corrupted a reference" : "");
    /* Every parent heard the children's totals: rank 0 counts them. */
    return coll_program_finish(PROGRAM, checks + (0 == world_rank ? theirs[0] : 0),
                               failures + (0 == world_rank ? theirs[1] : 0), note);
}
