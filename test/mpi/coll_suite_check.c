/*
 * coll_suite: running a check (one collective call, or a batch of nonblocking
 * ones), its counter check and its comparison, and the failure lines.
 *
 * Between the two counter snapshots of a check there is only the call under test
 * and its completion (MPI_Wait, an MPI_Test loop or MPI_Waitall): buffers and
 * references are prepared before the first snapshot and compared after the second,
 * so collectives that MPI runs internally elsewhere are never counted.
 */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_suite.h"

long suite_checks, suite_failures;

/* Failure lines printed per process; the rest are counted but not printed. */
#define MAX_PRINTED_FAILURES 50
static int printed_failures;

enum path path_for(enum coll_id collective, int comm_size, const type_info *type, size_t count)
{
    return opt.delegate[collective] ? PATH_DELEGATED
                                    : expected_path(collective, comm_size, type, count);
}

void record_check(int ok)
{
    ++suite_checks;
    if (!ok) {
        ++suite_failures;
    }
}

static int world_rank(void)
{
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

static int may_print(void)
{
    if (printed_failures == MAX_PRINTED_FAILURES) {
        printf("coll_suite: [rank %d] more failures; not printing them\n", world_rank());
    }
    return printed_failures++ < MAX_PRINTED_FAILURES;
}

void report_plain_failure(const char *fmt, ...)
{
    va_list ap;

    if (!may_print()) {
        return;
    }
    printf("coll_suite: [rank %d] FAIL ", world_rank());
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void report_failure(const check *c, const char *fmt, ...)
{
    char root[16];
    va_list ap;

    if (!may_print()) {
        return;
    }
    if (c->root >= 0) {
        snprintf(root, sizeof(root), "%d", c->root);
    } else {
        snprintf(root, sizeof(root), "-");
    }
    printf("coll_suite: [rank %d] FAIL comm=%s(size %d, rank %d) coll=%s type=%s op=%s "
           "count=%zu root=%s in_place=%s%s%s: ",
           world_rank(), c->cx->name, c->cx->size, c->cx->rank, coll_names[c->coll],
           c->type ? c->type->name : "-", op_name(c->op), c->count, root,
           c->in_place ? "yes" : "no", c->variant ? " " : "", c->variant ? c->variant : "");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* ---- checks ---------------------------------------------------------------- */

static void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (NULL == q) {
        fprintf(stderr, "coll_suite: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return q;
}

check *check_new(enum coll_id coll, const comm_ctx *cx, const type_info *type, int op,
                 size_t count, int root, int in_place)
{
    check *c = xrealloc(NULL, sizeof(*c));

    memset(c, 0, sizeof(*c));
    c->coll = coll;
    c->cx = cx;
    c->type = type;
    c->op = op;
    c->count = count;
    c->root = root;
    c->in_place = in_place;
    c->req = MPI_REQUEST_NULL;
    return c;
}

void *check_alloc(check *c, size_t bytes)
{
    void *p = xrealloc(NULL, bytes);

    memset(p, 0, bytes ? bytes : 1);
    if (c->nallocs == c->cap_allocs) {
        c->cap_allocs = c->cap_allocs ? 2 * c->cap_allocs : 8;
        c->allocs = xrealloc(c->allocs, (size_t) c->cap_allocs * sizeof(*c->allocs));
    }
    c->allocs[c->nallocs++] = p;
    return p;
}

void check_region(check *c, const char *what, const void *got, void *want, size_t n,
                  const type_info *type, size_t elem_base)
{
    if (c->nregions == c->cap_regions) {
        c->cap_regions = c->cap_regions ? 2 * c->cap_regions : 4;
        c->regions = xrealloc(c->regions, (size_t) c->cap_regions * sizeof(*c->regions));
    }
    c->regions[c->nregions++] = (region){what, got, want, n, type, elem_base};
}

void check_free(check *c)
{
    for (int i = 0; i < c->nallocs; ++i) {
        free(c->allocs[i]);
    }
    free(c->allocs);
    free(c->regions);
    free(c);
}

/* ---- running --------------------------------------------------------------- */

static void report_mpi_error(const check *c, const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    MPI_Error_string(rc, msg, &len);
    report_failure(c, "%s returned error %d (%s)", what, rc, msg);
}

/* Adds the counter moves that call c should cause to expect. */
static void add_expected(const check *c, unsigned long long expect[NUM_PATHS])
{
    if (opt.expect_component) {
        expect[path_for(c->coll, c->cx->size, c->type, c->count)] += (unsigned long long) ompi_calls_coll(c);
    }
}

/* Checks the counters of c->coll moved as expected for `calls` calls. */
static void check_counters(const check *c, const unsigned long long before[NUM_PATHS],
                           const unsigned long long after[NUM_PATHS],
                           const unsigned long long expect[NUM_PATHS], int calls)
{
    int ok = 1;

    if (!counters_available()) {
        return;
    }
    for (int p = 0; p < NUM_PATHS; ++p) {
        ok = ok && after[p] - before[p] == expect[p];
    }
    record_check(ok);
    if (!ok) {
        report_failure(c, "counters for %d call%s, expected %s: coll_async_%s_native "
                       "+%llu (expected +%llu), coll_async_%s_delegated +%llu (expected +%llu)",
                       calls, 1 == calls ? "" : "s",
                       opt.expect_component ? "moves" : "none (component absent)",
                       coll_names[c->coll], after[PATH_NATIVE] - before[PATH_NATIVE],
                       expect[PATH_NATIVE], coll_names[c->coll],
                       after[PATH_DELEGATED] - before[PATH_DELEGATED], expect[PATH_DELEGATED]);
    }
}

/*
 * COLL_SUITE_BREAK_REFERENCE=1 is the hook that proves the harness can fail: the
 * first region with an element that this process compares gets one bit of its
 * expected first element flipped, so that check must report a failure.
 */
static int reference_broken;

static void compare_regions(check *c)
{
    int ok = 1;

    for (int i = 0; i < c->nregions && ok; ++i) {
        region *r = &c->regions[i];
        long bad;

        if (opt.break_reference && !reference_broken && r->n > 0) {
            ((unsigned char *) r->want)[0] ^= 1;
            reference_broken = 1;
        }
        bad = r->type->first_diff(r->want, r->got, r->n);
        if (bad >= 0) {
            char want[160], got[160];
            r->type->format((const char *) r->want + (size_t) bad * r->type->extent, want,
                            sizeof(want));
            r->type->format((const char *) r->got + (size_t) bad * r->type->extent, got,
                            sizeof(got));
            report_failure(c, "%s[%zu] (%s): expected %s, got %s", r->what,
                           r->elem_base + (size_t) bad, r->type->name, want, got);
            ok = 0;
        }
    }
    record_check(ok);
}

/* Completes a started nonblocking call, alternating MPI_Wait and MPI_Test loops. */
static int complete(check *c)
{
    static unsigned serial;
    int rc, flag = 0;

    if (0 == serial++ % 2) {
        return MPI_Wait(&c->req, MPI_STATUS_IGNORE);
    }
    do {
        rc = MPI_Test(&c->req, &flag, MPI_STATUS_IGNORE);
    } while (MPI_SUCCESS == rc && !flag);
    return rc;
}

void run_check(check *c)
{
    unsigned long long before[NUM_PATHS], after[NUM_PATHS];
    int rc;

    if (opt.verbose) {
        printf("coll_suite: [comm %s rank %d] %s %s %s count %zu root %d%s%s%s\n", c->cx->name,
               c->cx->rank, coll_names[c->coll], c->type ? c->type->name : "-",
               op_name(c->op), c->count, c->root, c->in_place ? " in place" : "",
               c->variant ? " " : "", c->variant ? c->variant : "");
        fflush(stdout);
    }

    counters_read(c->coll, before);
    rc = c->call(c);
    if (MPI_SUCCESS == rc && coll_is_nonblocking(c->coll)) {
        rc = complete(c);
    }
    counters_read(c->coll, after);

    if (MPI_SUCCESS != rc) {
        record_check(0);
        report_mpi_error(c, coll_is_nonblocking(c->coll) ? "the call or its completion"
                                                         : "the call", rc);
        return;
    }
    {
        unsigned long long expect[NUM_PATHS] = {0, 0};
        add_expected(c, expect);
        check_counters(c, before, after, expect, ompi_calls_coll(c));
    }
    compare_regions(c);
}

void run_batch(check **cs, int n)
{
    unsigned long long before[NUM_COLLS][NUM_PATHS], after[NUM_COLLS][NUM_PATHS];
    unsigned long long expect[NUM_COLLS][NUM_PATHS] = {{0}};
    int calls[NUM_COLLS] = {0}, present[NUM_COLLS] = {0};
    MPI_Request *reqs = xrealloc(NULL, (size_t) n * sizeof(*reqs));
    int rc, start_failed = 0;

    for (int i = 0; i < n; ++i) {
        calls[cs[i]->coll] += ompi_calls_coll(cs[i]);
        add_expected(cs[i], expect[cs[i]->coll]);
        present[cs[i]->coll] = 1;
    }
    for (int k = 0; k < NUM_COLLS; ++k) {
        if (present[k]) {
            counters_read((enum coll_id) k, before[k]);
        }
    }
    for (int i = 0; i < n; ++i) {
        rc = cs[i]->call(cs[i]);
        if (MPI_SUCCESS != rc) {
            start_failed = 1;
            record_check(0);
            report_mpi_error(cs[i], "starting the call (in a batch)", rc);
        }
        reqs[i] = cs[i]->req;
    }
    rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < NUM_COLLS; ++k) {
        if (present[k]) {
            counters_read((enum coll_id) k, after[k]);
        }
    }

    if (MPI_SUCCESS != rc) {
        record_check(0);
        report_mpi_error(cs[0], "MPI_Waitall over the batch", rc);
    } else if (!start_failed) {
        for (int k = 0; k < NUM_COLLS; ++k) {
            for (int i = 0; i < n && present[k]; ++i) {
                if ((int) cs[i]->coll == k) {
                    check_counters(cs[i], before[k], after[k], expect[k], calls[k]);
                    break;
                }
            }
        }
        for (int i = 0; i < n; ++i) {
            compare_regions(cs[i]);
        }
    }
    free(reqs);
}
