/*
 * Copyright (c) 2026 The coll/async developers. All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * coll/async: a first-in first-out queue of a transport's operations, linked
 * through the operations' own `next` field, so queueing never allocates.
 *
 * Each transport has its own operation type, so the queue is written once here
 * and declared per type: COLL_ASYNC_OP_QUEUE(struct coll_async_tcp_op) declares
 * struct op_queue and queue_push, queue_pop and queue_remove for that type, local
 * to the file.
 */

#ifndef MCA_COLL_ASYNC_OP_QUEUE_H
#define MCA_COLL_ASYNC_OP_QUEUE_H

#include <stddef.h>

#define COLL_ASYNC_OP_QUEUE(op_type)                                                     \
    struct op_queue {                                                                     \
        op_type *head, *tail;                                                             \
    };                                                                                    \
                                                                                          \
    static inline void queue_push(struct op_queue *queue, op_type *op)                    \
    {                                                                                     \
        op->next = NULL;                                                                  \
        if (NULL == queue->tail) {                                                        \
            queue->head = op;                                                             \
        } else {                                                                          \
            queue->tail->next = op;                                                       \
        }                                                                                 \
        queue->tail = op;                                                                 \
    }                                                                                     \
                                                                                          \
    static inline op_type *queue_pop(struct op_queue *queue)                              \
    {                                                                                     \
        op_type *op = queue->head;                                                        \
                                                                                          \
        if (NULL != op) {                                                                 \
            queue->head = op->next;                                                       \
            if (NULL == queue->head) {                                                    \
                queue->tail = NULL;                                                       \
            }                                                                             \
        }                                                                                 \
        return op;                                                                        \
    }                                                                                     \
                                                                                          \
    /* Takes op out wherever it stands; nothing when it is not queued here. */           \
    static inline void queue_remove(struct op_queue *queue, op_type *op)                  \
    {                                                                                     \
        op_type *prev = NULL;                                                             \
                                                                                          \
        for (op_type *at = queue->head; NULL != at; prev = at, at = at->next) {           \
            if (at == op) {                                                               \
                if (NULL == prev) {                                                       \
                    queue->head = op->next;                                               \
                } else {                                                                  \
                    prev->next = op->next;                                                \
                }                                                                         \
                if (queue->tail == op) {                                                  \
                    queue->tail = prev;                                                   \
                }                                                                         \
                return;                                                                   \
            }                                                                             \
        }                                                                                 \
    }

#endif /* MCA_COLL_ASYNC_OP_QUEUE_H */
