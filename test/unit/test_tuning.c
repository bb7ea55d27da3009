/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_tuning.c: the tuning file's parser (good files, and
 * each kind of bad one, refused whole with its line and why) and its lookup
 * (boundaries, families, the parameters it yields to).
 */

#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_tuning.h"

static struct coll_async_tuning_error error;

static struct coll_async_tuning *parse(const char *text)
{
    return coll_async_tuning_parse(text, strlen(text), &error);
}

/* A bad file: refused, at line, with why containing words. */
static void refused(const char *text, size_t length, int line, const char *words)
{
    struct coll_async_tuning *tuning = coll_async_tuning_parse(text, length, &error);

    if (NULL != tuning || line != error.line || NULL == strstr(error.why, words)) {
        print_error("text \"%.80s\": line %d \"%s\", expected line %d \"%s\"\n", text,
                    error.line, error.why, line, words);
    }
    assert_null(tuning);
    assert_int_equal(error.line, line);
    assert_non_null(strstr(error.why, words));
}

static void refused_text(const char *text, int line, const char *words)
{
    refused(text, strlen(text), line, words);
}

#define EXAMPLE                                                          \
    "# made by a program\n"                                             \
    "coll_async_tuning 1\n"                                              \
    "\n"                                                                 \
    "# FAMILY   NODES  BYTES     ALGORITHM\n"                            \
    "allreduce  2-*    0-1023    ring   # latency-bound below 1 KiB\n"   \
    "allreduce  2-*    1K-*      recursive_doubling\n"                   \
    "bcast      2-3    *         binomial\n"                             \
    "bcast      4-*    0-64K     binomial\n"                             \
    "bcast      4-*    65537-inf scatter_allgather\n"                    \
    "Allgather  2      0-4k      RING\r\n"                               \
    "allgatherv 2-8    1M-2M     recursive_doubling\n"                   \
    "reduce_scatter 2-* * rabenseifner\n"                                \
    "reduce_scatter_block 2-* 0 ring"

static void test_good_file(void **state)
{
    struct coll_async_tuning *tuning = parse(EXAMPLE);
    char text[160];

    (void) state;
    if (NULL == tuning) {
        print_error("line %d: %s\n", error.line, error.why);
    }
    assert_non_null(tuning);
    assert_int_equal(tuning->row_count, 9);
    assert_int_equal(tuning->first[COLL_ASYNC_FAMILY_ALLREDUCE + 1]
                         - tuning->first[COLL_ASYNC_FAMILY_ALLREDUCE], 2);
    assert_int_equal(tuning->first[COLL_ASYNC_FAMILY_BCAST + 1]
                         - tuning->first[COLL_ASYNC_FAMILY_BCAST], 3);
    assert_int_not_equal(tuning->digest, 0);

    const struct coll_async_tuning_row *row = &tuning->rows[tuning->first[COLL_ASYNC_FAMILY_ALLREDUCE]];
    assert_int_equal(row->line, 5);
    assert_int_equal(row->nodes_min, 2);
    assert_int_equal(row->nodes_max, INT_MAX);
    assert_int_equal(row->bytes_min, 0);
    assert_int_equal(row->bytes_max, 1023);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING);
    coll_async_tuning_row_text(row, text, sizeof(text));
    assert_string_equal(text, "allreduce 2-* 0-1023 ring");
    coll_async_tuning_row_text(row + 1, text, sizeof(text));
    assert_string_equal(text, "allreduce 2-* 1024-* recursive_doubling");
    row = &tuning->rows[tuning->first[COLL_ASYNC_FAMILY_ALLGATHER]];
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING); /* names in any case, CRLF */
    assert_int_equal(row->bytes_max, 4096);
    assert_int_equal(row->nodes_max, 2);
    row = &tuning->rows[tuning->first[COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK]];
    assert_int_equal(row->bytes_min, 0);
    assert_int_equal(row->bytes_max, 0);
    coll_async_tuning_free(tuning);
}

static void test_digest(void **state)
{
    struct coll_async_tuning *a = parse("coll_async_tuning 1\nallreduce 2-* * ring\n");
    struct coll_async_tuning *b = parse("# other words\ncoll_async_tuning 1\n\n"
                                        "  ALLREDUCE\t2-inf\t0-*   ring # same rows\n");
    struct coll_async_tuning *c = parse("coll_async_tuning 1\nallreduce 3-* * ring\n");
    struct coll_async_tuning *empty = parse("coll_async_tuning 1\n");

    (void) state;
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(empty);
    assert_true(a->digest == b->digest); /* the rows as understood, not the text */
    assert_true(a->digest != c->digest);
    assert_int_equal(empty->row_count, 0);
    assert_int_not_equal(empty->digest, 0);
    coll_async_tuning_free(a);
    coll_async_tuning_free(b);
    coll_async_tuning_free(c);
    coll_async_tuning_free(empty);
}

static void test_version(void **state)
{
    (void) state;
    refused_text("", 1, "no \"coll_async_tuning 1\" line");
    refused_text("# only a comment\n\n", 2, "no \"coll_async_tuning 1\" line");
    refused_text("coll_async_tuning 2\nallreduce * * ring\n", 1, "version \"2\"");
    refused_text("coll_async_tuning\n", 1, "version \"\"");
    refused_text("coll_async_tuning 1 extra\n", 1, "version");
    refused_text("allreduce * * ring\n", 1, "must begin with \"coll_async_tuning 1\"");
    refused_text("\n# x\nCOLL_ASYNC_TUNING 1\n", 3, "must begin with");
}

static void test_unknown_family(void **state)
{
    (void) state;
    refused_text("coll_async_tuning 1\nallreduce 2-* * ring\nallreduc 2-* * ring\n", 3,
                 "unknown family \"allreduc\"");
    refused_text("coll_async_tuning 1\nreduce 2-* * binomial\n", 2,
                 "does not steer reduce");
    refused_text("coll_async_tuning 1\nbarrier * * dissemination\n", 2,
                 "does not steer barrier");
    refused_text("coll_async_tuning 1\ngather * * binomial\n", 2, "does not steer gather");
    refused_text("coll_async_tuning 1\nalltoallv * * pairwise\n", 2, "does not steer alltoallv");
}

static void test_unknown_algorithm(void **state)
{
    (void) state;
    refused_text("coll_async_tuning 1\nallreduce 2-* * rings\n", 2,
                 "unknown algorithm \"rings\" (allreduce takes ring, recursive_doubling, "
                 "rabenseifner)");
    /* Names the family's parameter does not accept, or not between nodes. */
    refused_text("coll_async_tuning 1\nallreduce 2-* * binomial\n", 2,
                 "binomial is not an algorithm the file may choose for allreduce");
    refused_text("coll_async_tuning 1\nbcast 2-* * ring\n", 2,
                 "ring is not an algorithm the file may choose for bcast between nodes (it "
                 "takes binomial, scatter_allgather, multicast)");
    /* multicast is bcast's only. */
    refused_text("coll_async_tuning 1\nallreduce 2-* * multicast\n", 2,
                 "multicast is not an algorithm the file may choose for allreduce");
    refused_text("coll_async_tuning 1\nallgather 2-* * multicast\n", 2,
                 "multicast is not an algorithm");
    refused_text("coll_async_tuning 1\nallgather 2-* * rabenseifner\n", 2,
                 "rabenseifner is not an algorithm");
    refused_text("coll_async_tuning 1\nallreduce 2-* * auto\n", 2, "auto is not an algorithm");
    refused_text("coll_async_tuning 1\nallreduce 2-* * delegate\n", 2,
                 "delegate is not an algorithm");
    refused_text("coll_async_tuning 1\nallreduce 2-* * staged\n", 2, "staged is not an algorithm");
    refused_text("coll_async_tuning 1\nallreduce 2-* * numa\n", 2, "numa is not an algorithm");
}

static void test_bad_fields(void **state)
{
    (void) state;
    refused_text("coll_async_tuning 1\nallreduce 2-* ring\n", 2, "this line has 3");
    refused_text("coll_async_tuning 1\nallreduce 2-* * ring x\n", 2, "this line has 5");
    refused_text("coll_async_tuning 1\na b c d e f g h i j\n", 2, "more than 8");
    refused_text("coll_async_tuning 1\nallreduce 0-4 * ring\n", 2, "bad node range \"0-4\"");
    refused_text("coll_async_tuning 1\nallreduce 0 * ring\n", 2, "bad node range");
    refused_text("coll_async_tuning 1\nallreduce -3 * ring\n", 2, "bad node range");
    refused_text("coll_async_tuning 1\nallreduce *-4 * ring\n", 2, "bad node range");
    refused_text("coll_async_tuning 1\nallreduce 2K * ring\n", 2, "bad node range");
    refused_text("coll_async_tuning 1\nallreduce 99999999999 * ring\n", 2, "bad node range");
    refused_text("coll_async_tuning 1\nallreduce 4-2 * ring\n", 2,
                 "node range \"4-2\" ends below its start");
    refused_text("coll_async_tuning 1\nallreduce * 2K-1K ring\n", 2,
                 "byte range \"2K-1K\" ends below its start");
    refused_text("coll_async_tuning 1\nallreduce * 1X ring\n", 2, "bad byte range \"1X\"");
    refused_text("coll_async_tuning 1\nallreduce * 0x10 ring\n", 2, "bad byte range");
    refused_text("coll_async_tuning 1\nallreduce * 1-2-3 ring\n", 2, "bad byte range");
    refused_text("coll_async_tuning 1\nallreduce * 20000000000T ring\n", 2, "bad byte range");
    refused_text("coll_async_tuning 1\nallreduce * 99999999999999999999999 ring\n", 2,
                 "bad byte range");
    refused_text("coll_async_tuning 1\nallreduce * K ring\n", 2, "bad byte range");
}

static void test_overlap(void **state)
{
    (void) state;
    refused_text("coll_async_tuning 1\nallreduce 2-* 0-2K ring\n"
                 "allreduce 2-* 1K-* recursive_doubling\n",
                 3, "overlaps the row of line 2 (allreduce 2-* 0-2048 ring)");
    refused_text("coll_async_tuning 1\nallreduce 2-4 0-1023 ring\n"
                 "allreduce 4-8 0-1023 recursive_doubling\n",
                 3, "overlaps the row of line 2");
    refused_text("coll_async_tuning 1\nallreduce * * ring\nallreduce 2 5 ring\n", 3,
                 "overlaps");
    /* The same ranges in another family do not overlap. */
    struct coll_async_tuning *t = parse("coll_async_tuning 1\nallreduce * * ring\n"
                                        "allgather * * ring\n");
    assert_non_null(t);
    coll_async_tuning_free(t);
}

static void test_unordered(void **state)
{
    (void) state;
    refused_text("coll_async_tuning 1\nallreduce 2-* 1K-* recursive_doubling\n"
                 "allreduce 2-* 0-1023 ring\n",
                 3, "out of order after the row of line 2");
    refused_text("coll_async_tuning 1\nallreduce 3-* * ring\nallreduce 2 * ring\n", 3,
                 "out of order");
    /* Other families' rows in between do not matter. */
    struct coll_async_tuning *t = parse("coll_async_tuning 1\nallreduce 2 * ring\n"
                                        "bcast 3-* * binomial\nallreduce 3-* * ring\n"
                                        "bcast 2 * binomial\n");
    assert_null(t);
    assert_int_equal(error.line, 5);
    t = parse("coll_async_tuning 1\nallreduce 2 * ring\nbcast 2 * binomial\n"
              "allreduce 3-* * ring\nbcast 3-* * binomial\n");
    assert_non_null(t);
    coll_async_tuning_free(t);
}

static void test_garbage(void **state)
{
    static const char nul[] = "coll_async_tuning 1\nallreduce 2-* \0 ring\n";
    static const char binary[] = "coll_async_tuning 1\n\x7f" "ELF\x02\x01\x01\n";
    static const char utf8[] = "coll_async_tuning 1\nallreduce 2-* * ring # \xc3\xa9t\xc3\xa9\n";
    char *huge;

    (void) state;
    refused(nul, sizeof(nul) - 1, 2, "a NUL byte (column 15)");
    refused(binary, sizeof(binary) - 1, 2, "a byte 0x7f (column 1)");
    refused(utf8, sizeof(utf8) - 1, 2, "a byte 0xc3");
    refused_text("\x89PNG\r\n", 1, "a byte 0x89");
    refused_text("coll_async_tuning 1\rallreduce * * ring\n", 1, "a byte 0x0d (column 20)");
    refused_text("coll_async_tuning 1\nthe quick brown fox\n", 2, "unknown family \"the\"");
    refused_text("coll_async_tuning 1\nthe quick brown\n", 2, "this line has 3");
    refused_text("coll_async_tuning 1\n}{][ 2 3 4\n", 2, "unknown family \"}{][\"");

    /* A line too long, even inside a comment. */
    huge = malloc(64 * 1024);
    assert_non_null(huge);
    strcpy(huge, "coll_async_tuning 1\n#");
    memset(huge + strlen(huge), 'x', 2000);
    huge[21 + 2000] = '\0';
    refused_text(huge, 2, "more than 1024 bytes");
    free(huge);
}

static void test_too_large(void **state)
{
    size_t length = COLL_ASYNC_TUNING_MAX_BYTES + 1;
    char *big = malloc(length + 1);
    char *rows;
    size_t at;

    (void) state;
    assert_non_null(big);
    memset(big, '\n', length);
    memcpy(big, "coll_async_tuning 1\n", 20);
    refused(big, length, 0, "1048577 bytes, more than the 1048576");
    free(big);

    /* More rows than the bound, each valid and in order. */
    rows = malloc(COLL_ASYNC_TUNING_MAX_ROWS * 48 + 64);
    assert_non_null(rows);
    at = (size_t) sprintf(rows, "coll_async_tuning 1\n");
    for (int i = 0; i <= COLL_ASYNC_TUNING_MAX_ROWS; ++i) {
        at += (size_t) sprintf(rows + at, "allreduce 2-* %d ring\n", i);
    }
    refused_text(rows, COLL_ASYNC_TUNING_MAX_ROWS + 2, "more than 4096 rows");
    free(rows);
}

static void test_lookup(void **state)
{
    struct coll_async_tuning *tuning = parse(EXAMPLE);
    const struct coll_async_tuning_row *row;

    (void) state;
    assert_non_null(tuning);
    /* allreduce 2-* 0-1023 ring, 2-* 1K-* recursive_doubling */
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, 1, 0));
    row = coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, 2, 0);
    assert_non_null(row);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING);
    assert_int_equal(row->line, 5);
    row = coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, 2, 1023);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING);
    row = coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, 2, 1024);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RECURSIVE_DOUBLING);
    assert_int_equal(row->line, 6);
    row = coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, INT_MAX, SIZE_MAX);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RECURSIVE_DOUBLING);
    /* bcast 2-3 *, 4-* 0-64K, 4-* 65537-inf */
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 3, SIZE_MAX)->line, 7);
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 4, 0)->line, 8);
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 4, 65536)->line, 8);
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 4, 65537)->line, 9);
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 9, 65538)->line, 9);
    /* allgather 2 0-4k: 2 nodes only */
    assert_non_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHER, 2, 4096));
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHER, 3, 0));
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHER, 2, 4097));
    /* allgatherv 2-8 1M-2M */
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHERV, 8, (1 << 20) - 1));
    assert_non_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHERV, 8, 1 << 20));
    assert_non_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHERV, 8, 2 << 20));
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_ALLGATHERV, 9, 1 << 20));
    /* No rows: families the file has none of, and no file. */
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_REDUCE, 2, 0));
    assert_null(coll_async_tuning_lookup(NULL, COLL_ASYNC_FAMILY_ALLREDUCE, 2, 0));
    coll_async_tuning_free(tuning);
}

static void test_choose(void **state)
{
    struct coll_async_tuning *tuning = parse(EXAMPLE);
    const struct coll_async_tuning_row *row;

    (void) state;
    assert_non_null(tuning);
    /* auto, or a schedule named inside a node: the row. */
    row = coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_FAMILY_ALLREDUCE,
                                   COLL_ASYNC_ALG_AUTO, 2, 100);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING);
    row = coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_FAMILY_ALLREDUCE,
                                   COLL_ASYNC_ALG_STAGED, 2, 100);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RING);
    /* A parameter naming an algorithm between nodes wins over the file. */
    assert_null(coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_ALLREDUCE,
                                         COLL_ASYNC_FAMILY_ALLREDUCE,
                                         COLL_ASYNC_ALG_RABENSEIFNER, 2, 100));
    assert_null(coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_MULTICAST, 2, 100));
    /* reduce_scatter's rows for its leaders' allreduce; allgatherv's for their allgather. */
    row = coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_REDUCE_SCATTER,
                                   COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 5, 7);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RABENSEIFNER);
    row = coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_ALLGATHERV,
                                   COLL_ASYNC_FAMILY_ALLGATHER, COLL_ASYNC_ALG_AUTO, 4, 1 << 20);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_RECURSIVE_DOUBLING);
    /* A row whose algorithm the leaders' family does not run: the built-in ones. */
    assert_null(coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_REDUCE_SCATTER,
                                         COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_ALG_AUTO, 5, 7));
    assert_null(coll_async_tuning_choose(NULL, COLL_ASYNC_FAMILY_ALLREDUCE,
                                         COLL_ASYNC_FAMILY_ALLREDUCE, COLL_ASYNC_ALG_AUTO, 2, 7));
    coll_async_tuning_free(tuning);
}

/* A bcast row may name multicast: parsed, looked up and chosen like any row;
 * coll_async_tuning_names finds it by node count (the group's set-up). */
static void test_multicast_row(void **state)
{
    struct coll_async_tuning *tuning = parse("coll_async_tuning 1\n"
                                             "bcast 2 * binomial\n"
                                             "bcast 3-8 0-8K scatter_allgather\n"
                                             "bcast 3-8 8193-* MULTICAST # any case\n"
                                             "allreduce 3 * ring\n");
    const struct coll_async_tuning_row *row;
    char text[160];

    (void) state;
    assert_non_null(tuning);
    assert_int_equal(tuning->row_count, 4);
    row = coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 3, 8193);
    assert_non_null(row);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_MULTICAST);
    assert_int_equal(row->line, 4);
    coll_async_tuning_row_text(row, text, sizeof(text));
    assert_string_equal(text, "bcast 3-8 8193-* multicast");
    assert_int_equal(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 8, 8192)->alg,
                     COLL_ASYNC_ALG_SCATTER_ALLGATHER);
    assert_null(coll_async_tuning_lookup(tuning, COLL_ASYNC_FAMILY_BCAST, 9, 1 << 20));
    /* Chosen where the parameter is auto; a parameter naming one wins. */
    row = coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                   COLL_ASYNC_ALG_AUTO, 5, 1 << 20);
    assert_non_null(row);
    assert_int_equal(row->alg, COLL_ASYNC_ALG_MULTICAST);
    assert_null(coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_BINOMIAL, 5, 1 << 20));
    assert_null(coll_async_tuning_choose(tuning, COLL_ASYNC_FAMILY_BCAST, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_MULTICAST, 5, 1 << 20));
    /* Whether a row names multicast, by node count only (any size). */
    assert_false(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_MULTICAST, 2));
    assert_true(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_BCAST,
                                        COLL_ASYNC_ALG_MULTICAST, 3));
    assert_true(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_BCAST,
                                        COLL_ASYNC_ALG_MULTICAST, 8));
    assert_false(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_MULTICAST, 9));
    assert_false(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_ALLREDUCE,
                                         COLL_ASYNC_ALG_MULTICAST, 3));
    assert_true(coll_async_tuning_names(tuning, COLL_ASYNC_FAMILY_ALLREDUCE,
                                        COLL_ASYNC_ALG_RING, 3));
    assert_false(coll_async_tuning_names(NULL, COLL_ASYNC_FAMILY_BCAST,
                                         COLL_ASYNC_ALG_MULTICAST, 3));
    coll_async_tuning_free(tuning);
    /* The row's algorithm is in the digest: multicast is not binomial. */
    {
        struct coll_async_tuning *a = parse("coll_async_tuning 1\nbcast 3 * multicast\n");
        struct coll_async_tuning *b = parse("coll_async_tuning 1\nbcast 3 * binomial\n");

        assert_non_null(a);
        assert_non_null(b);
        assert_true(a->digest != b->digest);
        coll_async_tuning_free(a);
        coll_async_tuning_free(b);
    }
}

static void test_steers(void **state)
{
    (void) state;
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_ALLREDUCE));
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_BCAST));
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_ALLGATHER));
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_ALLGATHERV));
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_REDUCE_SCATTER));
    assert_true(coll_async_tuning_steers(COLL_ASYNC_FAMILY_REDUCE_SCATTER_BLOCK));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_REDUCE));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_BARRIER));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_GATHER));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_ALLTOALL));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_SCAN));
    assert_false(coll_async_tuning_steers(COLL_ASYNC_FAMILY_NEIGHBOR_ALLTOALL));
}

/* The file: missing, a directory, a FIFO (never blocks), 1 GiB (sparse, never
 * read), and a good one. */
static void test_load(void **state)
{
    char dir[] = "/tmp/test_tuning.XXXXXX", path[128];
    struct coll_async_tuning *tuning;
    int fd;

    (void) state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/missing", dir);
    assert_null(coll_async_tuning_load(path, &error));
    assert_int_equal(error.line, 0);
    assert_non_null(strstr(error.why, "cannot be opened: No such file"));

    assert_null(coll_async_tuning_load(dir, &error));
    assert_non_null(strstr(error.why, "not a regular file"));

    snprintf(path, sizeof(path), "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_null(coll_async_tuning_load(path, &error));
    assert_non_null(strstr(error.why, "not a regular file"));
    unlink(path);

    snprintf(path, sizeof(path), "%s/huge", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t) 1 << 30), 0);
    close(fd);
    assert_null(coll_async_tuning_load(path, &error));
    assert_int_equal(error.line, 0);
    assert_non_null(strstr(error.why, "1073741824 bytes, more than the 1048576"));
    unlink(path);

    snprintf(path, sizeof(path), "%s/good", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, EXAMPLE, strlen(EXAMPLE)), (ssize_t) strlen(EXAMPLE));
    close(fd);
    tuning = coll_async_tuning_load(path, &error);
    assert_non_null(tuning);
    assert_int_equal(tuning->row_count, 9);
    coll_async_tuning_free(tuning);

    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "\nbcast 2 * ring\n", 16), 16);
    close(fd);
    assert_null(coll_async_tuning_load(path, &error));
    assert_int_equal(error.line, 14);
    unlink(path);

    snprintf(path, sizeof(path), "%s/unreadable", dir);
    fd = open(path, O_CREAT | O_WRONLY, 0000);
    close(fd);
    if (0 != geteuid()) { /* root reads it anyway */
        assert_null(coll_async_tuning_load(path, &error));
        assert_non_null(strstr(error.why, "cannot be opened: Permission denied"));
    }
    unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),   cmocka_unit_test(test_digest),
        cmocka_unit_test(test_version),     cmocka_unit_test(test_unknown_family),
        cmocka_unit_test(test_unknown_algorithm), cmocka_unit_test(test_bad_fields),
        cmocka_unit_test(test_overlap),     cmocka_unit_test(test_unordered),
        cmocka_unit_test(test_garbage),     cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_lookup),      cmocka_unit_test(test_choose),
        cmocka_unit_test(test_multicast_row),
        cmocka_unit_test(test_steers),      cmocka_unit_test(test_load),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
