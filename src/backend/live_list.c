/* The live-object list behind live_list.h. */
#include "backend/live_list.h"

#include "backend/backend.h"

sp_status sp_live_list_init(sp_live_list *list)
{
    if (pthread_mutex_init(&list->lock, NULL) != 0) {
        sp_backend_fail("host backend: pthread_mutex_init failed for an object list");
        return SP_ERR_BACKEND;
    }
    list->head.prev = &list->head;
    list->head.next = &list->head;
    return SP_OK;
}

void sp_live_list_destroy(sp_live_list *list) { pthread_mutex_destroy(&list->lock); }

void sp_live_list_add(sp_live_list *list, sp_live_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev = &list->head;
    link->next = list->head.next;
    list->head.next->prev = link;
    list->head.next = link;
    pthread_mutex_unlock(&list->lock);
}

void sp_live_list_remove(sp_live_list *list, sp_live_link *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link;
    link->next = link;
    pthread_mutex_unlock(&list->lock);
}

sp_live_link *sp_live_list_any(sp_live_list *list)
{
    pthread_mutex_lock(&list->lock);
    sp_live_link *link = list->head.next == &list->head ? NULL : list->head.next;
    pthread_mutex_unlock(&list->lock);
    return link;
}
