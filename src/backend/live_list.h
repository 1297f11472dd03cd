/* An intrusive, mutex-protected list of live objects (queues, events), for any backend (HOST,
 * the fault wrapper), so that closing the backend can release whatever the core did not.
 * Header-only: the fault wrapper lives in another shared library (libstreampipe_fault.so), and
 * these few lines are cheaper to compile into both than to export from libstreampipe.so. */
#ifndef SP_LIVE_LIST_H
#define SP_LIVE_LIST_H

#include <pthread.h>
#include <stddef.h>

#include "backend/backend.h"
#include "streampipe.h"

typedef struct sp_live_link {
    struct sp_live_link *prev;
    struct sp_live_link *next;
} sp_live_link;

typedef struct sp_live_list {
    pthread_mutex_t lock;
    sp_live_link head; /* sentinel: an empty list points at itself */
} sp_live_list;

/* The object that embeds `link` as `member`. */
#define SP_CONTAINER_OF(link, type, member) \
    ((type *)(void *)((char *)(link) - offsetof(type, member)))

static inline sp_status sp_live_list_init(sp_live_list *list)
{
    if (pthread_mutex_init(&list->lock, NULL) != 0) {
        sp_backend_fail("host backend: pthread_mutex_init failed for an object list");
        return SP_ERR_BACKEND;
    }
    list->head.prev = &list->head;
    list->head.next = &list->head;
    return SP_OK;
}

/* The list must be empty. */
static inline void sp_live_list_destroy(sp_live_list *list)
{
    pthread_mutex_destroy(&list->lock);
}

static inline void sp_live_list_add(sp_live_list *list, sp_live_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev = &list->head;
    link->next = list->head.next;
    list->head.next->prev = link;
    list->head.next = link;
    pthread_mutex_unlock(&list->lock);
}

static inline void sp_live_list_remove(sp_live_list *list, sp_live_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link;
    link->next = link;
    pthread_mutex_unlock(&list->lock);
}

/* Some member of the list, still linked, or NULL when the list is empty. */
static inline sp_live_link *sp_live_list_any(sp_live_list *list)
{
    pthread_mutex_lock(&list->lock);
    sp_live_link *link = list->head.next == &list->head ? NULL : list->head.next;
    pthread_mutex_unlock(&list->lock);
    return link;
}

#endif /* SP_LIVE_LIST_H */
