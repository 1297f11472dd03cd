/* A text that one thread writes and others copy: the pipeline's last error. The lock orders
 * the writers (a stream's engine thread, the user's calls) and the library's own readers;
 * the public getter hands out the text itself, whose threads streampipe.h names. */
#ifndef SP_ERROR_BOX_H
#define SP_ERROR_BOX_H

#include <pthread.h>
#include <stddef.h>

#include "core/context.h" /* SP_ERROR_TEXT */

typedef struct sp_error_box {
    pthread_mutex_t lock;
    char text[SP_ERROR_TEXT];
} sp_error_box;

void sp_error_box_init(sp_error_box *box);
void sp_error_box_destroy(sp_error_box *box);
void sp_error_box_set(sp_error_box *box, const char *text);
/* Copies the text into buf (n bytes), under the lock. */
void sp_error_box_copy(sp_error_box *box, char *buf, size_t n);

#endif
