/* The --live panel's thread (live_view.c). */
#ifndef SP_CLI_LIVE_VIEW_H
#define SP_CLI_LIVE_VIEW_H

#include "live.h"

/* Starts redrawing from the watch (NULL: no thread could be started). */
struct live_view *live_view_start(live_watch *watch);
/* Stops, erasing the panel. NULL is a no-op. */
void live_view_stop(struct live_view *view);

#endif
