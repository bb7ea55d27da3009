/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: parsing of parameter values. See coll_async_parse.h.
 */

#include "coll_async_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BITS_PER_WORD (8 * sizeof(unsigned long))

static void cpuset_add(struct coll_async_cpuset *set, int cpu)
{
    set->bits[cpu / BITS_PER_WORD] |= 1UL << (cpu % BITS_PER_WORD);
}

bool coll_async_cpuset_has(const struct coll_async_cpuset *set, int cpu)
{
    if (cpu < 0 || cpu >= COLL_ASYNC_MAX_CPUS) {
        return false;
    }
    return set->bits[cpu / BITS_PER_WORD] & (1UL << (cpu % BITS_PER_WORD));
}

/* Reads a CPU number at *p and advances *p past it. */
static int read_cpu(const char **p, int *cpu, char *why, size_t why_len)
{
    char *end;
    long value;

    if (!isdigit((unsigned char) **p)) {
        snprintf(why, why_len, "expected a CPU number at \"%s\"", *p);
        return -1;
    }
    errno = 0;
    value = strtol(*p, &end, 10);
    if (errno != 0 || value >= COLL_ASYNC_MAX_CPUS) {
        snprintf(why, why_len, "CPU number at \"%s\" is above the limit of %d",
                 *p, COLL_ASYNC_MAX_CPUS - 1);
        return -1;
    }
    *cpu = (int) value;
    *p = end;
    return 0;
}

int coll_async_parse_cpus(const char *text, struct coll_async_cpuset *set,
                          char *why, size_t why_len)
{
    const char *p = text;

    memset(set, 0, sizeof(*set));
    if (NULL == text || '\0' == text[0]) {
        snprintf(why, why_len, "the value is empty");
        return -1;
    }
    if (0 == strcasecmp(text, "auto")) {
        set->mode = COLL_ASYNC_CPUS_AUTO;
        return 0;
    }
    if (0 == strcasecmp(text, "none")) {
        set->mode = COLL_ASYNC_CPUS_NONE;
        return 0;
    }

    set->mode = COLL_ASYNC_CPUS_LIST;
    for (;;) {
        int first, last;

        if (read_cpu(&p, &first, why, why_len) != 0) {
            return -1;
        }
        last = first;
        if ('-' == *p) {
            ++p;
            if (read_cpu(&p, &last, why, why_len) != 0) {
                return -1;
            }
            if (last < first) {
                snprintf(why, why_len, "range %d-%d ends below its start", first, last);
                return -1;
            }
        }
        for (int cpu = first; cpu <= last; ++cpu) {
            cpuset_add(set, cpu);
        }
        if ('\0' == *p) {
            return 0;
        }
        if (',' != *p) {
            snprintf(why, why_len, "unexpected \"%s\" (a list looks like 0,2,4-7)", p);
            return -1;
        }
        ++p;
    }
}

int coll_async_parse_name(const char *text, const char *const *names, int count)
{
    if (NULL == text) {
        return -1;
    }
    for (int i = 0; i < count; ++i) {
        if (0 == strcasecmp(text, names[i])) {
            return i;
        }
    }
    return -1;
}

void coll_async_join_names(const char *const *names, int count, char *out, size_t out_len)
{
    size_t used = 0;

    if (out_len > 0) {
        out[0] = '\0';
    }
    for (int i = 0; i < count && used < out_len; ++i) {
        int n = snprintf(out + used, out_len - used, "%s%s", i > 0 ? ", " : "", names[i]);
        if (n < 0) {
            return;
        }
        used += (size_t) n;
    }
}
