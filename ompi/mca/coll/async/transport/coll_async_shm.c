/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: the shared-memory segment and CMA. See coll_async_shm.h.
 */

#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll_async_clock.h"
#include "coll_async_shm.h"
#include "coll_async_shm_header.h"
#include "coll_async_shm_pool.h"

#define SHM_DIRECTORY "/dev/shm" /* where glibc's shm_open puts the names */
#define NAME_PREFIX "/coll_async-"

/* The creator reserves this much first: a creator that cannot have the whole
 * segment can still say so in the header, instead of leaving the others to
 * their deadline for an unfinished file. */
#define HEADER_PAGE 4096

/* Set-up */

static size_t align_up(size_t value, size_t alignment)
{
    return (value + alignment - 1) / alignment * alignment;
}

/* Byte offsets of the parts of a segment, and its length; -EOVERFLOW when they
 * do not fit in a size_t. */
struct offsets {
    size_t control, accumulator, accumulator_data, slots, length;
};

static int compute_offsets(int nranks, size_t slot_size, struct offsets *o)
{
    size_t two_slots, all_slots, end;

    o->control = sizeof(struct segment_header);
    o->accumulator = o->control + (size_t) nranks * sizeof(struct coll_async_shm_control);
    o->accumulator_data = o->accumulator + 2 * sizeof(struct coll_async_shm_accumulator);
    if (__builtin_mul_overflow(slot_size, 2, &two_slots)
        || __builtin_add_overflow(o->accumulator_data, two_slots, &end) || end > SIZE_MAX - 4095
        || __builtin_mul_overflow(two_slots, (size_t) nranks, &all_slots)) {
        return -EOVERFLOW;
    }
    o->slots = align_up(end, 4096);
    if (__builtin_add_overflow(o->slots, all_slots, &o->length) || o->length > (size_t) INT64_MAX) {
        return -EOVERFLOW; /* off_t must hold it too */
    }
    return 0;
}

int coll_async_shm_length(int nranks, size_t slot_size, size_t *length)
{
    struct offsets o = {0};
    int rc = compute_offsets(nranks, slot_size, &o);

    *length = o.length;
    return rc;
}

static void place(struct coll_async_shm_segment *segment, const struct offsets *o)
{
    char *base = segment->base;

    segment->control = (struct coll_async_shm_control *) (base + o->control);
    segment->accumulator = (struct coll_async_shm_accumulator *) (base + o->accumulator);
    segment->accumulator_data = base + o->accumulator_data;
    segment->slots = base + o->slots;
}

/* A MAC of data under key, prefixed with a label, so that no MAC made for one
 * purpose (a name, a token, another transport's handshake) is one for another.
 * Short inputs (the header's) need no allocation, so cannot fail. */
static int labelled_mac(const struct coll_async_key *key, const char *label, const void *data,
                        size_t length, uint64_t *mac)
{
    size_t label_length = strlen(label) + 1;
    char small[128], *input = label_length + length <= sizeof(small)
                                  ? small : malloc(label_length + length);

    if (NULL == input) {
        return -ENOMEM;
    }
    memcpy(input, label, label_length);
    memcpy(input + label_length, data, length);
    *mac = coll_async_mac(key, input, label_length + length);
    if (small != input) {
        free(input);
    }
    return 0;
}

int coll_async_shm_identify(struct coll_async_shm_identity *id, const struct coll_async_key *key,
                            const void *members, size_t length, uint32_t instance)
{
    uint64_t family;
    uint64_t named[2];
    int rc = labelled_mac(key, "coll_async shm family", members, length, &family);

    if (0 != rc) {
        return rc;
    }
    named[0] = family;
    named[1] = instance;
    (void) labelled_mac(key, "coll_async shm name", named, sizeof(named), &id->digest);
    id->family = family;
    id->key = *key;
    snprintf(id->name, sizeof(id->name), NAME_PREFIX "%016llx",
             (unsigned long long) id->digest);
    return 0;
}

void coll_async_shm_path(const struct coll_async_shm_identity *id, char *path, size_t size)
{
    snprintf(path, size, SHM_DIRECTORY "%s", id->name);
}

/* The creator's MAC over the identity and every field of the header that shapes
 * the segment: a file made for another communicator, by another key, or with
 * other parameters does not carry it. */
static uint64_t header_token(const struct coll_async_shm_identity *id,
                             const struct segment_header *h)
{
    uint64_t fields[6] = {id->digest, h->version, h->nranks, h->slot_size, h->piece_size,
                          h->length};
    uint64_t token = 0;

    (void) labelled_mac(&id->key, "coll_async shm header", fields, sizeof(fields), &token);
    return token;
}

/* What one rank's set-up works with. */
struct setup {
    struct coll_async_shm_segment *segment;
    struct coll_async_shm_failure *failure;
    struct offsets offsets;
};

static bool is_creator(const struct coll_async_shm_segment *segment)
{
    return segment->rank == segment->creator;
}

/* Whether the creator's file, found unfinished, has stayed so too long: a live
 * creator finishes it within microseconds, so this one died or failed while at
 * it (or the file is stale). The clock starts when this rank first sees it; a
 * file not there at all is waited for without limit, as the creator makes it at
 * its first collective, which may come much later than this rank's. */
static bool unfinished_too_long(const struct setup *setup)
{
    struct coll_async_shm_segment *segment = setup->segment;
    uint64_t now = coll_async_now_ns();

    if (0 == segment->unfinished_since_ns) {
        segment->unfinished_since_ns = now;
    }
    return now - segment->unfinished_since_ns >= (uint64_t) segment->timeout_ms * 1000000u;
}

/* Records why this rank fails; returns rc. */
static int fail(const struct setup *setup, bool speaker, int rc, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(const struct setup *setup, bool speaker, int rc, const char *format, ...)
{
    va_list args;

    va_start(args, format);
    vsnprintf(setup->failure->why, sizeof(setup->failure->why), format, args);
    va_end(args);
    setup->failure->speaker = speaker;
    setup->failure->together = false;
    return rc;
}

/* "a directory owned by uid 1000, mode 0755, 0 bytes": for the messages. */
static void describe(const struct stat *st, char *buf, size_t size)
{
    snprintf(buf, size, "%s owned by uid %u, mode %04o, %lld bytes",
             S_ISREG(st->st_mode) ? "a file" : S_ISLNK(st->st_mode) ? "a symbolic link"
             : S_ISDIR(st->st_mode) ? "a directory" : "a special file",
             (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777), (long long) st->st_size);
}

/* Whether a file can be the creator's: a regular file of this user that grants
 * nobody else anything. Its mode may still lack bits the creator has yet to set
 * (the umask narrows what O_CREAT asked for), its size may still be 0. */
static bool could_be_ours(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_uid == geteuid() && 0 == (st->st_mode & 07077);
}

/* Records a failure in the header unless the decision is made: sets FAILED while
 * the count is short, counting this rank in when count_me. Returns whether the
 * segment has failed (by this rank or before it). */
static bool record_failure(struct segment_header *header, enum failure_cause cause, int error,
                           int rank, bool count_me)
{
    uint64_t state = __atomic_load_n(&header->state, __ATOMIC_ACQUIRE);
    uint64_t why = (uint64_t) cause << 48 | (uint64_t) (error & 0xffff) << 16 | (uint64_t) rank;
    uint64_t none = 0;

    /* The cause goes first, so that whoever sees FAILED finds one (perhaps
     * another rank's, if two fail at once: either is true). */
    __atomic_compare_exchange_n(&header->cause, &none, why, false, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    for (;;) {
        uint64_t next = (state | STATE_FAILED) + (count_me ? 1 : 0);

        if (!(state & STATE_FAILED) && STATE_COUNT(state) >= header->nranks) {
            return false; /* everyone had attached: the segment is in use */
        }
        if (__atomic_compare_exchange_n(&header->state, &state, next, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            return true;
        }
    }
}

/* The report of a failed segment, from the cause in its header. */
static int report_failure(const struct setup *setup, const struct segment_header *header)
{
    uint64_t why = __atomic_load_n(&header->cause, __ATOMIC_ACQUIRE);
    int rank = (int) (why & 0xffff), error = (int) (why >> 16 & 0xffff);
    bool creator = is_creator(setup->segment);

    switch ((enum failure_cause) (why >> 48)) {
    case CAUSE_PARAMETERS:
        return fail(setup, creator, -EPROTO,
                    "local rank %d was given other values of coll_async_shm_slot_size or "
                    "coll_async_shm_piece_size than local rank %d (%zu and %zu): every rank "
                    "must have the same", rank, setup->segment->creator,
                    (size_t) header->slot_size, (size_t) header->piece_size);
    case CAUSE_NO_SPACE:
        return fail(setup, creator, -ENOSPC,
                    "local rank %d could not allocate its part of the segment's %zu bytes in "
                    SHM_DIRECTORY ": %s", rank, (size_t) header->length, strerror(error));
    default:
        return fail(setup, creator, -EPROTO, "another rank could not attach");
    }
}

static void fill_header(const struct setup *setup, struct segment_header *header)
{
    header->version = SEGMENT_VERSION;
    header->nranks = (uint32_t) setup->segment->nranks;
    header->slot_size = setup->segment->slot_size;
    header->piece_size = setup->segment->piece_size;
    header->length = setup->offsets.length;
    header->token = header_token(&setup->segment->id, header);
}

/* This rank's pid, vote and the address the others' CMA probe reads, published
 * before it is counted in (the count's release carries them). CMA needs ptrace
 * rights over the peer (Yama may restrict them to ancestors): each rank allows
 * all before it can be probed. */
static void publish_self(const struct setup *setup)
{
    struct coll_async_shm_segment *segment = setup->segment;
    struct coll_async_shm_control *mine = &segment->control[segment->rank];

    if (segment->try_cma) {
        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    }
    mine->address[0] = (uint64_t) (uintptr_t) &mine->pid;
    mine->vote = segment->vote;
    mine->pid = getpid();
}

/*
 * Blocks now, not pages at first touch: a full /dev/shm is an error here instead
 * of SIGBUS in some collective later. Each rank reserves its own slots (the
 * creator also the part all share), so that the work (1-2 us a page here, and as
 * much again to free them) is spread over the ranks' cores instead of lying on
 * the creator's path. 0 or errno.
 */
static int reserve(const struct setup *setup, int fd)
{
    const struct offsets *o = &setup->offsets;
    size_t mine = o->slots + (size_t) setup->segment->rank * 2 * setup->segment->slot_size;
    int rc = is_creator(setup->segment) ? posix_fallocate(fd, 0, (off_t) o->slots) : 0;

    return 0 != rc ? rc
                   : posix_fallocate(fd, (off_t) mine, (off_t) (2 * setup->segment->slot_size));
}

/*
 * The creator has a file but not its segment (no space, no address space): it
 * says so in the header, on the page it reserved first, so that the other ranks
 * see it as they come and all fail alike; the last of them to see it, or the
 * creator at detach, removes the file. It waits for nobody.
 */
static int abandon(const struct setup *setup, int fd, int error, const char *what)
{
    struct segment_header *header;
    int rc = fail(setup, true, -error, "%s %zu bytes in " SHM_DIRECTORY ": %s", what,
                  setup->offsets.length, strerror(error));

    header = mmap(NULL, HEADER_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == header) {
        return rc; /* unfinished: the others give up on it at their deadline */
    }
    fill_header(setup, header);
    header->cause = (uint64_t) CAUSE_NO_SPACE << 48 | (uint64_t) (error & 0xffff) << 16
                    | (uint64_t) setup->segment->creator;
    header->state = STATE_FAILED | 1;
    __atomic_store_n(&header->magic, SEGMENT_MAGIC, __ATOMIC_RELEASE);
    if (1 == setup->segment->nranks) {
        shm_unlink(setup->segment->id.name);
        setup->segment->created = false;
    }
    munmap(header, HEADER_PAGE);
    return rc;
}

/* A file at the name before the creator: not one this job made (only it can
 * compute the name), so it is refused, whoever owns it, and left alone. */
static int refuse_existing(const struct setup *setup)
{
    char path[sizeof(SHM_DIRECTORY) + COLL_ASYNC_SHM_NAME_MAX], found[96] = "gone again";
    struct stat st;

    coll_async_shm_path(&setup->segment->id, path, sizeof(path));
    if (0 == lstat(path, &st)) {
        describe(&st, found, sizeof(found));
    }
    return fail(setup, true, -EEXIST, "%s existed before this job created it (%s): refused",
                path, found);
}

/* The creator vouches for the header of its placed segment and counts itself in
 * (the magic or the claim's generation, stored next, announces them). */
static void count_creator_in(const struct setup *setup)
{
    struct segment_header *header = setup->segment->base;

    fill_header(setup, header);
    publish_self(setup);
    header->cma = setup->segment->try_cma ? 1 : CMA_DECLINED;
    header->state = 1;
}

/* The creator, instead of a file: a segment every member parked
 * (coll_async_shm_pool.h), cleared as a new file reads but for the park words,
 * then announced. false when there is none to claim. */
static bool claim_parked(const struct setup *setup)
{
    struct coll_async_shm_segment *segment = setup->segment;
    uint64_t generation = coll_async_shm_pool_claim(segment);
    struct segment_header *header;

    if (0 == generation) {
        return false;
    }
    place(segment, &setup->offsets);
    for (int rank = 0; rank < segment->nranks; ++rank) {
        memset((void *) &segment->control[rank], 0, offsetof(struct coll_async_shm_control, park));
    }
    memset((void *) segment->accumulator, 0, 2 * sizeof(*segment->accumulator));
    header = segment->base;
    header->cause = 0;
    count_creator_in(setup);
    __atomic_store_n(&header->claimed, generation, __ATOMIC_RELEASE);
    return true;
}

/* The creator: makes the file, vouches for its header, counts itself in and
 * returns, waiting for nobody. */
static int create(const struct setup *setup)
{
    struct coll_async_shm_segment *segment = setup->segment;
    size_t length = setup->offsets.length;
    int fd, rc;

    if (NULL != segment->before_create) {
        char path[sizeof(SHM_DIRECTORY) + COLL_ASYNC_SHM_NAME_MAX];

        coll_async_shm_path(&segment->id, path, sizeof(path));
        segment->before_create(path);
    }
    fd = shm_open(segment->id.name, O_CREAT | O_EXCL | O_RDWR | O_NONBLOCK, 0600);
    if (fd < 0) {
        return EEXIST == errno ? refuse_existing(setup)
                               : fail(setup, true, -errno, "could not create " SHM_DIRECTORY
                                      "%s: %s", segment->id.name, strerror(errno));
    }
    (void) fchmod(fd, 0600); /* the umask may have narrowed it; the others check it */
    /* The header's page first: with it, any later failure can be told to the
     * others; without it, they fail at their deadline. */
    segment->created = true; /* removed at detach, whatever happens now */
    rc = posix_fallocate(fd, 0, HEADER_PAGE);
    if (0 != rc) {
        /* The file stays, unfinished: the others give up on it at their deadline. */
        close(fd);
        return fail(setup, true, -rc, "could not allocate %d bytes in " SHM_DIRECTORY ": %s",
                    HEADER_PAGE, strerror(rc));
    }
    rc = 0 == ftruncate(fd, (off_t) length) ? reserve(setup, fd) : errno;
    if (0 != rc) {
        rc = abandon(setup, fd, rc, "could not allocate");
        close(fd);
        return rc;
    }
    segment->base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == segment->base) {
        segment->base = NULL;
        rc = abandon(setup, fd, errno, "could not map");
        close(fd);
        return rc;
    }
    close(fd);
    segment->length = length;
    place(segment, &setup->offsets);
    count_creator_in(setup); /* the rest reads zero, as a new file does */
    __atomic_store_n(&((struct segment_header *) segment->base)->magic, SEGMENT_MAGIC,
                     __ATOMIC_RELEASE);
    if (1 == segment->nranks) {
        shm_unlink(segment->id.name);
        segment->created = false;
    }
    return 0;
}

/*
 * Opens the file at the name, if it is there and could be the creator's: a
 * regular file of this user, mode 0600, at least a header page long. A file that
 * cannot be (another owner, group or other bits, a link, a FIFO) is refused at
 * once: the creator, which could not have made it, met it too and reports it.
 * 0 with *fd, COLL_ASYNC_SHM_AGAIN while it may yet come, or an error.
 */
static int open_at_name(const struct setup *setup, int *fd)
{
    char path[sizeof(SHM_DIRECTORY) + COLL_ASYNC_SHM_NAME_MAX], found[96];
    int error;
    struct stat st;
    bool there;

    coll_async_shm_path(&setup->segment->id, path, sizeof(path));
    *fd = shm_open(setup->segment->id.name, O_RDWR | O_NONBLOCK, 0);
    error = errno;
    there = 0 == (*fd >= 0 ? fstat(*fd, &st) : lstat(path, &st));
    if (there && !could_be_ours(&st)) {
        describe(&st, found, sizeof(found));
        return fail(setup, false, -EEXIST, "%s is %s: refused", path, found);
    }
    if (*fd >= 0 && there && 0600 == (st.st_mode & 07777) && st.st_size >= HEADER_PAGE) {
        return 0;
    }
    /* Not there yet, or not yet finished: EACCES until the creator's fchmod. */
    if (*fd < 0 && ENOENT != error && !(EACCES == error && there)) {
        return fail(setup, true, -error, "could not open %s: %s", path, strerror(error));
    }
    if (there && unfinished_too_long(setup)) {
        return fail(setup, false, -ETIMEDOUT,
                    "local rank %d did not finish %s within %u ms "
                    "(coll_async_shm_setup_timeout)", setup->segment->creator, path,
                    setup->segment->timeout_ms);
    }
    return COLL_ASYNC_SHM_AGAIN;
}

/* Whether the creator has finished its file: its magic, read without mapping
 * anything (a poll that maps costs every thread of the process a TLB flush). 0;
 * COLL_ASYNC_SHM_AGAIN while it may yet come; or, after saying why, an error. */
static int creator_finished(const struct setup *setup, int fd)
{
    uint64_t magic = 0;

    if ((ssize_t) sizeof(magic) != pread(fd, &magic, sizeof(magic), 0)) {
        return fail(setup, true, -EIO, "could not read " SHM_DIRECTORY "%s: %s",
                    setup->segment->id.name, strerror(errno));
    }
    if (SEGMENT_MAGIC == magic) {
        return 0;
    }
    if (unfinished_too_long(setup)) {
        return fail(setup, false, -ETIMEDOUT,
                    "local rank %d did not finish " SHM_DIRECTORY "%s within %u ms "
                    "(coll_async_shm_setup_timeout)", setup->segment->creator,
                    setup->segment->id.name, setup->segment->timeout_ms);
    }
    return COLL_ASYNC_SHM_AGAIN;
}

/* Counts this rank in, as attached or as having seen the failure; the last to
 * be counted removes the name: nobody is left to open it. The count's new value. */
static uint64_t count_in(const struct setup *setup, struct segment_header *header)
{
    uint64_t state = __atomic_add_fetch(&header->state, 1, __ATOMIC_ACQ_REL);

    if (STATE_COUNT(state) == header->nranks && !setup->segment->reused) {
        shm_unlink(setup->segment->id.name);
    }
    return state;
}

/* This rank will not come in: counted (now, or already by record_failure), it
 * reports the failure. */
static int leave_failed(const struct setup *setup, struct segment_header *header, bool counted)
{
    if (!counted) {
        (void) count_in(setup, header);
    } else if (STATE_COUNT(__atomic_load_n(&header->state, __ATOMIC_ACQUIRE)) == header->nranks) {
        shm_unlink(setup->segment->id.name);
    }
    return report_failure(setup, header);
}

/* Whether this rank reads the creator's memory through CMA: the probe of the
 * pid the creator published at the address it published. */
static bool probe_creator(const struct setup *setup)
{
    const struct coll_async_shm_segment *segment = setup->segment;
    const struct coll_async_shm_control *creator = &segment->control[segment->creator];
    int32_t probe = 0;

    return segment->try_cma
           && 0 == coll_async_shm_cma_read(segment, segment->creator, &probe,
                                           creator->address[0], sizeof(probe))
           && probe == creator->pid;
}

/* A member, in its placed segment: its pid, vote and CMA probe published, it
 * counts itself in. 0, or the failure another rank recorded first. */
static int count_member_in(const struct setup *setup)
{
    struct segment_header *header = setup->segment->base;

    publish_self(setup);
    if (probe_creator(setup)) {
        __atomic_add_fetch(&header->cma, 1, __ATOMIC_ACQ_REL);
    } else {
        __atomic_or_fetch(&header->cma, CMA_DECLINED, __ATOMIC_ACQ_REL);
    }
    return count_in(setup, header) & STATE_FAILED ? report_failure(setup, header) : 0;
}

/* A member, instead of the file: its parked copy of the segment the creator
 * claimed for this communicator, counted in. COLL_ASYNC_SHM_AGAIN while there is
 * none. */
static int take_parked(const struct setup *setup)
{
    struct segment_header mine = {0};

    fill_header(setup, &mine);
    if (!coll_async_shm_pool_take(setup->segment, mine.token)) {
        return COLL_ASYNC_SHM_AGAIN;
    }
    setup->segment->joined = true;
    place(setup->segment, &setup->offsets);
    return count_member_in(setup);
}

/*
 * An attaching rank, once: opens and checks the file, then either counts itself
 * in the creator's segment (its CMA vote first) or, when it cannot use it, says
 * so in the header (a file the creator vouches for) or leaves it alone (one it
 * does not). COLL_ASYNC_SHM_AGAIN while the creator's file is not there or not
 * finished yet.
 */
static int attach_once(const struct setup *setup)
{
    struct coll_async_shm_segment *segment = setup->segment;
    struct segment_header *header, mine = {0};
    struct stat st;
    size_t mapped;
    int fd, rc = open_at_name(setup, &fd);

    if (0 == rc) {
        rc = creator_finished(setup, fd);
    }
    if (0 != rc) {
        if (fd >= 0) {
            close(fd);
        }
        return rc;
    }
    segment->joined = true; /* counted in or out below, or refusing the file */
    /* The whole segment when it has this rank's length; else, or without the
     * address space for it, its header, which says whose parameters made it and
     * where this rank says why it will not come in. */
    mapped = 0 == fstat(fd, &st) && (size_t) st.st_size == setup->offsets.length
                 ? setup->offsets.length : HEADER_PAGE;
    header = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (MAP_FAILED == header && HEADER_PAGE != mapped) {
        mapped = HEADER_PAGE;
        header = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (MAP_FAILED == header) {
        rc = fail(setup, true, -errno, "could not map " SHM_DIRECTORY "%s: %s",
                  segment->id.name, strerror(errno));
        close(fd);
        return rc;
    }
    (void) __atomic_load_n(&header->magic, __ATOMIC_ACQUIRE); /* the fields after it */
    /* The token proves the header the creator's, whatever its parameters. */
    if (SEGMENT_VERSION != header->version
        || header->token != header_token(&segment->id, header)
        || header->nranks != (uint32_t) segment->nranks) {
        rc = fail(setup, false, -EPROTO,
                  SHM_DIRECTORY "%s was not made by local rank %d for this communicator: "
                  "refused", segment->id.name, segment->creator);
        goto out;
    }
    fill_header(setup, &mine);
    if (header->token != mine.token) {
        (void) record_failure(header, CAUSE_PARAMETERS, 0, segment->rank, true);
        rc = leave_failed(setup, header, true);
        goto out;
    }
    if (__atomic_load_n(&header->state, __ATOMIC_ACQUIRE) & STATE_FAILED) {
        rc = leave_failed(setup, header, false);
        goto out;
    }
    rc = reserve(setup, fd);
    if (0 != rc) {
        (void) record_failure(header, CAUSE_NO_SPACE, rc, segment->rank, true);
        rc = leave_failed(setup, header, true);
        goto out;
    }
    /* Vouched for, made with this rank's parameters, not failed: it is whole. */
    if (mapped != setup->offsets.length) {
        /* It will not come in: the others fail rather than wait for it. */
        (void) record_failure(header, CAUSE_NONE, 0, segment->rank, true);
        (void) leave_failed(setup, header, true);
        rc = fail(setup, true, -EIO, "could not map the %zu bytes of " SHM_DIRECTORY "%s",
                  setup->offsets.length, segment->id.name);
        goto out;
    }
    segment->base = header;
    segment->length = mapped;
    place(segment, &setup->offsets);
    rc = count_member_in(setup);
out:
    if (header != segment->base) {
        munmap(header, mapped);
    }
    close(fd);
    return rc;
}

static void unmap(struct coll_async_shm_segment *segment)
{
    if (NULL != segment->base) {
        munmap(segment->base, segment->length);
        segment->base = NULL;
    }
}

/* This rank's failure, for good: settle returns it, saying why again. */
static int keep_failure(struct coll_async_shm_segment *segment,
                        const struct coll_async_shm_failure *failure, int rc)
{
    unmap(segment);
    segment->settled = rc;
    memcpy(segment->why, failure->why, sizeof(segment->why));
    return rc;
}

int coll_async_shm_prepare(struct coll_async_shm_segment *segment,
                           const struct coll_async_shm_identity *id, int nranks, int rank,
                           int creator, int32_t vote,
                           const struct coll_async_shm_config *config,
                           struct coll_async_shm_failure *failure)
{
    struct setup setup = {.segment = segment, .failure = failure};
    int rc;

    memset(segment, 0, sizeof(*segment));
    memset(failure, 0, sizeof(*failure));
    segment->nranks = nranks;
    segment->rank = rank;
    segment->creator = creator;
    segment->slot_size = config->slot_size;
    segment->piece_size = config->piece_size;
    segment->try_cma = config->try_cma;
    segment->vote = vote;
    segment->timeout_ms = config->timeout_ms;
    segment->settled = 1;
    segment->id = *id;
    if (0 != compute_offsets(nranks, config->slot_size, &setup.offsets)) {
        /* Every rank given these values finds the same. */
        rc = fail(&setup, rank == creator, -EOVERFLOW,
                  "%d ranks with %zu-byte slots make a segment larger than memory can address",
                  nranks, config->slot_size);
        failure->together = true;
        segment->settled = rc;
        return rc;
    }
    return 0; /* the rest at the first collective: a communicator never used costs
               * nothing */
}

int coll_async_shm_settle(struct coll_async_shm_segment *segment,
                          struct coll_async_shm_failure *failure)
{
    struct setup setup = {.segment = segment, .failure = failure};
    struct segment_header *header;
    uint64_t state;
    int rc;

    if (segment->settled <= 0) {
        if (segment->settled < 0) {
            memcpy(failure->why, segment->why, sizeof(failure->why));
        }
        return segment->settled;
    }
    if (!segment->joined) {
        (void) compute_offsets(segment->nranks, segment->slot_size, &setup.offsets);
        if (is_creator(segment)) {
            rc = claim_parked(&setup) ? 0 : create(&setup);
            segment->joined = 0 == rc;
        } else {
            rc = take_parked(&setup);
            if (COLL_ASYNC_SHM_AGAIN == rc) {
                rc = attach_once(&setup);
            }
        }
        if (COLL_ASYNC_SHM_AGAIN == rc) {
            return rc;
        }
        if (0 != rc) {
            return keep_failure(segment, failure, rc);
        }
    }
    /* Those missing make or attach at their own first collective: no deadline, as
     * a collective has none for its peers (a rank that dies ends the job, or,
     * under ULFM, the op: coll_async_engine.c). */
    header = segment->base;
    state = __atomic_load_n(&header->state, __ATOMIC_ACQUIRE);
    if (!(state & STATE_FAILED) && STATE_COUNT(state) < header->nranks) {
        return COLL_ASYNC_SHM_AGAIN;
    }
    if (state & STATE_FAILED) {
        return keep_failure(segment, failure, report_failure(&setup, header));
    }
    /* Every rank voted on CMA before it was counted in. */
    segment->cma = !(__atomic_load_n(&header->cma, __ATOMIC_ACQUIRE) & CMA_DECLINED);
    segment->settled = 0;
    return 0;
}

bool coll_async_shm_all_voted(const struct coll_async_shm_segment *segment)
{
    for (int rank = 0; rank < segment->nranks; ++rank) {
        if (0 == segment->control[rank].vote) {
            return false;
        }
    }
    return true;
}

void coll_async_shm_detach(struct coll_async_shm_segment *segment)
{
    const struct segment_header *header = segment->base;

    /* Its file stays at the name while ranks have yet to attach or to see its
     * failure; none will, once the creator's communicator is gone. */
    if (segment->created
        && (NULL == header
            || STATE_COUNT(__atomic_load_n(&header->state, __ATOMIC_ACQUIRE)) < header->nranks)) {
        shm_unlink(segment->id.name);
    }
    segment->created = false;
    if (0 == segment->settled && coll_async_shm_pool_park(segment)) {
        segment->base = NULL; /* the pool's now */
        return;
    }
    unmap(segment);
}
