/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the help messages and the output stream. See coll_async_say.h.
 */

#include "ompi_config.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/errhandler/errcode-internal.h"
#include "ompi/runtime/params.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include "opal/util/show_help.h"

#include "coll_async_compat.h"
#include "coll_async_failure.h"
#include "coll_async_say.h"

int mca_coll_async_output = -1;

/* coll_async_verbose, as given at open. */
static int verbose;

/* Lines kept by say_later, newest first. */
struct later {
    struct later *next;
    int level;
    char text[];
};
static struct later *later;

/*
 * The help text is installed next to the component, which may not be Open MPI's
 * data directory (a component in ~/.openmpi/components, say), so the component
 * adds its own directory to the places Open MPI looks for help files.
 */
/* An object of the component's own, whose address dladdr() can take (ISO C has no
 * conversion of a function's address to void *). */
static const char in_this_library;
static char help_dir[PATH_MAX];

void mca_coll_async_say_init(void)
{
    Dl_info info;
    char *path;

    if (0 == dladdr(&in_this_library, &info) || NULL == info.dli_fname) {
        return;
    }
    path = strdup(info.dli_fname);
    if (NULL != path) {
        snprintf(help_dir, sizeof(help_dir), "%s", dirname(path));
        opal_show_help_add_dir(help_dir);
        free(path);
    }
}

/*
 * Where Open MPI shows only the help texts compiled into it (6.0:
 * COLL_ASYNC_HELP_FROM_FILES), the component renders its own as Open MPI would:
 * the topic's lines of its help file, comments left out, as the format of
 * args, between two rules. NULL where the file or the topic is missing.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static char *render_help(const char *topic, va_list args)
{
    static const char rule[] =
        "--------------------------------------------------------------------------\n";
    char path[PATH_MAX + 32], line[1024], *format = NULL, *text = NULL;
    size_t length = strlen(rule), topic_length = strlen(topic);
    bool inside = false;
    FILE *file;
    va_list again;
    int size;

    snprintf(path, sizeof(path), "%s/help-coll-async.txt", help_dir);
    if ('\0' == help_dir[0] || NULL == (file = fopen(path, "r"))) {
        return NULL;
    }
    while (NULL != fgets(line, sizeof(line), file)) {
        size_t n = strlen(line);
        char *grown;

        if ('[' == line[0]) {
            if (inside) {
                break;
            }
            inside = 0 == strncmp(line + 1, topic, topic_length) && ']' == line[1 + topic_length];
            if (inside && NULL == (format = strdup(rule))) {
                break;
            }
            continue;
        }
        if (!inside || '#' == line[0]) {
            continue;
        }
        if (NULL == (grown = realloc(format, length + n + 1))) {
            break;
        }
        format = grown;
        memcpy(format + length, line, n + 1);
        length += n;
    }
    fclose(file);
    if (NULL == format || NULL == (text = realloc(format, length + sizeof(rule)))) {
        free(format);
        return NULL;
    }
    memcpy(text + length, rule, sizeof(rule));
    format = text;
    va_copy(again, args);
    size = vsnprintf(NULL, 0, format, args);
    text = size < 0 ? NULL : malloc((size_t) size + 1);
    if (NULL != text) {
        vsnprintf(text, (size_t) size + 1, format, again);
    }
    va_end(again);
    free(format);
    return text;
}
#pragma GCC diagnostic pop

int mca_coll_async_say_open(int level)
{
    verbose = level;
    mca_coll_async_output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_async_output, level);
    return mca_coll_async_output;
}

void mca_coll_async_say_close(void)
{
    mca_coll_async_say_pending();
    if (mca_coll_async_output >= 0) {
        opal_output_close(mca_coll_async_output);
        mca_coll_async_output = -1;
    }
}

/*
 * Open MPI 4.1 loses help messages that several processes send to mpirun at the
 * same moment (its PMIx log relay fails to unpack them), so one process speaks
 * for the others; the rest repeat the message only when asked to be verbose.
 */
void mca_coll_async_show_help(bool speaker, const char *topic, ...)
{
    va_list args;

    if (!speaker && verbose < 1) {
        return;
    }
    va_start(args, topic);
    if (!COLL_ASYNC_HELP_FROM_FILES) {
        char *text = render_help(topic, args);

        if (NULL != text) {
            opal_output(0, "%s", text);
            free(text);
            va_end(args);
            return;
        }
    }
    opal_show_vhelp("help-coll-async.txt", topic, true, args);
    va_end(args);
}

void mca_coll_async_say_later(int level, const char *format, ...)
{
    struct later *line;
    va_list args;
    int length;

    if (opal_output_get_verbosity(mca_coll_async_output) < level) {
        return;
    }
    va_start(args, format);
    length = vsnprintf(NULL, 0, format, args);
    va_end(args);
    if (length < 0 || NULL == (line = malloc(sizeof(*line) + (size_t) length + 1))) {
        return;
    }
    line->level = level;
    va_start(args, format);
    (void) vsnprintf(line->text, (size_t) length + 1, format, args);
    va_end(args);
    line->next = __atomic_load_n(&later, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&later, &line->next, line, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED)) {
    }
}

void mca_coll_async_say_pending(void)
{
    struct later *line, *ordered = NULL;

    if (NULL == __atomic_load_n(&later, __ATOMIC_RELAXED)) {
        return;
    }
    line = __atomic_exchange_n(&later, NULL, __ATOMIC_ACQUIRE);
    while (NULL != line) { /* oldest first */
        struct later *next = line->next;

        line->next = ordered;
        ordered = line;
        line = next;
    }
    while (NULL != ordered) {
        struct later *next = ordered->next;

        opal_output_verbose(ordered->level, mca_coll_async_output, "%s", ordered->text);
        free(ordered);
        ordered = next;
    }
}

/* Every process that saw the failure says it: each names its own peer. */
void mca_coll_async_say_failure(const struct coll_async_failure *failure)
{
    if (NULL != failure && NULL != failure->topic) {
        mca_coll_async_show_help(true, failure->topic, failure->communicator, failure->rank,
                                 failure->error);
    }
}

int mca_coll_async_mpi_error(int status)
{
    if (OMPI_SUCCESS == status || status > 0) {
        return status;
    }
#if COLL_ASYNC_FT
    /* A peer's death reaches a rank through its transports (or its node's leader)
     * before ULFM's notice, and as more than one error. */
    if (ompi_ftmpi_enabled && OMPI_ERR_OUT_OF_RESOURCE != status) {
        return MPI_ERR_PROC_FAILED;
    }
#endif
    return ompi_errcode_get_mpi_code(status);
}

bool mca_coll_async_first_process(void)
{
    return 0 == OPAL_PROC_MY_NAME.vpid;
}
