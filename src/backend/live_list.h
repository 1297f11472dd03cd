/* An intrusive, mutex-protected list of live objects (queues, events), for any backend (HOST,
 * the fault wrapper), so that closing the backend can release whatever the core did not. */
#ifndef SP_LIVE_LIST_H
#define SP_LIVE_LIST_H

#include <pthread.h>
#include <stddef.h>

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

sp_status sp_live_list_init(sp_live_list *list);
/* The list must be empty. */
void sp_live_list_destroy(sp_live_list *list);
void sp_live_list_add(sp_live_list *list, sp_live_link *link);
void sp_live_list_remove(sp_live_list *list, sp_live_link *link);
/* Some member of the list, still linked, or NULL when the list is empty. */
sp_live_link *sp_live_list_any(sp_live_list *list);

#endif /* SP_LIVE_LIST_H */
