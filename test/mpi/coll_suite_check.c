/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll_suite: running a check (one collective call, or a batch of nonblocking
 * ones, or persistent requests started several times), its counter check and its
 * comparison, and the failure lines.
 *
 * Between the two counter snapshots of a check there is only the call under test
 * and its completion (MPI_Wait, an MPI_Test loop or MPI_Waitall): buffers and
 * references are prepared before the first snapshot and compared after the second,
 * so collectives that MPI runs internally elsewhere are never counted. A
 * persistent check has one window around the creation of its request (which no
 * counter may count) and one around each MPI_Start (or MPI_Startall) and its
 * completion (counted once per start).
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

enum path path_for(const check *c)
{
    return opt.delegate[c->coll] ? PATH_DELEGATED : expected_path(c);
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
    char root[16], start[32];
    va_list ap;

    if (!may_print()) {
        return;
    }
    if (c->root >= 0) {
        snprintf(root, sizeof(root), "%d", c->root);
    } else {
        snprintf(root, sizeof(root), "-");
    }
    if (c->start > 0) {
        snprintf(start, sizeof(start), " (start %d of %d)", c->start, PERSISTENT_STARTS);
    } else {
        start[0] = '\0';
    }
    printf("coll_suite: [rank %d] FAIL comm=%s(size %d, rank %d) coll=%s%s type=%s op=%s "
           "count=%zu root=%s in_place=%s%s%s: ",
           world_rank(), c->cx->name, c->cx->size, c->cx->rank, coll_names[c->coll], start,
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
        c->alloc_sizes = xrealloc(c->alloc_sizes,
                                  (size_t) c->cap_allocs * sizeof(*c->alloc_sizes));
    }
    c->alloc_sizes[c->nallocs] = bytes;
    c->allocs[c->nallocs++] = p;
    return p;
}

/* The size check_alloc() gave p; 0 for NULL. */
static size_t alloc_size(const check *c, const void *p)
{
    if (NULL == p) {
        return 0;
    }
    for (int i = 0; i < c->nallocs; ++i) {
        if (c->allocs[i] == p) {
            return c->alloc_sizes[i];
        }
    }
    fprintf(stderr, "coll_suite: internal error: a buffer not from check_alloc()\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 0;
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
    free(c->alloc_sizes);
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
        expect[path_for(c)] += (unsigned long long) ompi_calls_coll(c);
    }
}

/* The counters of the collectives of a set of checks, read when the window opens
 * and when it closes, and the moves expected in between. */
typedef struct window {
    unsigned long long before[NUM_COLLS][NUM_PATHS], expect[NUM_COLLS][NUM_PATHS];
    int calls[NUM_COLLS], present[NUM_COLLS];
} window;

/* Which of the calls in a window count. A persistent collective counts where its
 * work is decided: a native one at each start, a delegated one once, when the
 * request is created (the component below owns the starts). */
enum counting {
    COUNT_ALL,       /* blocking and nonblocking calls */
    COUNT_CREATION,  /* persistent requests being created: the delegated ones */
    COUNT_START      /* persistent requests being started: the native ones */
};

static int counts(const check *c, enum counting counting)
{
    switch (counting) {
    case COUNT_CREATION:
        return PATH_DELEGATED == path_for(c);
    case COUNT_START:
        return PATH_NATIVE == path_for(c);
    default:
        return 1;
    }
}

/* Opens a window around what the caller runs next for checks cs. */
static void window_open(window *w, check *const *cs, int n, enum counting counting)
{
    memset(w, 0, sizeof(*w));
    for (int i = 0; i < n; ++i) {
        w->present[cs[i]->coll] = 1;
        if (counts(cs[i], counting)) {
            w->calls[cs[i]->coll] += ompi_calls_coll(cs[i]);
            add_expected(cs[i], w->expect[cs[i]->coll]);
        }
    }
    for (int k = 0; k < NUM_COLLS; ++k) {
        if (w->present[k]) {
            counters_read((enum coll_id) k, w->before[k]);
        }
    }
}

/* Closes the window: each collective's counters must have moved by the expected
 * amounts. */
static void window_close(window *w, check *const *cs, int n)
{
    for (int k = 0; k < NUM_COLLS; ++k) {
        unsigned long long after[NUM_PATHS];
        const check *c = NULL;
        char what[160];
        int ok = 1;

        if (!w->present[k] || !counters_available()) {
            continue;
        }
        counters_read((enum coll_id) k, after);
        for (int p = 0; p < NUM_PATHS; ++p) {
            ok = ok && after[p] - w->before[k][p] == w->expect[k][p];
        }
        record_check(ok);
        if (ok) {
            continue;
        }
        for (int i = 0; i < n && NULL == c; ++i) {
            c = (int) cs[i]->coll == k ? cs[i] : NULL;
        }
        snprintf(what, sizeof(what), "for %d call%s, expected %s", w->calls[k],
                 1 == w->calls[k] ? "" : "s",
                 opt.expect_component ? "moves" : "none (component absent)");
        report_failure(c, "counters %s: coll_async_%s_native +%llu (expected +%llu), "
                       "coll_async_%s_delegated +%llu (expected +%llu)",
                       what, coll_names[k], after[PATH_NATIVE] - w->before[k][PATH_NATIVE],
                       w->expect[k][PATH_NATIVE], coll_names[k],
                       after[PATH_DELEGATED] - w->before[k][PATH_DELEGATED],
                       w->expect[k][PATH_DELEGATED]);
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

/* Completes an active request, alternating MPI_Wait and MPI_Test loops. */
static int complete(MPI_Request *req)
{
    static unsigned serial;
    int rc, flag = 0;

    if (0 == serial++ % 2) {
        return MPI_Wait(req, MPI_STATUS_IGNORE);
    }
    do {
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    } while (MPI_SUCCESS == rc && !flag);
    return rc;
}

static void print_check(const check *c)
{
    printf("coll_suite: [comm %s rank %d] %s %s %s count %zu root %d%s%s%s\n", c->cx->name,
           c->cx->rank, coll_names[c->coll], c->type ? c->type->name : "-", op_name(c->op),
           c->count, c->root, c->in_place ? " in place" : "", c->variant ? " " : "",
           c->variant ? c->variant : "");
    fflush(stdout);
}

/* Copies the send and receive buffers of src into those of dst, which the same
 * builder made with the same arguments, so they have the same sizes. */
static void copy_buffers(check *dst, const check *src)
{
    void *const d[2] = {dst->sbuf, dst->rbuf};
    const void *const s[2] = {src->sbuf, src->rbuf};

    for (int i = 0; i < 2; ++i) {
        size_t bytes = alloc_size(src, s[i]);
        if (bytes != alloc_size(dst, d[i])) {
            fprintf(stderr, "coll_suite: internal error: %s rebuilt with another layout\n",
                    coll_names[src->coll]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (bytes > 0) {
            memcpy(d[i], s[i], bytes);
        }
    }
}

/* The check of start `start` (1, 2, ...) of c's persistent request: c itself for
 * the first; for a later one, c rebuilt on the inputs of another round, which are
 * copied into c's buffers, the ones the request reads and writes. */
static check *check_for_start(check *c, int start)
{
    check *next = c;

    if (start > 1) {
        set_input_round((unsigned) start - 1);
        next = c->rebuild(c);
        set_input_round(0);
        next->variant = c->variant;
        copy_buffers(c, next);
    }
    next->start = start;
    return next;
}

/*
 * Creates the persistent requests of cs (nothing may count), then starts them
 * PERSISTENT_STARTS times, with MPI_Start and MPI_Wait or an MPI_Test loop for one
 * request, MPI_Startall and MPI_Waitall for several; before each start after the
 * first, the buffers get new inputs (and the receive buffers new sentinels), so a
 * request that kept what it read at an earlier start gives wrong results. Checks
 * counters and results after each start; then frees the requests.
 */
static void run_persistent(check **cs, int n)
{
    MPI_Request *reqs = xrealloc(NULL, (size_t) n * sizeof(*reqs));
    check **now = xrealloc(NULL, (size_t) n * sizeof(*now));
    int rc, created = 1;
    window w;

    window_open(&w, cs, n, COUNT_CREATION);
    for (int i = 0; i < n; ++i) {
        rc = cs[i]->call(cs[i]);
        if (MPI_SUCCESS != rc) {
            created = 0;
            record_check(0);
            report_mpi_error(cs[i], "creating the persistent request", rc);
        }
        reqs[i] = cs[i]->req;
    }
    if (created) {
        window_close(&w, cs, n);
    }

    for (int start = 1; created && start <= PERSISTENT_STARTS; ++start) {
        for (int i = 0; i < n; ++i) {
            now[i] = check_for_start(cs[i], start);
        }
        window_open(&w, now, n, COUNT_START);
        if (1 == n) {
            rc = MPI_Start(&reqs[0]);
            rc = MPI_SUCCESS == rc ? complete(&reqs[0]) : rc;
        } else {
            rc = MPI_Startall(n, reqs);
            rc = MPI_SUCCESS == rc ? MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) : rc;
        }
        if (MPI_SUCCESS != rc) {
            record_check(0);
            report_mpi_error(now[0], 1 == n ? "MPI_Start or the completion"
                                            : "MPI_Startall or MPI_Waitall", rc);
            created = 0;
        } else {
            window_close(&w, now, n);
        }
        for (int i = 0; i < n; ++i) {
            if (now[i] != cs[i]) {
                copy_buffers(now[i], cs[i]);
            }
            if (MPI_SUCCESS == rc) {
                compare_regions(now[i]);
            }
            if (now[i] != cs[i]) {
                check_free(now[i]);
            }
        }
    }

    for (int i = 0; i < n; ++i) {
        if (MPI_REQUEST_NULL == reqs[i]) {
            continue;
        }
        rc = MPI_Request_free(&reqs[i]);
        record_check(MPI_SUCCESS == rc && MPI_REQUEST_NULL == reqs[i]);
        if (MPI_SUCCESS != rc) {
            report_mpi_error(cs[i], "MPI_Request_free", rc);
        } else if (MPI_REQUEST_NULL != reqs[i]) {
            report_failure(cs[i], "MPI_Request_free left the handle other than MPI_REQUEST_NULL");
        }
        cs[i]->req = MPI_REQUEST_NULL;
    }
    free(now);
    free(reqs);
}

void run_check(check *c)
{
    window w;
    int rc;

    if (opt.verbose) {
        print_check(c);
    }
    if (FORM_PERSISTENT == coll_form(c->coll)) {
        run_persistent(&c, 1);
        return;
    }
    window_open(&w, &c, 1, COUNT_ALL);
    rc = c->call(c);
    if (MPI_SUCCESS == rc && coll_has_request(c->coll)) {
        rc = complete(&c->req);
    }
    if (MPI_SUCCESS != rc) {
        record_check(0);
        report_mpi_error(c, coll_has_request(c->coll) ? "the call or its completion"
                                                      : "the call", rc);
        return;
    }
    window_close(&w, &c, 1);
    compare_regions(c);
}

/* Creates c's persistent request and frees it without a start: only a delegated
 * creation counts. */
static void run_unstarted(check *c)
{
    window w;
    int rc;

    if (opt.verbose) {
        print_check(c);
    }
    window_open(&w, &c, 1, COUNT_CREATION);
    rc = c->call(c);
    if (MPI_SUCCESS == rc) {
        rc = MPI_Request_free(&c->req);
    }
    record_check(MPI_SUCCESS == rc);
    if (MPI_SUCCESS != rc) {
        report_mpi_error(c, "creating the persistent request or freeing it unstarted", rc);
        return;
    }
    window_close(&w, &c, 1);
}

void run_batch(check **cs, int n)
{
    MPI_Request *reqs;
    int rc, start_failed = 0;
    window w;

    if (opt.verbose) {
        for (int i = 0; i < n; ++i) {
            print_check(cs[i]);
        }
    }
    if (FORM_PERSISTENT == coll_form(cs[0]->coll)) {
        run_persistent(cs, n);
        run_unstarted(cs[0]);
        return;
    }
    reqs = xrealloc(NULL, (size_t) n * sizeof(*reqs));
    window_open(&w, cs, n, COUNT_ALL);
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
    if (MPI_SUCCESS != rc) {
        record_check(0);
        report_mpi_error(cs[0], "MPI_Waitall over the batch", rc);
    } else if (!start_failed) {
        window_close(&w, cs, n);
        for (int i = 0; i < n; ++i) {
            compare_regions(cs[i]);
        }
    }
    free(reqs);
}
