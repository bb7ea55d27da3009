/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * The simulator's parameter file. See simulate_params.h.
 */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "simulate_params.h"

#define LINE_MAX_BYTES 512
#define MAX_TOKENS 4

/* The numeric names: their unit, and the factor from it to seconds. */
static const struct number {
    const char *name, *unit;
    double to_seconds;
    size_t offset; /* of the double in struct sim_params */
} numbers[] = {
    {"latency_us", "us", 1e-6, offsetof(struct sim_params, latency)},
    {"overhead_us", "us", 1e-6, offsetof(struct sim_params, overhead)},
    {"gap_ns_per_byte", "ns/B", 1e-9, offsetof(struct sim_params, gap)},
    {"reduce_ns_per_byte", "ns/B", 1e-9, offsetof(struct sim_params, reduce)},
    {"ack_us", "us", 1e-6, offsetof(struct sim_params, ack)},
    {"call_us", "us", 1e-6, offsetof(struct sim_params, call)},
};
#define NUM_NUMBERS ((int) (sizeof(numbers) / sizeof(numbers[0])))
/* Then verbs and transport: every name's bit in `seen`. */
enum { SEEN_VERBS = NUM_NUMBERS, SEEN_TRANSPORT, NUM_NAMES };

static int fail(char *error, const char *path, int line, const char *format, ...)
{
    va_list args;
    int used = 0 == line ? snprintf(error, SIM_PARAMS_ERROR_MAX, "%s: ", path)
                         : snprintf(error, SIM_PARAMS_ERROR_MAX, "%s:%d: ", path, line);

    if (used >= 0 && used < SIM_PARAMS_ERROR_MAX) {
        va_start(args, format);
        vsnprintf(error + used, SIM_PARAMS_ERROR_MAX - (size_t) used, format, args);
        va_end(args);
    }
    return -1;
}

/* Splits line at blanks; the count, or MAX_TOKENS + 1 when there are more. */
static int split(char *line, char *tokens[MAX_TOKENS])
{
    int n = 0;

    for (char *word = strtok(line, " \t\r\n"); NULL != word; word = strtok(NULL, " \t\r\n")) {
        if (MAX_TOKENS == n) {
            return MAX_TOKENS + 1;
        }
        tokens[n++] = word;
    }
    return n;
}

/* One parameter line. 0, or -1 with error set. */
static int parse_line(char *tokens[], int n, const char *path, int line,
                      struct sim_params_file *out, unsigned *seen, char *error)
{
    const char *name = tokens[0];

    for (int i = 0; i < NUM_NUMBERS; ++i) {
        char *end;
        double value;

        if (0 != strcmp(name, numbers[i].name)) {
            continue;
        }
        if (3 != n) {
            return fail(error, path, line, "%s takes a value and its unit (%s), as in "
                        "\"%s 1.5 %s\"", name, numbers[i].unit, name, numbers[i].unit);
        }
        errno = 0;
        value = strtod(tokens[1], &end);
        if (end == tokens[1] || '\0' != *end || 0 != errno || !isfinite(value) || value < 0) {
            return fail(error, path, line, "%s: \"%s\" is not a number of 0 or more", name,
                        tokens[1]);
        }
        if (0 != strcmp(tokens[2], numbers[i].unit)) {
            return fail(error, path, line, "%s: unit \"%s\", expected \"%s\"", name, tokens[2],
                        numbers[i].unit);
        }
        if (*seen & 1u << i) {
            return fail(error, path, line, "%s given twice", name);
        }
        *seen |= 1u << i;
        *(double *) ((char *) &out->params + numbers[i].offset) = value * numbers[i].to_seconds;
        return 0;
    }
    if (0 == strcmp(name, "verbs")) {
        if (2 != n || (0 != strcmp(tokens[1], "yes") && 0 != strcmp(tokens[1], "no"))) {
            return fail(error, path, line, "verbs takes yes or no, and no unit");
        }
        if (*seen & 1u << SEEN_VERBS) {
            return fail(error, path, line, "verbs given twice");
        }
        *seen |= 1u << SEEN_VERBS;
        out->params.verbs = 0 == strcmp(tokens[1], "yes");
        return 0;
    }
    if (0 == strcmp(name, "transport")) {
        if (2 != n || strlen(tokens[1]) >= sizeof(out->transport)) {
            return fail(error, path, line, "transport takes one name (under %d characters), "
                        "and no unit", SIM_PARAMS_TRANSPORT_MAX);
        }
        if (*seen & 1u << SEEN_TRANSPORT) {
            return fail(error, path, line, "transport given twice");
        }
        *seen |= 1u << SEEN_TRANSPORT;
        strcpy(out->transport, tokens[1]);
        return 0;
    }
    return fail(error, path, line, "unknown name \"%s\"", name);
}

static const char *name_of(int bit)
{
    return bit < NUM_NUMBERS ? numbers[bit].name : SEEN_VERBS == bit ? "verbs" : "transport";
}

int sim_params_read(const char *path, struct sim_params_file *out,
                    char error[SIM_PARAMS_ERROR_MAX])
{
    FILE *f = fopen(path, "r");
    char text[LINE_MAX_BYTES];
    unsigned seen = 0;
    bool versioned = false;
    int line = 0, rc = 0;

    memset(out, 0, sizeof(*out));
    if (NULL == f) {
        return fail(error, path, 0, "%s", strerror(errno));
    }
    while (0 == rc && NULL != fgets(text, sizeof(text), f)) {
        size_t length = strlen(text);
        char *tokens[MAX_TOKENS], *first = text + strspn(text, " \t");
        int n;

        ++line;
        if (length + 1 == sizeof(text) && '\n' != text[length - 1]) {
            rc = fail(error, path, line, "line longer than %d characters", LINE_MAX_BYTES - 2);
            break;
        }
        if ('#' == *first) {
            continue;
        }
        n = split(text, tokens);
        if (0 == n) {
            continue;
        }
        if (n > MAX_TOKENS - 1) {
            rc = fail(error, path, line, "more than a name, a value and a unit");
        } else if (!versioned) {
            if (0 != strcmp(tokens[0], "coll_async_model")) {
                rc = fail(error, path, line, "expected \"coll_async_model %d\" first, found "
                          "\"%s\"", SIM_PARAMS_VERSION, tokens[0]);
            } else if (2 != n || 0 != strcmp(tokens[1], "1")) {
                rc = fail(error, path, line, "version \"%s\" not understood (this reader: %d)",
                          n > 1 ? tokens[1] : "", SIM_PARAMS_VERSION);
            }
            versioned = true;
        } else {
            rc = parse_line(tokens, n, path, line, out, &seen, error);
        }
    }
    if (0 == rc && ferror(f)) {
        rc = fail(error, path, 0, "read error");
    }
    fclose(f);
    if (0 == rc && !versioned) {
        rc = fail(error, path, 0, "empty: no \"coll_async_model %d\" line", SIM_PARAMS_VERSION);
    }
    for (int bit = 0; 0 == rc && bit < NUM_NAMES; ++bit) {
        if (!(seen & 1u << bit)) {
            rc = fail(error, path, 0, "%s missing", name_of(bit));
        }
    }
    return rc;
}

int sim_params_write(FILE *f, const struct sim_params_file *in)
{
    const struct sim_params *p = &in->params;
    int rc = fprintf(f, "coll_async_model %d\n", SIM_PARAMS_VERSION);

    /* %.6g keeps what a fit can tell apart and reads back to the same model. */
    for (int i = 0; rc >= 0 && i < NUM_NUMBERS; ++i) {
        double seconds = *(const double *) ((const char *) p + numbers[i].offset);

        rc = fprintf(f, "%s %.6g %s\n", numbers[i].name, seconds / numbers[i].to_seconds,
                     numbers[i].unit);
    }
    if (rc >= 0) {
        rc = fprintf(f, "verbs %s\ntransport %s\n", p->verbs ? "yes" : "no", in->transport);
    }
    return rc < 0 ? -1 : 0;
}
