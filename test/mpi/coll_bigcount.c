/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_bigcount: collectives whose payload is past what 32 bits can count or
 * address, checked byte for byte, and (with the component) checked to have run
 * in coll/async itself.
 *
 *   mpirun -np 2 coll_bigcount [--expect-component=yes|no] [--only CASE[,CASE...]]
 *                              [--scale K] [--verbose] [--thread-multiple]
 *
 * Sized for 2 ranks; any number of ranks from 2 works where memory allows (the
 * per-rank buffers of allgather-c and reduce-scatter-block-c grow with it). Run
 * one such job at a time: at --scale 0 a case takes up to about 4.3 GiB of
 * buffers per rank, and Open MPI may add temporaries of its own.
 *
 * Cases (G = 2^30 bytes; "need" is what this program allocates per rank at 2
 * ranks and --scale 0; n is the number of ranks):
 *   bcast-derived      MPI_Bcast, count 1 of MPI_Type_contiguous(2^29 + 1, MPI_DOUBLE)
 *                      (4 G + 8 bytes), root 1. Need 4 G + 8 (4294967304 bytes).
 *   allreduce-derived  MPI_Allreduce, MPI_IN_PLACE, count 1 of the same type, with
 *                      a user-defined commutative sum of doubles: the predefined
 *                      MPI_SUM is defined only for predefined datatypes (MPI-4.1
 *                      6.9.2), and Open MPI 4.1 refuses it on a derived one with
 *                      MPI_ERR_OP. Values are integers below 2^32, so sums are
 *                      exact. Need 4 G + 8; the collective's algorithm may add
 *                      temporaries of the message's size (Open MPI 4.1's tuned:
 *                      another 4 G + 8 on rank 0).
 *   bcast-vector       MPI_Bcast, count 1 of MPI_Type_vector(2^28 + 1, 1, 2,
 *                      MPI_DOUBLE): size 2 G + 8, extent 4 G + 8 (holes between the
 *                      doubles, which must keep their sentinel everywhere), root 1.
 *                      Need 4 G + 8.
 *   bcast-c            MPI_Bcast_c, count 2^31 + 8 of MPI_BYTE, root 1. Need 2 G + 8.
 *   allreduce-c        MPI_Allreduce_c, MPI_IN_PLACE, count 2^31 + 8 of MPI_UINT8_T,
 *                      MPI_SUM. Need 2 G + 8.
 *   allgather-c        MPI_Allgather_c, MPI_IN_PLACE, 2^31 + 8 MPI_BYTE per rank.
 *                      Need n (2 G + 8) = 4 G + 16.
 *   reduce-scatter-block-c  MPI_Reduce_scatter_block_c, MPI_IN_PLACE, recvcount
 *                      2^31 + 8 of MPI_UINT8_T, MPI_SUM (rank 1's block starts past
 *                      2^31). Need n (2 G + 8) = 4 G + 16.
 *   allgatherv-c       MPI_Allgatherv_c, MPI_IN_PLACE, MPI_Count counts and MPI_Aint
 *                      displacements: the last rank's block is 2^31 + 8 MPI_BYTE,
 *                      rank r's otherwise 24 + r; the blocks lie in reverse rank
 *                      order, 8 sentinel bytes after each, so the last rank's big
 *                      block comes first and rank 0's lies past 2^31 (the counts
 *                      and a displacement both exceed INT_MAX). Need 2 G + 8 +
 *                      sum over r < n-1 of (24 + r + 8) + 8 = 2 G + 48 at 2 ranks.
 * The _c cases exist only where mpi.h has MPI-4's large-count functions (see
 * HAVE_LARGE_COUNT below): Open MPI 6 (MPI_VERSION 5 in 6.0.0rc2), not 4.1 or 5.0.
 *
 * Values: each 8 bytes of a block are a 64-bit hash of (their index in the
 * block, the rank that contributes them, the case), so a position i and the
 * positions i mod 2^32 and i mod 2^31 hold different values; an offset or a size
 * cut to 32 bits cannot pass. For the reductions the values are masked so the
 * sum over the ranks cannot overflow (bytes: to the largest 2^b - 1 with n (2^b -
 * 1) <= 255, 7 bits at 2 ranks; doubles: to 32 bits). The derived cases' doubles
 * are moved as raw bit patterns (bcast) or summed (allreduce).
 *
 * Checks, per case: the call returns MPI_SUCCESS (MPI_COMM_WORLD has
 * MPI_ERRORS_RETURN, so an error is reported, not fatal); every byte of every
 * rank's buffer matches its reference: received data, the root's unchanged data,
 * the sentinel in holes, gaps and blocks no one writes (the first wrong position
 * is reported with the expected and the found value and the rank); and with
 * --expect-component=yes (the default) coll/async's counter
 * coll_async_<collective>_native moved by exactly 1 and
 * coll_async_<collective>_delegated by 0 across the call. --expect-component=no
 * (runs without the component, e.g. --mca coll ^async) opens no counter. If a
 * buffer cannot be allocated on some rank, every rank skips the case and it
 * fails.
 *
 * Options: --only runs the named cases (default: all this build has); --scale K
 * divides every size by 2^K (2^29 + 1 doubles become 2^(29-K) + 1, 2^31 + 8 bytes
 * become 2^(31-K) + 8), to try the logic quickly (e.g. --scale 20); the real test
 * is --scale 0. --verbose says each call before it runs. Of the options every
 * coll_program takes, --max-count is accepted and ignored, and --forms has no
 * forms to name here (any list is refused).
 *
 * Output: one line per case on rank 0, "coll_bigcount: CASE: B bytes, buffer M
 * bytes per rank, T s: ok|FAILED" (B: the data a rank receives or reduces; T: the
 * call's slowest rank), then "coll_bigcount: N checks, F failures (R ranks)" and,
 * if no rank failed, "No Errors".
 *
 * COLL_BIGCOUNT_BREAK=1 in the environment flips a bit of the last byte each case
 * checks on the last rank, after the call (data past 2^31 or 2^32, or
 * allgatherv-c's last gap), so every case must fail.
 *
 * Open MPI 6.0.0rc2 alone (--mca coll ^async), 2 ranks, --scale 0: two cases die
 * of SIGSEGV inside coll/tuned's algorithms and pass at --scale 1 and with other
 * algorithms, so the bugs are Open MPI's: allreduce-c in reduce-scatter +
 * allgather (tuned's allreduce algorithm 6, its default there;
 * ompi_coll_base_allreduce_intra_redscat_allgather), reduce-scatter-block-c in
 * basic linear (1, the default: its reduce of 2^32 + 16 bytes dies in
 * ompi_coll_base_reduce_generic) and in recursive doubling (2). Ring allreduce (4)
 * and butterfly reduce-scatter-block (4) pass:
 *   mpirun -np 2 --mca coll ^async --mca coll_tuned_use_dynamic_rules 1 \
 *       --mca coll_tuned_allreduce_algorithm 4 \
 *       --mca coll_tuned_reduce_scatter_block_algorithm 4 coll_bigcount --expect-component=no
 *
 * Exit status: 0 when every check passed on every rank, 1 on any failure, 2 on a
 * bad argument (usage printed).
 */

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "coll_program.h"
#include "pvar_counter.h"

#define PROGRAM "coll_bigcount"
#define SENTINEL 0xA5          /* holes, gaps and blocks no rank writes */
#define UNRECEIVED 0x5A        /* where data must arrive, before it does */
#define GAP 8                  /* sentinel bytes after each allgatherv-c block */
#define MAX_SCALE 28

/*
 * MPI-4's large-count functions (MPI_Bcast_c, ...). mpi.h has no macro that says
 * it has them, so this goes by the MPI version it claims: Open MPI 4.1 and 5.0
 * say 3.1 (5.0 has MPI-4's persistent collectives, not the _c functions),
 * Open MPI 6.0 says 5.0 (and has them), as do MPICH 4 (4.0) and later. #ifdef
 * MPI_COUNT would not do: MPI_COUNT is MPI-3's datatype for MPI_Count, defined in
 * Open MPI 4.1 as well.
 */
#if MPI_VERSION >= 4
#define HAVE_LARGE_COUNT 1
#else
#define HAVE_LARGE_COUNT 0
#endif

/* --- state ---------------------------------------------------------------------- */

enum family { F_BCAST, F_ALLREDUCE, F_ALLGATHER, F_ALLGATHERV, F_REDUCE_SCATTER_BLOCK,
              NUM_FAMILIES };

static const char *const family_names[NUM_FAMILIES] = {
    "bcast", "allreduce", "allgather", "allgatherv", "reduce_scatter_block"};

static int world_rank, world_size, scale, use_counters, verbose, break_buffers;
static long checks, failures;
static MPI_T_pvar_session session;
static MPI_T_pvar_handle counter[NUM_FAMILIES][PVAR_PATHS];
static int counter_open[NUM_FAMILIES];

/* One case as it runs: what it moved and how it went, on this rank. */
struct run {
    const char *name;
    enum family family;
    uint64_t payload;  /* bytes a rank receives or reduces */
    uint64_t buffer;   /* bytes this rank allocated */
    double seconds;
    long failures;
    unsigned long long before[PVAR_PATHS];
    double start;
};

#define FAIL(r, ...)                                                                       \
    do {                                                                                   \
        fprintf(stderr, PROGRAM ": rank %d: FAIL %s: ", world_rank, (r)->name);            \
        fprintf(stderr, __VA_ARGS__);                                                      \
        fputc('\n', stderr);                                                               \
        ++(r)->failures;                                                                   \
    } while (0)

/* --- values --------------------------------------------------------------------- */

/* splitmix64's finalizer: a bijection of 64-bit words. */
static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The stream of rank `rank`'s data in case `salt` (for reduce-scatter-block-c,
 * also of the block it is for). */
static uint64_t stream_of(int salt, int rank, int block)
{
    return ((uint64_t) salt << 40) ^ ((uint64_t) (unsigned) rank << 20) ^ (uint64_t) block;
}

/* Word w (bytes 8w .. 8w+7) of a stream: a bijection of w for each stream (an
 * odd multiplier, then mix64: one mix per word, as 4 GiB take 2^29 of them). */
static inline uint64_t word_of(uint64_t stream, uint64_t w)
{
    return mix64((w * 0x9e3779b97f4a7c15ULL) ^ (stream << 1 | 1));
}

/* Byte i of a stream: byte i % 8 (little-end first) of word i / 8. */
static uint8_t byte_of(uint64_t stream, uint64_t i)
{
    return (uint8_t) (word_of(stream, i >> 3) >> (8 * (i & 7)));
}

static void store_word(uint8_t *p, uint64_t v)
{
    for (int k = 0; k < 8; ++k) {
        p[k] = (uint8_t) (v >> (8 * k));
    }
}

static uint64_t load_word(const uint8_t *p)
{
    uint64_t v = 0;

    for (int k = 0; k < 8; ++k) {
        v |= (uint64_t) p[k] << (8 * k);
    }
    return v;
}

/* Every byte of a mask of bytes: 0x7f -> 0x7f7f7f7f7f7f7f7f. */
static uint64_t bytes_mask(uint8_t mask)
{
    return 0x0101010101010101ULL * mask;
}

/* Bytes 0 .. n-1 of a stream, each masked. */
static void fill_stream(uint8_t *buf, uint64_t n, uint64_t stream, uint8_t mask)
{
    const uint64_t m = bytes_mask(mask);
    uint64_t i = 0;

    for (; i + 8 <= n; i += 8) {
        store_word(buf + i, word_of(stream, i >> 3) & m);
    }
    for (; i < n; ++i) {
        buf[i] = byte_of(stream, i) & mask;
    }
}

/*
 * Whether bytes 0 .. n-1 of buf are the sum of the nstreams streams' masked
 * bytes (one stream, mask 0xff: the stream itself); the masks keep every byte's
 * sum below 256, so words add without carries between bytes. Reports the first
 * wrong byte.
 */
static int check_streams(struct run *r, const char *what, const uint8_t *buf, uint64_t n,
                         const uint64_t *streams, int nstreams, uint8_t mask)
{
    const uint64_t m = bytes_mask(mask);
    uint64_t i = 0, wrong = 0, first = 0;
    uint8_t want_first = 0, got_first = 0;

    ++checks;
    for (; i < n; i += 8) {
        uint8_t want[8];
        uint64_t sum = 0, len = n - i < 8 ? n - i : 8;

        for (int s = 0; s < nstreams; ++s) {
            sum += word_of(streams[s], i >> 3) & m;
        }
        store_word(want, sum);
        if (8 == len && load_word(buf + i) == sum) {
            continue;
        }
        for (uint64_t k = 0; k < len; ++k) {
            if (buf[i + k] != want[k]) {
                if (0 == wrong++) {
                    first = i + k;
                    want_first = want[k];
                    got_first = buf[i + k];
                }
            }
        }
    }
    if (wrong > 0) {
        FAIL(r, "%s: %llu of %llu bytes wrong; the first, byte %llu of it, is 0x%02X, "
             "expected 0x%02X", what, (unsigned long long) wrong, (unsigned long long) n,
             (unsigned long long) first, got_first, want_first);
        return 0;
    }
    return 1;
}

static int check_stream(struct run *r, const char *what, const uint8_t *buf, uint64_t n,
                        uint64_t stream)
{
    return check_streams(r, what, buf, n, &stream, 1, 0xff);
}

/* --- the frame of a case -------------------------------------------------------- */

/* Allocates bytes; NULL (said) when that fails. One region serves every case,
 * each taking it again here and none freeing it: first touches of 4 GiB cost seconds of kernel time in a
 * virtual machine, once per run instead of once per case. Huge pages where the
 * kernel gives them on request, for the same reason. */
static void *region;
static size_t region_bytes;

static void *big_alloc(struct run *r, uint64_t bytes)
{
    enum { HUGE_PAGE = 2 << 20 };

    if (bytes > region_bytes) {
        free(region);
        region = NULL, region_bytes = 0;
        if (bytes <= SIZE_MAX && 0 == posix_memalign(&region, HUGE_PAGE, (size_t) bytes)) {
            (void) madvise(region, (size_t) bytes, MADV_HUGEPAGE);
            region_bytes = (size_t) bytes;
        }
    }
    if (NULL == region) {
        FAIL(r, "cannot allocate %llu bytes (%.2f GiB)", (unsigned long long) bytes,
             (double) bytes / (1 << 30));
        return NULL;
    }
    r->buffer += bytes;
    return region;
}

/* Whether every rank has its buffers (p non-NULL); if not, every rank skips the
 * case, so none waits in a collective the others do not call. */
static int all_have(struct run *r, const void *p)
{
    int mine = NULL != p, all;

    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all && NULL != p) {
        FAIL(r, "skipped: another rank could not allocate its buffer");
    }
    return all;
}

static void read_counters(enum family f, unsigned long long out[PVAR_PATHS])
{
    for (int p = 0; p < PVAR_PATHS; ++p) {
        out[p] = use_counters ? pvar_counter_read(session, counter[f][p]) : 0;
    }
}

/* Right before the call: all ranks there, the counters read, the clock started. */
static void call_begins(struct run *r, const char *call)
{
    if (verbose) {
        fprintf(stderr, PROGRAM ": rank %d: %s: %s\n", world_rank, r->name, call);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    read_counters(r->family, r->before);
    r->start = MPI_Wtime();
}

/* Right after the call: the time, its return code, the counters' moves. */
static void call_ends(struct run *r, const char *call, int rc)
{
    unsigned long long now[PVAR_PATHS];

    r->seconds = MPI_Wtime() - r->start;
    read_counters(r->family, now);
    ++checks;
    if (MPI_SUCCESS != rc) {
        char message[MPI_MAX_ERROR_STRING];
        int len = 0;

        MPI_Error_string(rc, message, &len);
        FAIL(r, "%s returned %d: %s", call, rc, message);
    }
    if (!use_counters) {
        return;
    }
    for (int p = 0; p < PVAR_PATHS; ++p) {
        unsigned long long want = PVAR_PATH_NATIVE == p ? 1 : 0;

        ++checks;
        if (now[p] - r->before[p] != want) {
            FAIL(r, "counter coll_async_%s_%s moved by %llu, expected %llu",
                 family_names[r->family], PVAR_PATH_NATIVE == p ? "native" : "delegated",
                 now[p] - r->before[p], want);
        }
    }
}

/* COLL_BIGCOUNT_BREAK=1: on the last rank, byte n - 1 of buf corrupted. */
static void maybe_break(void *buf, uint64_t n)
{
    if (break_buffers && world_size - 1 == world_rank && n > 0) {
        ((uint8_t *) buf)[n - 1] ^= 1;
    }
}

/* --- the cases -------------------------------------------------------------------- */

/* Scaled sizes: 2^e / 2^scale + plus. */
static uint64_t scaled(int e, uint64_t plus)
{
    return ((uint64_t) 1 << e >> scale) + plus;
}

static int bcast_root(void)
{
    return 1 % world_size;
}

/* bcast-derived: count 1 of 2^29 + 1 contiguous doubles, moved as bit patterns. */
static void case_bcast_derived(struct run *r, int salt)
{
    const uint64_t ndoubles = scaled(29, 1), bytes = ndoubles * 8;
    const int root = bcast_root();
    const uint64_t stream = stream_of(salt, root, 0);
    MPI_Datatype type;
    uint8_t *buf;
    int rc;

    r->payload = bytes;
    buf = big_alloc(r, bytes);
    if (!all_have(r, buf)) {
        return;
    }
    MPI_Type_contiguous((int) ndoubles, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    if (root == world_rank) {
        fill_stream(buf, bytes, stream, 0xff);
    } else {
        memset(buf, UNRECEIVED, bytes);
    }
    call_begins(r, "MPI_Bcast");
    rc = MPI_Bcast(buf, 1, type, root, MPI_COMM_WORLD);
    call_ends(r, "MPI_Bcast", rc);
    maybe_break(buf, bytes);
    check_stream(r, root == world_rank ? "the root's buffer (must not change)" : "received data",
                 buf, bytes, stream);
    MPI_Type_free(&type);
}

/* allreduce-derived's operation: a sum of doubles over elements of type
 * sum_type (sum_doubles doubles each) or of MPI_DOUBLE. */
static MPI_Datatype sum_type = MPI_DATATYPE_NULL;
static uint64_t sum_doubles;
static long sum_bad_type;

static void sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const double *a = in;
    double *b = inout;
    uint64_t n;

    if (*type == sum_type) {
        n = (uint64_t) *len * sum_doubles;
    } else if (*type == MPI_DOUBLE) {
        n = (uint64_t) *len;
    } else {
        ++sum_bad_type;
        return;
    }
    for (uint64_t i = 0; i < n; ++i) {
        b[i] += a[i];
    }
}

/* The value rank `rank` contributes at double j: an integer below 2^32. */
static double double_of(uint64_t stream, uint64_t j)
{
    return (double) (word_of(stream, j) & 0xffffffffULL);
}

/* allreduce-derived: count 1 of 2^29 + 1 contiguous doubles, in place, summed. */
static void case_allreduce_derived(struct run *r, int salt)
{
    const uint64_t ndoubles = scaled(29, 1), bytes = ndoubles * 8;
    MPI_Op op;
    double *buf;
    uint64_t wrong = 0, first = 0;
    double want_first = 0, got_first = 0;
    int rc;

    r->payload = bytes;
    buf = big_alloc(r, bytes);
    if (!all_have(r, buf)) {
        return;
    }
    MPI_Type_contiguous((int) ndoubles, MPI_DOUBLE, &sum_type);
    MPI_Type_commit(&sum_type);
    sum_doubles = ndoubles;
    sum_bad_type = 0;
    MPI_Op_create(sum_op, 1, &op);
    for (uint64_t j = 0; j < ndoubles; ++j) {
        buf[j] = double_of(stream_of(salt, world_rank, 0), j);
    }
    call_begins(r, "MPI_Allreduce");
    rc = MPI_Allreduce(MPI_IN_PLACE, buf, 1, sum_type, op, MPI_COMM_WORLD);
    call_ends(r, "MPI_Allreduce", rc);
    maybe_break(buf, bytes);
    ++checks;
    if (0 != sum_bad_type) {
        FAIL(r, "the operation was called %ld times with a datatype that is neither the "
             "call's nor MPI_DOUBLE", sum_bad_type);
    }
    ++checks;
    for (uint64_t j = 0; j < ndoubles; ++j) {
        double want = 0;

        for (int s = 0; s < world_size; ++s) {
            want += double_of(stream_of(salt, s, 0), j);
        }
        if (buf[j] != want && 0 == wrong++) {
            first = j;
            want_first = want;
            got_first = buf[j];
        }
    }
    if (wrong > 0) {
        FAIL(r, "result: %llu of %llu doubles wrong; the first, double %llu (byte %llu), is "
             "%.17g, expected %.17g", (unsigned long long) wrong, (unsigned long long) ndoubles,
             (unsigned long long) first, (unsigned long long) first * 8, got_first, want_first);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&sum_type);
}

/* bcast-vector: count 1 of 2^28 + 1 doubles with a double's hole after each but
 * the last. Element j's 8 bytes are word j of the root's stream. */
static void case_bcast_vector(struct run *r, int salt)
{
    const uint64_t nelems = scaled(28, 1), span = (2 * nelems - 1) * 8;
    const int root = bcast_root();
    const uint64_t stream = stream_of(salt, root, 0);
    const uint64_t hole_word = bytes_mask(SENTINEL), empty_word = bytes_mask(UNRECEIVED);
    uint64_t wrong_data = 0, first_data = 0, wrong_holes = 0, first_hole = 0;
    uint64_t want_data = 0, got_data = 0, got_hole = 0;
    MPI_Datatype type;
    uint8_t *buf;
    int rc;

    r->payload = nelems * 8;
    buf = big_alloc(r, span);
    if (!all_have(r, buf)) {
        return;
    }
    MPI_Type_vector((int) nelems, 1, 2, MPI_DOUBLE, &type);
    MPI_Type_commit(&type);
    for (uint64_t j = 0; j < nelems; ++j) {
        store_word(buf + 16 * j, root == world_rank ? word_of(stream, j) : empty_word);
        if (j + 1 < nelems) {
            store_word(buf + 16 * j + 8, hole_word);
        }
    }
    call_begins(r, "MPI_Bcast");
    rc = MPI_Bcast(buf, 1, type, root, MPI_COMM_WORLD);
    call_ends(r, "MPI_Bcast", rc);
    maybe_break(buf, span);
    checks += 2;
    for (uint64_t j = 0; j < nelems; ++j) {
        uint64_t got = load_word(buf + 16 * j), want = word_of(stream, j);

        if (got != want && 0 == wrong_data++) {
            first_data = j;
            want_data = want;
            got_data = got;
        }
        if (j + 1 < nelems && (got = load_word(buf + 16 * j + 8)) != hole_word
            && 0 == wrong_holes++) {
            first_hole = j;
            got_hole = got;
        }
    }
    if (wrong_data > 0) {
        FAIL(r, "%s: %llu of %llu doubles wrong; the first, element %llu (byte %llu), is "
             "0x%016llx, expected 0x%016llx",
             root == world_rank ? "the root's buffer (must not change)" : "received data",
             (unsigned long long) wrong_data, (unsigned long long) nelems,
             (unsigned long long) first_data, (unsigned long long) first_data * 16,
             (unsigned long long) got_data, (unsigned long long) want_data);
    }
    if (wrong_holes > 0) {
        FAIL(r, "holes: %llu of %llu changed; the first, after element %llu (byte %llu), is "
             "0x%016llx, expected 0x%016llx", (unsigned long long) wrong_holes,
             (unsigned long long) nelems - 1, (unsigned long long) first_hole,
             (unsigned long long) first_hole * 16 + 8, (unsigned long long) got_hole,
             (unsigned long long) hole_word);
    }
    MPI_Type_free(&type);
}

#if HAVE_LARGE_COUNT

/* The largest 2^b - 1 whose sum over the ranks fits a byte (0 past 255 ranks). */
static uint8_t byte_sum_mask(void)
{
    unsigned m = 255;

    while (m > 0 && m * (unsigned) world_size > 255) {
        m >>= 1;
    }
    return (uint8_t) m;
}

/* Whether bytes 0 .. n-1 of buf all are `value`; reports the first that is not. */
static int check_constant(struct run *r, const char *what, const uint8_t *buf, uint64_t n,
                          uint8_t value)
{
    uint64_t wrong = 0, first = 0;

    ++checks;
    for (uint64_t i = 0; i < n; ++i) {
        if (buf[i] != value && 0 == wrong++) {
            first = i;
        }
    }
    if (wrong > 0) {
        FAIL(r, "%s: %llu of %llu bytes changed; the first, byte %llu of it, is 0x%02X, "
             "expected 0x%02X", what, (unsigned long long) wrong, (unsigned long long) n,
             (unsigned long long) first, buf[first], value);
        return 0;
    }
    return 1;
}

/* bcast-c: 2^31 + 8 MPI_BYTE. */
static void case_bcast_c(struct run *r, int salt)
{
    const uint64_t count = scaled(31, 8);
    const int root = bcast_root();
    const uint64_t stream = stream_of(salt, root, 0);
    uint8_t *buf;
    int rc;

    r->payload = count;
    buf = big_alloc(r, count);
    if (!all_have(r, buf)) {
        return;
    }
    if (root == world_rank) {
        fill_stream(buf, count, stream, 0xff);
    } else {
        memset(buf, UNRECEIVED, count);
    }
    call_begins(r, "MPI_Bcast_c");
    rc = MPI_Bcast_c(buf, (MPI_Count) count, MPI_BYTE, root, MPI_COMM_WORLD);
    call_ends(r, "MPI_Bcast_c", rc);
    maybe_break(buf, count);
    check_stream(r, root == world_rank ? "the root's buffer (must not change)" : "received data",
                 buf, count, stream);
}

/* The streams of block `block` of every rank, for the sums. */
static uint64_t *all_streams(struct run *r, int salt, int block)
{
    uint64_t *streams = malloc((size_t) world_size * sizeof(*streams));

    if (NULL == streams) {
        FAIL(r, "out of memory");
        return NULL;
    }
    for (int s = 0; s < world_size; ++s) {
        streams[s] = stream_of(salt, s, block);
    }
    return streams;
}

/* allreduce-c: 2^31 + 8 MPI_UINT8_T, in place, MPI_SUM. */
static void case_allreduce_c(struct run *r, int salt)
{
    const uint64_t count = scaled(31, 8);
    const uint8_t mask = byte_sum_mask();
    uint64_t *streams = all_streams(r, salt, 0);
    uint8_t *buf;
    int rc;

    r->payload = count;
    buf = NULL != streams ? big_alloc(r, count) : NULL;
    if (!all_have(r, buf)) {
        free(streams);
        return;
    }
    fill_stream(buf, count, streams[world_rank], mask);
    call_begins(r, "MPI_Allreduce_c");
    rc = MPI_Allreduce_c(MPI_IN_PLACE, buf, (MPI_Count) count, MPI_UINT8_T, MPI_SUM,
                         MPI_COMM_WORLD);
    call_ends(r, "MPI_Allreduce_c", rc);
    maybe_break(buf, count);
    check_streams(r, "result", buf, count, streams, world_size, mask);
    free(streams);
}

/* allgather-c: 2^31 + 8 MPI_BYTE per rank, in place. */
static void case_allgather_c(struct run *r, int salt)
{
    const uint64_t count = scaled(31, 8), total = count * (uint64_t) world_size;
    uint8_t *buf;
    int rc;

    r->payload = total;
    buf = big_alloc(r, total);
    if (!all_have(r, buf)) {
        return;
    }
    for (int s = 0; s < world_size; ++s) {
        if (s == world_rank) {
            fill_stream(buf + count * (uint64_t) s, count, stream_of(salt, s, 0), 0xff);
        } else {
            memset(buf + count * (uint64_t) s, UNRECEIVED, count);
        }
    }
    call_begins(r, "MPI_Allgather_c");
    rc = MPI_Allgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, (MPI_Count) count, MPI_BYTE,
                         MPI_COMM_WORLD);
    call_ends(r, "MPI_Allgather_c", rc);
    maybe_break(buf, total);
    for (int s = 0; s < world_size; ++s) {
        char what[64];

        snprintf(what, sizeof(what), "block of rank %d (at byte %llu)", s,
                 (unsigned long long) (count * (uint64_t) s));
        check_stream(r, what, buf + count * (uint64_t) s, count, stream_of(salt, s, 0));
    }
}

/* reduce-scatter-block-c: recvcount 2^31 + 8 MPI_UINT8_T, in place, MPI_SUM. Block b
 * of rank s is stream (s, b); rank r's result is the sum of the ranks' block r. */
static void case_reduce_scatter_block_c(struct run *r, int salt)
{
    const uint64_t count = scaled(31, 8), total = count * (uint64_t) world_size;
    const uint8_t mask = byte_sum_mask();
    uint64_t *streams = all_streams(r, salt, world_rank);
    uint8_t *buf;
    int rc;

    r->payload = total;
    buf = NULL != streams ? big_alloc(r, total) : NULL;
    if (!all_have(r, buf)) {
        free(streams);
        return;
    }
    for (int b = 0; b < world_size; ++b) {
        fill_stream(buf + count * (uint64_t) b, count, stream_of(salt, world_rank, b), mask);
    }
    call_begins(r, "MPI_Reduce_scatter_block_c");
    rc = MPI_Reduce_scatter_block_c(MPI_IN_PLACE, buf, (MPI_Count) count, MPI_UINT8_T, MPI_SUM,
                                    MPI_COMM_WORLD);
    call_ends(r, "MPI_Reduce_scatter_block_c", rc);
    maybe_break(buf, count);
    check_streams(r, "result (the first recvcount bytes)", buf, count, streams, world_size,
                  mask);
    free(streams);
}

/* allgatherv-c: the last rank's block 2^31 + 8 bytes, rank r's otherwise 24 + r,
 * in reverse rank order with GAP sentinel bytes after each, in place. */
static void case_allgatherv_c(struct run *r, int salt)
{
    MPI_Count *counts = malloc((size_t) world_size * sizeof(*counts));
    MPI_Aint *displs = malloc((size_t) world_size * sizeof(*displs));
    uint64_t total = 0, payload = 0;
    uint8_t *buf = NULL;
    int rc;

    if (NULL == counts || NULL == displs) {
        FAIL(r, "out of memory");
    } else {
        for (int s = world_size - 1; s >= 0; --s) {
            counts[s] = (MPI_Count) (s == world_size - 1 ? scaled(31, 8) : 24 + (uint64_t) s);
            displs[s] = (MPI_Aint) total;
            total += (uint64_t) counts[s] + GAP;
            payload += (uint64_t) counts[s];
        }
        r->payload = payload;
        buf = big_alloc(r, total);
    }
    if (!all_have(r, buf)) {
        free(counts);
        free(displs);
        return;
    }
    memset(buf, SENTINEL, total);
    for (int s = 0; s < world_size; ++s) {
        if (s == world_rank) {
            fill_stream(buf + displs[s], (uint64_t) counts[s], stream_of(salt, s, 0), 0xff);
        } else {
            memset(buf + displs[s], UNRECEIVED, (size_t) counts[s]);
        }
    }
    call_begins(r, "MPI_Allgatherv_c");
    rc = MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs, MPI_BYTE,
                          MPI_COMM_WORLD);
    call_ends(r, "MPI_Allgatherv_c", rc);
    maybe_break(buf, total);
    for (int s = 0; s < world_size; ++s) {
        char what[96];

        snprintf(what, sizeof(what), "block of rank %d (%lld bytes at byte %lld)", s,
                 (long long) counts[s], (long long) displs[s]);
        check_stream(r, what, buf + displs[s], (uint64_t) counts[s], stream_of(salt, s, 0));
        snprintf(what, sizeof(what), "gap after the block of rank %d (at byte %lld)", s,
                 (long long) (displs[s] + counts[s]));
        check_constant(r, what, buf + displs[s] + counts[s], GAP, SENTINEL);
    }
    free(counts);
    free(displs);
}

#endif /* HAVE_LARGE_COUNT */

/* --- main ------------------------------------------------------------------------- */

struct bigcase {
    const char *name;
    enum family family;
    void (*run)(struct run *r, int salt); /* NULL: not in this build */
};

#if HAVE_LARGE_COUNT
#define LARGE_COUNT_CASE(fn) fn
#else
#define LARGE_COUNT_CASE(fn) NULL
#endif

static const struct bigcase cases[] = {
    {"bcast-derived", F_BCAST, case_bcast_derived},
    {"allreduce-derived", F_ALLREDUCE, case_allreduce_derived},
    {"bcast-vector", F_BCAST, case_bcast_vector},
    {"bcast-c", F_BCAST, LARGE_COUNT_CASE(case_bcast_c)},
    {"allreduce-c", F_ALLREDUCE, LARGE_COUNT_CASE(case_allreduce_c)},
    {"allgather-c", F_ALLGATHER, LARGE_COUNT_CASE(case_allgather_c)},
    {"reduce-scatter-block-c", F_REDUCE_SCATTER_BLOCK,
     LARGE_COUNT_CASE(case_reduce_scatter_block_c)},
    {"allgatherv-c", F_ALLGATHERV, LARGE_COUNT_CASE(case_allgatherv_c)},
};
#define NUM_CASES ((int) (sizeof(cases) / sizeof(cases[0])))

static const char *case_names[NUM_CASES];
static int case_enabled[NUM_CASES];
static int only_given;

/* The program's own options: --only LIST, --scale K. */
static int read_own(int argc, char **argv, int i, void *context)
{
    char *end;
    long k;

    (void) context;
    if (i + 1 < argc && 0 == strcmp(argv[i], "--only")) {
        only_given = 1;
        return coll_program_list(argv[i + 1], case_names, NUM_CASES, case_enabled) ? 2 : 0;
    }
    if (i + 1 < argc && 0 == strcmp(argv[i], "--scale")) {
        k = strtol(argv[i + 1], &end, 10);
        if ('\0' == argv[i + 1][0] || '\0' != *end || k < 0 || k > MAX_SCALE) {
            return 0;
        }
        scale = (int) k;
        return 2;
    }
    return 0;
}

static void open_counters(void)
{
    int provided;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_T_pvar_session_create(&session);
    for (int c = 0; c < NUM_CASES; ++c) {
        enum family f = cases[c].family;

        if (!case_enabled[c] || counter_open[f]) {
            continue;
        }
        for (int p = 0; p < PVAR_PATHS; ++p) {
            char name[96];

            snprintf(name, sizeof(name), "coll_async_%s_%s", family_names[f],
                     PVAR_PATH_NATIVE == p ? "native" : "delegated");
            counter[f][p] = pvar_counter(session, name, PROGRAM);
        }
        counter_open[f] = 1;
    }
}

static void close_counters(void)
{
    for (int f = 0; f < NUM_FAMILIES; ++f) {
        for (int p = 0; counter_open[f] && p < PVAR_PATHS; ++p) {
            MPI_T_pvar_handle_free(session, &counter[f][p]);
        }
    }
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    struct coll_program_options opt = {.use_counters = 1, .max_count = -1};
    int status;

    for (int c = 0; c < NUM_CASES; ++c) {
        case_names[c] = cases[c].name;
        case_enabled[c] = NULL != cases[c].run;
    }
    if (!coll_program_start(PROGRAM, "[--only CASE[,CASE...]] [--scale K (0 to 28)]", &argc,
                            &argv, &opt, read_own, NULL)) {
        return 2;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    use_counters = opt.use_counters;
    verbose = opt.verbose;
    break_buffers = coll_program_break("COLL_BIGCOUNT_BREAK");
    if (world_size < 2) {
        if (0 == world_rank) {
            fprintf(stderr, PROGRAM ": needs at least 2 ranks\n");
        }
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (0 == world_rank) {
        printf(PROGRAM ": %d ranks, scale %d (sizes / 2^%d), MPI %d.%d%s\n", world_size, scale,
               scale, MPI_VERSION, MPI_SUBVERSION,
               HAVE_LARGE_COUNT ? "" : ": no large-count (_c) functions, those cases skipped");
    }
    for (int c = 0; c < NUM_CASES; ++c) {
        if (case_enabled[c] && NULL == cases[c].run) {
            if (0 == world_rank && only_given) {
                printf(PROGRAM ": %s: skipped, needs MPI-4's large-count functions\n",
                       cases[c].name);
            }
            case_enabled[c] = 0;
        }
    }
    if (use_counters) {
        open_counters();
    }

    for (int c = 0; c < NUM_CASES; ++c) {
        struct run r = {.name = cases[c].name, .family = cases[c].family};
        double mine[2], all[2];

        if (!case_enabled[c]) {
            continue;
        }
        cases[c].run(&r, c + 1);
        failures += r.failures;
        mine[0] = r.seconds;
        mine[1] = (double) r.failures;
        MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (0 == world_rank) {
            printf(PROGRAM ": %s: %llu bytes, buffer %llu bytes per rank, %.3f s: %s\n",
                   r.name, (unsigned long long) r.payload, (unsigned long long) r.buffer,
                   all[0], 0 == all[1] ? "ok" : "FAILED");
            fflush(stdout);
        }
    }

    free(region);
    if (use_counters) {
        close_counters();
    }
    status = coll_program_finish(PROGRAM, checks, failures,
                                 break_buffers ? "; COLL_BIGCOUNT_BREAK=1 corrupted the buffers"
                                               : "");
    if (0 == world_rank && 0 == status) {
        printf("No Errors\n");
    }
    return status;
}
