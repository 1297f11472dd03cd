/* The live-object list behind host_list.h. */
#include "backend/host/host_list.h"

#include "backend/backend.h"

sp_status sp_host_list_init(host_list *list)
{
    if (pthread_mutex_init(&list->lock, NULL) != 0) {
        sp_backend_fail("host backend: pthread_mutex_init failed for an object list");
        return SP_ERR_BACKEND;
    }
    list->head.prev = &list->head;
    list->head.next = &list->head;
    return SP_OK;
}

void sp_host_list_destroy(host_list *list) { pthread_mutex_destroy(&list->lock); }

void sp_host_list_add(host_list *list, host_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev = &list->head;
    link->next = list->head.next;
    list->head.next->prev = link;
    list->head.next = link;
    pthread_mutex_unlock(&list->lock);
}

void sp_host_list_remove(host_list *list, host_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link;
    link->next = link;
    pthread_mutex_unlock(&list->lock);
}

host_link *sp_host_list_any(host_list *list)
{
    pthread_mutex_lock(&list->lock);
    host_link *link = list->head.next == &list->head ? NULL : list->head.next;
    pthread_mutex_unlock(&list->lock);
    return link;
}
