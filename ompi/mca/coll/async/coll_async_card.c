/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: this process's card in the modex, and the others' cards, read
 * once each. See coll_async_card.h.
 *
 * The encoding, byte-order independent:
 *   magic (2) version (1) node name length (1) key (16) NUMA domain (4)
 *   node name, then per blob: its length (2) and its bytes.
 * A card is checked before anything in it is used: the modex holds only what
 * the job's processes published, but nothing read is trusted to be in bounds.
 */

#include "ompi_config.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ompi/proc/proc.h"

#include "coll_async.h"
#include "coll_async_card.h"

#define CARD_KEY "coll_async_card"
#define CARD_MAGIC0 0xca
#define CARD_MAGIC1 0x4d
#define CARD_VERSION 1
#define HEADER_BYTES 24
/* After the blobs: the tuning file's digest (a card without it: none). */
#define TUNING_BYTES 8
#define CARD_BYTES_MAX                       \
    (HEADER_BYTES + COLL_ASYNC_NODE_NAME_MAX \
     + COLL_ASYNC_CARD_NUM_BLOBS * (2 + COLL_ASYNC_CARD_BLOB_MAX) + TUNING_BYTES)

/* A card read from the modex, kept per process; also kept when there was
 * none, so that a process without coll/async costs one lookup, not one each
 * time it is met. */
struct entry {
    struct coll_async_card card;
    bool none;
    opal_process_name_t name;
    struct entry *next; /* processes of other jobs */
};

static struct {
    pthread_mutex_t lock;       /* the caches and the node names below */
    char node_name[COLL_ASYNC_NODE_NAME_MAX];
    struct coll_async_card mine;
    uint8_t blobs[COLL_ASYNC_CARD_NUM_BLOBS][COLL_ASYNC_CARD_BLOB_MAX];
    struct entry **job;         /* per vpid of this job */
    uint32_t job_size;
    struct entry *others;       /* processes of other jobs (spawned, connected) */
    char (*nodes)[COLL_ASYNC_NODE_NAME_MAX]; /* the names behind card.node */
    int node_count, node_capacity;
} cards = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void put_be(uint8_t *p, uint32_t value, int bytes)
{
    for (int i = bytes - 1; i >= 0; --i, value >>= 8) {
        p[i] = (uint8_t) value;
    }
}

static uint32_t get_be(const uint8_t *p, int bytes)
{
    uint32_t value = 0;

    for (int i = 0; i < bytes; ++i) {
        value = value << 8 | p[i];
    }
    return value;
}

int mca_coll_async_card_init(void)
{
    int rc = coll_async_random(&cards.mine.key, sizeof(cards.mine.key));

    if (0 != rc) {
        return OMPI_ERROR;
    }
    mca_coll_async_node_name(cards.node_name, sizeof(cards.node_name));
    cards.mine.numa = mca_coll_async_node_numa();
    cards.job_size = ompi_process_info.num_procs;
    cards.job = calloc(cards.job_size, sizeof(*cards.job));
    return NULL == cards.job ? OMPI_ERR_OUT_OF_RESOURCE : OMPI_SUCCESS;
}

struct coll_async_card *mca_coll_async_card_mine(void)
{
    return &cards.mine;
}

int mca_coll_async_card_set_blob(enum coll_async_card_blob which, const void *blob,
                                 size_t length)
{
    if (length > COLL_ASYNC_CARD_BLOB_MAX) {
        return OMPI_ERR_BAD_PARAM;
    }
    memcpy(cards.blobs[which], blob, length);
    cards.mine.blob[which] = cards.blobs[which];
    cards.mine.blob_length[which] = (uint16_t) length;
    return OMPI_SUCCESS;
}

int mca_coll_async_card_publish(void)
{
    size_t name_length = strlen(cards.node_name), length = HEADER_BYTES + name_length;
    uint8_t encoded[CARD_BYTES_MAX];
    int rc;

    encoded[0] = CARD_MAGIC0;
    encoded[1] = CARD_MAGIC1;
    encoded[2] = CARD_VERSION;
    encoded[3] = (uint8_t) name_length;
    memcpy(encoded + 4, cards.mine.key.bytes, COLL_ASYNC_KEY_BYTES);
    put_be(encoded + 20, (uint32_t) cards.mine.numa, 4);
    memcpy(encoded + HEADER_BYTES, cards.node_name, name_length);
    for (int b = 0; b < COLL_ASYNC_CARD_NUM_BLOBS; ++b) {
        put_be(encoded + length, cards.mine.blob_length[b], 2);
        memcpy(encoded + length + 2, cards.blobs[b], cards.mine.blob_length[b]);
        length += 2 + cards.mine.blob_length[b];
    }
    put_be(encoded + length, (uint32_t) (cards.mine.tuning >> 32), 4);
    put_be(encoded + length + 4, (uint32_t) cards.mine.tuning, 4);
    length += TUNING_BYTES;
    COLL_ASYNC_MODEX_SEND_BLOB(rc, CARD_KEY, encoded, length);
    return OPAL_SUCCESS == rc ? OMPI_SUCCESS : OMPI_ERROR;
}

/* The number of a node name, new ones added; -1 when out of memory. Under the lock. */
static int node_number(const char *name)
{
    for (int i = 0; i < cards.node_count; ++i) {
        if (0 == strcmp(cards.nodes[i], name)) {
            return i;
        }
    }
    if (cards.node_count == cards.node_capacity) {
        int capacity = 0 == cards.node_capacity ? 16 : 2 * cards.node_capacity;
        void *grown = realloc(cards.nodes, sizeof(*cards.nodes) * (size_t) capacity);

        if (NULL == grown) {
            return -1;
        }
        cards.nodes = grown;
        cards.node_capacity = capacity;
    }
    strcpy(cards.nodes[cards.node_count], name);
    return cards.node_count++;
}

/* A new entry holding the card encoded in p, its blobs copied after it; NULL
 * when the card is malformed. Under the lock. */
static struct entry *decode(const uint8_t *p, size_t length)
{
    char name[COLL_ASYNC_NODE_NAME_MAX];
    size_t name_length, at, blob_bytes = 0;
    uint16_t blob_length[COLL_ASYNC_CARD_NUM_BLOBS];
    struct entry *entry;
    uint8_t *copy;

    if (length < HEADER_BYTES || CARD_MAGIC0 != p[0] || CARD_MAGIC1 != p[1]
        || CARD_VERSION != p[2] || (name_length = p[3]) >= sizeof(name)
        || length < HEADER_BYTES + name_length) {
        return NULL;
    }
    at = HEADER_BYTES + name_length;
    for (int b = 0; b < COLL_ASYNC_CARD_NUM_BLOBS; ++b) {
        if (length < at + 2
            || (blob_length[b] = (uint16_t) get_be(p + at, 2)) > COLL_ASYNC_CARD_BLOB_MAX
            || length < at + 2 + blob_length[b]) {
            return NULL;
        }
        at += 2 + blob_length[b];
        blob_bytes += blob_length[b];
    }
    memcpy(name, p + HEADER_BYTES, name_length);
    name[name_length] = '\0';
    entry = calloc(1, sizeof(*entry) + blob_bytes);
    if (NULL == entry || (entry->card.node = node_number(name)) < 0) {
        free(entry);
        return NULL;
    }
    memcpy(entry->card.key.bytes, p + 4, COLL_ASYNC_KEY_BYTES);
    entry->card.numa = (int) (int32_t) get_be(p + 20, 4);
    copy = (uint8_t *) (entry + 1);
    at = HEADER_BYTES + name_length;
    for (int b = 0; b < COLL_ASYNC_CARD_NUM_BLOBS; ++b) {
        entry->card.blob_length[b] = blob_length[b];
        entry->card.blob[b] = 0 == blob_length[b] ? NULL : copy;
        memcpy(copy, p + at + 2, blob_length[b]);
        copy += blob_length[b];
        at += 2 + blob_length[b];
    }
    if (length >= at + TUNING_BYTES) {
        entry->card.tuning = (uint64_t) get_be(p + at, 4) << 32 | get_be(p + at + 4, 4);
    }
    return entry;
}

/* Where proc's entry is kept; under the lock. */
static struct entry **slot_of(const opal_process_name_t *name)
{
    struct entry **at;

    if (name->jobid == OMPI_PROC_MY_NAME->jobid && name->vpid < cards.job_size) {
        return &cards.job[name->vpid];
    }
    for (at = &cards.others; NULL != *at; at = &(*at)->next) {
        if ((*at)->name.jobid == name->jobid && (*at)->name.vpid == name->vpid) {
            break;
        }
    }
    return at;
}

const struct coll_async_card *mca_coll_async_card_of(struct ompi_proc_t *proc)
{
    const opal_process_name_t *name = &proc->super.proc_name;
    struct entry **slot, *entry;
    uint8_t *encoded = NULL;
    size_t length = 0;
    int rc;

    pthread_mutex_lock(&cards.lock);
    slot = slot_of(name);
    if (NULL == *slot) {
        /* The modex lookup is local: the data came with MPI_Init's exchange. */
        COLL_ASYNC_MODEX_RECV_BLOB(rc, CARD_KEY, name, (void **) &encoded, &length);
        entry = OPAL_SUCCESS == rc ? decode(encoded, length) : NULL;
        free(encoded);
        if (NULL == entry && NULL != (entry = calloc(1, sizeof(*entry)))) {
            entry->none = true;
        }
        if (NULL != entry) {
            entry->name = *name;
            *slot = entry;
        }
    }
    entry = *slot;
    pthread_mutex_unlock(&cards.lock);
    return NULL == entry || entry->none ? NULL : &entry->card;
}

void mca_coll_async_card_fini(void)
{
    for (uint32_t vpid = 0; vpid < cards.job_size && NULL != cards.job; ++vpid) {
        free(cards.job[vpid]);
    }
    free(cards.job);
    cards.job = NULL;
    cards.job_size = 0;
    while (NULL != cards.others) {
        struct entry *next = cards.others->next;

        free(cards.others);
        cards.others = next;
    }
    free(cards.nodes);
    cards.nodes = NULL;
    cards.node_count = cards.node_capacity = 0;
}
