/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of bench/simulate_params.c, the reader of the simulator's parameter
 * file: a file as bench/fit_model writes it reads back to the same model, and
 * every kind of bad line is refused with its file, its line and what is wrong.
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../bench/simulate_params.h"

static char path[64];

/* Writes text to a fresh temporary file; its name in path. */
static void file_with(const char *text)
{
    int fd;
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/test_simulate_params.XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal((int) strlen(text), fprintf(f, "%s", text));
    assert_int_equal(0, fclose(f));
}

static const char *const good =
    "# fitted somewhere\n"
    "\n"
    "coll_async_model 1\n"
    "latency_us 12.5 us\n"
    "  overhead_us\t4 us\n"
    "# a comment among them\n"
    "gap_ns_per_byte 0.31 ns/B\n"
    "reduce_ns_per_byte 0 ns/B\n"
    "ack_us 4 us\n"
    "call_us 6.5 us\n"
    "verbs no\n"
    "transport tcp\n";

static void test_reads_a_good_file(void **state)
{
    struct sim_params_file file;
    char error[SIM_PARAMS_ERROR_MAX] = "";

    (void) state;
    file_with(good);
    assert_int_equal(0, sim_params_read(path, &file, error));
    assert_string_equal("", error);
    assert_true(fabs(file.params.latency - 12.5e-6) < 1e-15);
    assert_true(fabs(file.params.overhead - 4e-6) < 1e-15);
    assert_true(fabs(file.params.gap - 0.31e-9) < 1e-18);
    assert_true(0.0 == file.params.reduce);
    assert_true(fabs(file.params.ack - 4e-6) < 1e-15);
    assert_true(fabs(file.params.call - 6.5e-6) < 1e-15);
    assert_false(file.params.verbs);
    assert_string_equal("tcp", file.transport);
    unlink(path);
}

static void test_round_trip(void **state)
{
    struct sim_params_file in = {.params = {.latency = 1.234567e-6, .overhead = 0.5e-6,
                                            .gap = 0.0812345e-9, .reduce = 0.11e-9,
                                            .ack = 0.25e-6, .call = 3.25e-6,
                                            .verbs = true},
                                 .transport = "verbs"},
                           out;
    char error[SIM_PARAMS_ERROR_MAX];
    FILE *f;

    (void) state;
    file_with("");
    f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# a comment before the version line\n");
    assert_int_equal(0, sim_params_write(f, &in));
    fprintf(f, "# and after the parameters\n");
    assert_int_equal(0, fclose(f));
    assert_int_equal(0, sim_params_read(path, &out, error));
    /* %.6g: six significant digits survive (a rounding of 5e-6 at most). */
    assert_true(fabs(out.params.latency - in.params.latency) < 1e-5 * in.params.latency);
    assert_true(fabs(out.params.overhead - in.params.overhead) < 1e-5 * in.params.overhead);
    assert_true(fabs(out.params.gap - in.params.gap) < 1e-5 * in.params.gap);
    assert_true(fabs(out.params.reduce - in.params.reduce) < 1e-5 * in.params.reduce);
    assert_true(fabs(out.params.ack - in.params.ack) < 1e-5 * in.params.ack);
    assert_true(fabs(out.params.call - in.params.call) < 1e-5 * in.params.call);
    assert_true(out.params.verbs);
    assert_string_equal("verbs", out.transport);
    unlink(path);
}

/* good with line `line` (1-based) replaced by `with` ("" drops it). */
static void good_but(int line, const char *with)
{
    char text[1024] = "";
    const char *at = good;

    for (int n = 1; '\0' != *at; ++n) {
        const char *end = strchr(at, '\n') + 1;

        if (n == line) {
            strcat(text, with);
        } else {
            strncat(text, at, (size_t) (end - at));
        }
        at = end;
    }
    file_with(text);
}

static void test_refuses_bad_files(void **state)
{
    static const struct {
        int line;            /* of good, replaced */
        const char *with;
        int error_line;      /* 0: the message names no line */
        const char *says;
    } cases[] = {
        {3, "coll_async_model 2\n", 3, "version \"2\" not understood (this reader: 1)"},
        {3, "", 3, "expected \"coll_async_model 1\" first, found \"latency_us\""},
        {3, "coll_async_model\n", 3, "version \"\" not understood"},
        {4, "latency 12.5 us\n", 4, "unknown name \"latency\""},
        {4, "latency_us 12.5\n", 4, "latency_us takes a value and its unit (us)"},
        {4, "latency_us 12.5 ms\n", 4, "latency_us: unit \"ms\", expected \"us\""},
        {4, "latency_us twelve us\n", 4, "latency_us: \"twelve\" is not a number of 0 or more"},
        {4, "latency_us 12.5x us\n", 4, "latency_us: \"12.5x\" is not a number"},
        {4, "latency_us -1 us\n", 4, "latency_us: \"-1\" is not a number of 0 or more"},
        {4, "latency_us nan us\n", 4, "latency_us: \"nan\" is not a number"},
        {4, "latency_us inf us\n", 4, "latency_us: \"inf\" is not a number"},
        {4, "latency_us 12.5 us # why\n", 4, "more than a name, a value and a unit"},
        {7, "gap_ns_per_byte 0.31 ns/byte\n", 7, "gap_ns_per_byte: unit \"ns/byte\", expected \"ns/B\""},
        {9, "ack_us 4 us\nack_us 5 us\n", 10, "ack_us given twice"},
        {11, "verbs maybe\n", 11, "verbs takes yes or no, and no unit"},
        {11, "verbs yes yes\n", 11, "verbs takes yes or no"},
        {12, "transport\n", 12, "transport takes one name"},
        {12, "transport tcp\ntransport verbs\n", 13, "transport given twice"},
        {8, "", 0, "reduce_ns_per_byte missing"},
        {11, "", 0, "verbs missing"},
        {12, "", 0, "transport missing"},
        {10, "", 0, "call_us missing"},
        {10, "call_us -2 us\n", 10, "call_us: \"-2\" is not a number of 0 or more"},
        {10, "call_us 2 ns\n", 10, "call_us: unit \"ns\", expected \"us\""},
    };
    char expected[SIM_PARAMS_ERROR_MAX + 64];

    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        struct sim_params_file file;
        char error[SIM_PARAMS_ERROR_MAX] = "";

        good_but(cases[i].line, cases[i].with);
        assert_int_equal(-1, sim_params_read(path, &file, error));
        if (0 == cases[i].error_line) {
            snprintf(expected, sizeof(expected), "%s: %s", path, cases[i].says);
        } else {
            snprintf(expected, sizeof(expected), "%s:%d: %s", path, cases[i].error_line,
                     cases[i].says);
        }
        if (0 != strncmp(expected, error, strlen(expected))) {
            fail_msg("case %zu: \"%s\", expected it to begin \"%s\"", i, error, expected);
        }
        unlink(path);
    }
}

static void test_refuses_empty_missing_and_long(void **state)
{
    struct sim_params_file file;
    char error[SIM_PARAMS_ERROR_MAX], expected[SIM_PARAMS_ERROR_MAX + 64], text[700];

    (void) state;
    file_with("# only a comment\n\n");
    assert_int_equal(-1, sim_params_read(path, &file, error));
    snprintf(expected, sizeof(expected), "%s: empty: no \"coll_async_model 1\" line", path);
    assert_string_equal(expected, error);
    unlink(path);

    assert_int_equal(-1, sim_params_read("/nonexistent/params", &file, error));
    assert_string_equal("/nonexistent/params: No such file or directory", error);

    memset(text, 'x', sizeof(text));
    memcpy(text, "coll_async_model 1\n# ", 21);
    text[sizeof(text) - 2] = '\n';
    text[sizeof(text) - 1] = '\0';
    file_with(text);
    assert_int_equal(-1, sim_params_read(path, &file, error));
    snprintf(expected, sizeof(expected), "%s:2: line longer than", path);
    assert_int_equal(0, strncmp(expected, error, strlen(expected)));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_a_good_file),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refuses_bad_files),
        cmocka_unit_test(test_refuses_empty_missing_and_long),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
