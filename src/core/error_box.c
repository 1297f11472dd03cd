/* The pipeline's last-error text, behind its lock (error_box.h). */
#include <stdio.h>
#include <string.h>

#include "core/error_box.h"

void sp_error_box_init(sp_error_box *box)
{
    pthread_mutex_init(&box->lock, NULL);
    box->text[0] = '\0';
}

void sp_error_box_destroy(sp_error_box *box) { pthread_mutex_destroy(&box->lock); }

void sp_error_box_set(sp_error_box *box, const char *text)
{
    pthread_mutex_lock(&box->lock);
    snprintf(box->text, sizeof box->text, "%s", text);
    pthread_mutex_unlock(&box->lock);
}

void sp_error_box_copy(sp_error_box *box, char *buf, size_t n)
{
    pthread_mutex_lock(&box->lock);
    snprintf(buf, n, "%s", box->text);
    pthread_mutex_unlock(&box->lock);
}
