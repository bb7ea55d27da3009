/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the tuning file's parser and lookup. See coll_async_tuning.h and
 * docs/tuning-file.md.
 */

#include "coll_async_tuning.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define HEADER "coll_async_tuning"
#define MAX_FIELDS 8

static const char *const family_names[COLL_ASYNC_NUM_FAMILIES] = {
#define FAMILY_NAME(U, l) [COLL_ASYNC_FAMILY_##U] = #l,
    COLL_ASYNC_FAMILIES(FAMILY_NAME)
#undef FAMILY_NAME
};

bool coll_async_tuning_steers(enum coll_async_family family)
{
    int algs = 0;

    if (family < 0 || family >= COLL_ASYNC_NUM_FAMILIES
        || !coll_async_decision_hierarchical(family)) {
        return false;
    }
    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS; ++alg) {
        algs += coll_async_decision_between_nodes(alg) && COLL_ASYNC_ALG_MULTICAST != alg
                && coll_async_decision_accepts(family, alg);
    }
    return algs >= 2;
}

/* Whether a row of family may name alg: multicast too (bcast's), which runs
 * where the communicator's group can be used, else auto's point to point. */
static bool takes(enum coll_async_family family, enum coll_async_alg alg)
{
    return coll_async_decision_between_nodes(alg) && coll_async_decision_accepts(family, alg);
}

static void say(struct coll_async_tuning_error *error, int line, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct coll_async_tuning_error *error, int line, const char *format, ...)
{
    va_list args;

    error->line = line;
    va_start(args, format);
    vsnprintf(error->why, sizeof(error->why), format, args);
    va_end(args);
}

/* "ring, recursive_doubling": what a row of family may name. */
static void takes_list(enum coll_async_family family, char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int alg = 0; alg < COLL_ASYNC_NUM_ALGS && used < len; ++alg) {
        if (takes(family, alg)) {
            used += (size_t) snprintf(buf + used, len - used, "%s%s", 0 == used ? "" : ", ",
                                      coll_async_alg_names[alg]);
        }
    }
}

static void steered_list(char *buf, size_t len)
{
    size_t used = 0;

    buf[0] = '\0';
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES && used < len; ++family) {
        if (coll_async_tuning_steers(family)) {
            used += (size_t) snprintf(buf + used, len - used, "%s%s", 0 == used ? "" : ", ",
                                      family_names[family]);
        }
    }
}

/* A number with an optional binary suffix (K, M, G, T), at most max; `*` and
 * `inf` are max itself where open is allowed. */
static bool read_number(const char *text, size_t length, unsigned long long max, bool suffixes,
                        unsigned long long *value)
{
    unsigned long long v = 0, scale = 1;

    if ((1 == length && '*' == text[0]) || (3 == length && 0 == strncasecmp(text, "inf", 3))) {
        *value = max;
        return true;
    }
    if (suffixes && length > 1) {
        switch (text[length - 1]) {
        case 'k': case 'K': scale = 1ull << 10; --length; break;
        case 'm': case 'M': scale = 1ull << 20; --length; break;
        case 'g': case 'G': scale = 1ull << 30; --length; break;
        case 't': case 'T': scale = 1ull << 40; --length; break;
        default: break;
        }
    }
    if (0 == length || length > 20) {
        return false;
    }
    for (size_t i = 0; i < length; ++i) {
        if (text[i] < '0' || text[i] > '9') {
            return false;
        }
        if (v > (ULLONG_MAX - 9) / 10) {
            return false;
        }
        v = v * 10 + (unsigned long long) (text[i] - '0');
    }
    if (v > max / scale) {
        return false;
    }
    *value = v * scale;
    return true;
}

/* A range: N, N-M, N-* (or N-inf), or * (everything); both ends included. */
static bool read_range(const char *text, unsigned long long max, bool suffixes,
                       unsigned long long *low, unsigned long long *high)
{
    const char *dash = strchr(text, '-');
    size_t length = strlen(text);

    if ((1 == length && '*' == text[0]) || (3 == length && 0 == strcasecmp(text, "inf"))) {
        *low = 0;
        *high = max;
        return true;
    }
    if (NULL == dash) {
        *high = max; /* a single value: N-N, where N is not open */
        return read_number(text, length, max, suffixes, low) && *low != max
               && (*high = *low, true);
    }
    if (dash == text || (1 == dash - text && '*' == text[0])
        || (3 == dash - text && 0 == strncasecmp(text, "inf", 3))) {
        return false; /* no start, or an open one */
    }
    return read_number(text, (size_t) (dash - text), max, suffixes, low)
           && read_number(dash + 1, strlen(dash + 1), max, suffixes, high);
}

static bool overlaps(const struct coll_async_tuning_row *a, const struct coll_async_tuning_row *b)
{
    return a->nodes_min <= b->nodes_max && b->nodes_min <= a->nodes_max
           && a->bytes_min <= b->bytes_max && b->bytes_min <= a->bytes_max;
}

/* Whether b starts after a: by nodes, then by bytes. */
static bool after(const struct coll_async_tuning_row *a, const struct coll_async_tuning_row *b)
{
    return b->nodes_min > a->nodes_min
           || (b->nodes_min == a->nodes_min && b->bytes_min > a->bytes_min);
}

static void range_text(char *buf, size_t len, unsigned long long low, unsigned long long high,
                       unsigned long long max)
{
    if (0 == low && high == max) {
        snprintf(buf, len, "*");
    } else if (high == max) {
        snprintf(buf, len, "%llu-*", low);
    } else if (low == high) {
        snprintf(buf, len, "%llu", low);
    } else {
        snprintf(buf, len, "%llu-%llu", low, high);
    }
}

int coll_async_tuning_row_text(const struct coll_async_tuning_row *row, char *buf, size_t len)
{
    char nodes[48], bytes[48];

    range_text(nodes, sizeof(nodes), (unsigned long long) row->nodes_min,
               (unsigned long long) row->nodes_max, INT_MAX);
    if (1 == row->nodes_min && INT_MAX == row->nodes_max) {
        snprintf(nodes, sizeof(nodes), "*");
    }
    range_text(bytes, sizeof(bytes), row->bytes_min, row->bytes_max, SIZE_MAX);
    return snprintf(buf, len, "%s %s %s %s", family_names[row->family], nodes, bytes,
                    coll_async_alg_names[row->alg]);
}

/* FNV-1a, 64 bits. */
static uint64_t mix(uint64_t hash, uint64_t value)
{
    for (int i = 0; i < 8; ++i, value >>= 8) {
        hash = (hash ^ (value & 0xff)) * 0x100000001b3ull;
    }
    return hash;
}

static uint64_t digest(const struct coll_async_tuning *tuning)
{
    uint64_t hash = mix(0xcbf29ce484222325ull, COLL_ASYNC_TUNING_VERSION);

    for (int i = 0; i < tuning->row_count; ++i) {
        const struct coll_async_tuning_row *row = &tuning->rows[i];

        hash = mix(hash, (uint64_t) row->family);
        hash = mix(hash, (uint64_t) row->nodes_min);
        hash = mix(hash, (uint64_t) row->nodes_max);
        hash = mix(hash, (uint64_t) row->bytes_min);
        hash = mix(hash, (uint64_t) row->bytes_max);
        hash = mix(hash, (uint64_t) row->alg);
    }
    return 0 == hash ? 1 : hash;
}

/* Checks one line's bytes: printable ASCII and tabs, a carriage return at its end. */
static bool line_bytes(const char *line, size_t length, int number,
                       struct coll_async_tuning_error *error)
{
    if (length > COLL_ASYNC_TUNING_MAX_LINE) {
        say(error, number, "a line of more than %d bytes", COLL_ASYNC_TUNING_MAX_LINE);
        return false;
    }
    for (size_t i = 0; i < length; ++i) {
        unsigned char c = (unsigned char) line[i];

        if ('\0' == c) {
            say(error, number, "a NUL byte (column %zu): not a text file", i + 1);
            return false;
        }
        if (!('\t' == c || (c >= 0x20 && c < 0x7f) || ('\r' == c && i + 1 == length))) {
            say(error, number, "a byte 0x%02x (column %zu) that is not printable ASCII", c, i + 1);
            return false;
        }
    }
    return true;
}

/* Splits a line (comment cut) into at most MAX_FIELDS fields, NUL-terminated in
 * copy; the number of fields, MAX_FIELDS + 1 where there are more. */
static int split(const char *line, size_t length, char *copy, char **fields)
{
    int count = 0;
    char *p, *save = NULL;

    memcpy(copy, line, length);
    copy[length] = '\0';
    if (NULL != (p = strchr(copy, '#'))) {
        *p = '\0';
    }
    for (p = strtok_r(copy, " \t\r", &save); NULL != p; p = strtok_r(NULL, " \t\r", &save)) {
        if (count == MAX_FIELDS) {
            return MAX_FIELDS + 1;
        }
        fields[count++] = p;
    }
    return count;
}

static bool read_row(char **fields, int count, int number, struct coll_async_tuning_row *row,
                     struct coll_async_tuning_error *error)
{
    unsigned long long low, high;
    char list[256];
    int family, alg;

    if (4 != count) {
        say(error, number,
            "a row has 4 fields (FAMILY NODES BYTES ALGORITHM); this line has %s%d",
            count > MAX_FIELDS ? "more than " : "", count > MAX_FIELDS ? MAX_FIELDS : count);
        return false;
    }
    family = -1;
    for (int f = 0; f < COLL_ASYNC_NUM_FAMILIES; ++f) {
        if (0 == strcasecmp(fields[0], family_names[f])) {
            family = f;
        }
    }
    if (family < 0) {
        steered_list(list, sizeof(list));
        say(error, number, "unknown family \"%.64s\" (the file steers %s)", fields[0], list);
        return false;
    }
    if (!coll_async_tuning_steers(family)) {
        steered_list(list, sizeof(list));
        say(error, number, "the file does not steer %s, which has one algorithm between nodes "
            "(it steers %s)", family_names[family], list);
        return false;
    }
    if (!read_range(fields[1], INT_MAX, false, &low, &high)
        || (0 == low && !(0 == strcmp("*", fields[1]) || 0 == strcasecmp("inf", fields[1])))) {
        say(error, number, "bad node range \"%.64s\" (N, N-M, N-* or *; N from 1)", fields[1]);
        return false;
    }
    if (low > high) {
        say(error, number, "node range \"%.64s\" ends below its start", fields[1]);
        return false;
    }
    row->nodes_min = 0 == low ? 1 : (int) low;
    row->nodes_max = (int) high;
    if (!read_range(fields[2], SIZE_MAX, true, &low, &high)) {
        say(error, number, "bad byte range \"%.64s\" (N, N-M, N-* or *; N in bytes, or with "
            "a suffix K, M, G, T: 1K is 1024)", fields[2]);
        return false;
    }
    if (low > high) {
        say(error, number, "byte range \"%.64s\" ends below its start", fields[2]);
        return false;
    }
    row->bytes_min = (size_t) low;
    row->bytes_max = (size_t) high;
    row->family = family;
    alg = -1;
    for (int a = 0; a < COLL_ASYNC_NUM_ALGS; ++a) {
        if (0 == strcasecmp(fields[3], coll_async_alg_names[a])) {
            alg = a;
        }
    }
    takes_list(family, list, sizeof(list));
    if (alg < 0) {
        say(error, number, "unknown algorithm \"%.64s\" (%s takes %s)", fields[3],
            family_names[family], list);
        return false;
    }
    if (!takes(family, alg)) {
        say(error, number, "%s is not an algorithm the file may choose for %s between nodes "
            "(it takes %s)", coll_async_alg_names[alg], family_names[family], list);
        return false;
    }
    row->alg = alg;
    row->line = number;
    return true;
}

/* Checks row against the family's earlier rows: none it overlaps, each before it. */
static bool in_order(const struct coll_async_tuning_row *rows, int count,
                     const struct coll_async_tuning_row *row,
                     struct coll_async_tuning_error *error)
{
    char text[160];

    for (int i = 0; i < count; ++i) {
        if (rows[i].family == row->family && overlaps(&rows[i], row)) {
            coll_async_tuning_row_text(&rows[i], text, sizeof(text));
            say(error, row->line, "overlaps the row of line %d (%s)", rows[i].line, text);
            return false;
        }
    }
    for (int i = count - 1; i >= 0; --i) {
        if (rows[i].family == row->family) {
            if (!after(&rows[i], row)) {
                coll_async_tuning_row_text(&rows[i], text, sizeof(text));
                say(error, row->line, "out of order after the row of line %d (%s): a family's "
                    "rows go by nodes, then by bytes", rows[i].line, text);
                return false;
            }
            break;
        }
    }
    return true;
}

/* Lays the rows out by family, each family's in the file's order. */
static struct coll_async_tuning *arrange(struct coll_async_tuning_row *rows, int count)
{
    struct coll_async_tuning *tuning = calloc(1, sizeof(*tuning));
    int at = 0;

    if (NULL == tuning
        || NULL == (tuning->rows = calloc(count > 0 ? (size_t) count : 1, sizeof(*rows)))) {
        free(tuning);
        return NULL;
    }
    for (int family = 0; family < COLL_ASYNC_NUM_FAMILIES; ++family) {
        tuning->first[family] = at;
        for (int i = 0; i < count; ++i) {
            if (rows[i].family == (enum coll_async_family) family) {
                tuning->rows[at] = rows[i];
                tuning->rows[at].index = at;
                ++at;
            }
        }
    }
    tuning->first[COLL_ASYNC_NUM_FAMILIES] = at;
    tuning->row_count = count;
    tuning->digest = digest(tuning);
    return tuning;
}

struct coll_async_tuning *coll_async_tuning_parse(const char *text, size_t length,
                                                  struct coll_async_tuning_error *error)
{
    struct coll_async_tuning_row *rows = NULL;
    struct coll_async_tuning *tuning = NULL;
    char copy[COLL_ASYNC_TUNING_MAX_LINE + 1], *fields[MAX_FIELDS];
    bool header = false;
    int count = 0, number = 0;
    size_t at = 0;

    error->line = 0;
    error->why[0] = '\0';
    if (length > COLL_ASYNC_TUNING_MAX_BYTES) {
        say(error, 0, "%zu bytes, more than the %d a tuning file may have", length,
            COLL_ASYNC_TUNING_MAX_BYTES);
        return NULL;
    }
    while (at < length) {
        const char *line = text + at, *end = memchr(line, '\n', length - at);
        size_t line_length = NULL != end ? (size_t) (end - line) : length - at;
        int fields_count;

        at += line_length + (NULL != end);
        ++number;
        if (!line_bytes(line, line_length, number, error)) {
            goto fail;
        }
        fields_count = split(line, line_length, copy, fields);
        if (0 == fields_count) {
            continue;
        }
        if (!header) {
            if (0 != strcmp(HEADER, fields[0])) {
                say(error, number, "the file must begin with \"" HEADER " %d\", not \"%.64s\"",
                    COLL_ASYNC_TUNING_VERSION, fields[0]);
                goto fail;
            }
            if (2 != fields_count || 0 != strcmp("1", fields[1])) {
                say(error, number, "version \"%.32s\": this component reads version %d",
                    fields_count >= 2 ? fields[1] : "", COLL_ASYNC_TUNING_VERSION);
                goto fail;
            }
            header = true;
            continue;
        }
        if (count == COLL_ASYNC_TUNING_MAX_ROWS) {
            say(error, number, "more than %d rows", COLL_ASYNC_TUNING_MAX_ROWS);
            goto fail;
        }
        if (NULL == rows
            && NULL == (rows = malloc(sizeof(*rows) * COLL_ASYNC_TUNING_MAX_ROWS))) {
            say(error, 0, "out of memory");
            goto fail;
        }
        if (!read_row(fields, fields_count, number, &rows[count], error)
            || !in_order(rows, count, &rows[count], error)) {
            goto fail;
        }
        ++count;
    }
    if (!header) {
        say(error, number > 0 ? number : 1,
            "no \"" HEADER " %d\" line: an empty file, or only comments",
            COLL_ASYNC_TUNING_VERSION);
        goto fail;
    }
    tuning = arrange(rows, count);
    if (NULL == tuning) {
        say(error, 0, "out of memory");
    }
fail:
    free(rows);
    return tuning;
}

struct coll_async_tuning *coll_async_tuning_load(const char *path,
                                                 struct coll_async_tuning_error *error)
{
    struct coll_async_tuning *tuning = NULL;
    struct stat st;
    size_t length = 0;
    char *text = NULL;
    int fd;

    error->line = 0;
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        say(error, 0, "cannot be opened: %s", strerror(errno));
        return NULL;
    }
    if (0 != fstat(fd, &st)) {
        say(error, 0, "cannot be read: %s", strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        say(error, 0, "not a regular file");
    } else if (st.st_size > COLL_ASYNC_TUNING_MAX_BYTES) {
        say(error, 0, "%lld bytes, more than the %d a tuning file may have",
            (long long) st.st_size, COLL_ASYNC_TUNING_MAX_BYTES);
    } else if (NULL == (text = malloc(COLL_ASYNC_TUNING_MAX_BYTES + 1))) {
        say(error, 0, "out of memory");
    } else {
        /* At most one byte past the bound, however the file grew since fstat. */
        while (length <= COLL_ASYNC_TUNING_MAX_BYTES) {
            ssize_t got = read(fd, text + length, COLL_ASYNC_TUNING_MAX_BYTES + 1 - length);

            if (got < 0 && EINTR == errno) {
                continue;
            }
            if (got < 0) {
                say(error, 0, "cannot be read: %s", strerror(errno));
                break;
            }
            if (0 == got) {
                tuning = coll_async_tuning_parse(text, length, error);
                break;
            }
            length += (size_t) got;
        }
        if (length > COLL_ASYNC_TUNING_MAX_BYTES) {
            say(error, 0, "more than the %d bytes a tuning file may have",
                COLL_ASYNC_TUNING_MAX_BYTES);
        }
    }
    free(text);
    close(fd);
    return tuning;
}

void coll_async_tuning_free(struct coll_async_tuning *tuning)
{
    if (NULL != tuning) {
        free(tuning->rows);
        free(tuning);
    }
}

const struct coll_async_tuning_row *coll_async_tuning_lookup(const struct coll_async_tuning *tuning,
                                                             enum coll_async_family family,
                                                             int nodes, size_t bytes)
{
    if (NULL == tuning || family < 0 || family >= COLL_ASYNC_NUM_FAMILIES) {
        return NULL;
    }
    for (int i = tuning->first[family]; i < tuning->first[family + 1]; ++i) {
        const struct coll_async_tuning_row *row = &tuning->rows[i];

        if (row->nodes_min <= nodes && nodes <= row->nodes_max && row->bytes_min <= bytes
            && bytes <= row->bytes_max) {
            return row;
        }
    }
    return NULL;
}

bool coll_async_tuning_names(const struct coll_async_tuning *tuning,
                             enum coll_async_family family, enum coll_async_alg alg, int nodes)
{
    if (NULL == tuning || family < 0 || family >= COLL_ASYNC_NUM_FAMILIES) {
        return false;
    }
    for (int i = tuning->first[family]; i < tuning->first[family + 1]; ++i) {
        const struct coll_async_tuning_row *row = &tuning->rows[i];

        if (row->alg == alg && row->nodes_min <= nodes && nodes <= row->nodes_max) {
            return true;
        }
    }
    return false;
}

const struct coll_async_tuning_row *coll_async_tuning_choose(const struct coll_async_tuning *tuning,
                                                             enum coll_async_family rows_of,
                                                             enum coll_async_family family,
                                                             enum coll_async_alg leaders_alg,
                                                             int nodes, size_t bytes)
{
    const struct coll_async_tuning_row *row;

    if (NULL == tuning || COLL_ASYNC_ALG_AUTO != coll_async_decision_leaders(leaders_alg)) {
        return NULL;
    }
    row = coll_async_tuning_lookup(tuning, rows_of, nodes, bytes);
    return NULL != row && coll_async_decision_accepts(family, row->alg) ? row : NULL;
}
