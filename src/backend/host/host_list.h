/* An intrusive, mutex-protected list of live objects (queues, events), so that closing the
 * backend can release whatever the core did not. */
#ifndef SP_HOST_LIST_H
#define SP_HOST_LIST_H

#include <pthread.h>
#include <stddef.h>

#include "streampipe.h"

typedef struct host_link {
    struct host_link *prev;
    struct host_link *next;
} host_link;

typedef struct host_list {
    pthread_mutex_t lock;
    host_link head; /* sentinel: an empty list points at itself */
} host_list;

/* The object that embeds `link` as `member`. */
#define HOST_CONTAINER_OF(link, type, member) \
    ((type *)(void *)((char *)(link) - offsetof(type, member)))

sp_status sp_host_list_init(host_list *list);
/* The list must be empty. */
void sp_host_list_destroy(host_list *list);
void sp_host_list_add(host_list *list, host_link *link);
void sp_host_list_remove(host_list *list, host_link *link);
/* Some member of the list, still linked, or NULL when the list is empty. */
host_link *sp_host_list_any(host_list *list);

#endif /* SP_HOST_LIST_H */
