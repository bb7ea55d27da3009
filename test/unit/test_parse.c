/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Unit tests of coll_async_parse.c: CPU lists and algorithm names, the values
 * users type into MCA parameters.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../ompi/mca/coll/async/coll_async_parse.h"

static struct coll_async_cpuset set;
static char why[256];

static int parse(const char *text)
{
    why[0] = '\0';
    return coll_async_parse_cpus(text, &set, why, sizeof(why));
}

static void test_cpus_keywords(void **state)
{
    (void) state;
    assert_int_equal(parse("auto"), 0);
    assert_int_equal(set.mode, COLL_ASYNC_CPUS_AUTO);
    assert_int_equal(parse("NONE"), 0);
    assert_int_equal(set.mode, COLL_ASYNC_CPUS_NONE);
}

static void test_cpus_list(void **state)
{
    (void) state;
    assert_int_equal(parse("0,2,4-7,63,64,4095"), 0);
    assert_int_equal(set.mode, COLL_ASYNC_CPUS_LIST);
    for (int cpu = 0; cpu < COLL_ASYNC_MAX_CPUS; ++cpu) {
        bool expected = cpu == 0 || cpu == 2 || (cpu >= 4 && cpu <= 7) || cpu == 63 ||
                        cpu == 64 || cpu == 4095;
        assert_int_equal(coll_async_cpuset_has(&set, cpu), expected);
    }
    assert_false(coll_async_cpuset_has(&set, -1));
    assert_false(coll_async_cpuset_has(&set, COLL_ASYNC_MAX_CPUS));
}

static void test_cpus_single_range(void **state)
{
    (void) state;
    assert_int_equal(parse("3-3"), 0);
    assert_true(coll_async_cpuset_has(&set, 3));
    assert_false(coll_async_cpuset_has(&set, 2));
    assert_false(coll_async_cpuset_has(&set, 4));
}

/* Each malformed value is refused with a reason that points at the problem. */
static void test_cpus_malformed(void **state)
{
    static const struct {
        const char *text;
        const char *reason;
    } cases[] = {
        {"", "empty"},
        {"x", "expected a CPU number at \"x\""},
        {"1,", "expected a CPU number at \"\""},
        {",1", "expected a CPU number at \",1\""},
        {"1-", "expected a CPU number"},
        {"-1", "expected a CPU number at \"-1\""},
        {"5-2", "range 5-2 ends below its start"},
        {"1;2", "unexpected \";2\""},
        {"1 2", "unexpected \" 2\""},
        {"4096", "above the limit of 4095"},
        {"99999999999999999999", "above the limit"},
        {"autox", "expected a CPU number"},
    };
    (void) state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        assert_int_equal(parse(cases[i].text), -1);
        if (NULL == strstr(why, cases[i].reason)) {
            fail_msg("\"%s\": reason \"%s\" lacks \"%s\"", cases[i].text, why, cases[i].reason);
        }
    }
    assert_int_equal(coll_async_parse_cpus(NULL, &set, why, sizeof(why)), -1);
}

static const char *const names[] = {"auto", "delegate", "ring"};

static void test_names(void **state)
{
    (void) state;
    assert_int_equal(coll_async_parse_name("auto", names, 3), 0);
    assert_int_equal(coll_async_parse_name("Delegate", names, 3), 1);
    assert_int_equal(coll_async_parse_name("ring", names, 3), 2);
    assert_int_equal(coll_async_parse_name("rin", names, 3), -1);
    assert_int_equal(coll_async_parse_name("", names, 3), -1);
    assert_int_equal(coll_async_parse_name(NULL, names, 3), -1);
}

static void test_join(void **state)
{
    char out[32];
    (void) state;
    coll_async_join_names(names, 3, out, sizeof(out));
    assert_string_equal(out, "auto, delegate, ring");
    coll_async_join_names(names, 0, out, sizeof(out));
    assert_string_equal(out, "");
    coll_async_join_names(names, 3, out, 8); /* truncated, still terminated */
    assert_int_equal(strlen(out), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpus_keywords),  cmocka_unit_test(test_cpus_list),
        cmocka_unit_test(test_cpus_single_range), cmocka_unit_test(test_cpus_malformed),
        cmocka_unit_test(test_names),          cmocka_unit_test(test_join),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
