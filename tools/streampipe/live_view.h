/* The --live panel's thread (live_view.c). */
#ifndef SP_CLI_LIVE_VIEW_H
#define SP_CLI_LIVE_VIEW_H

#include "live.h"

/* Starts redrawing from the watch (NULL: no thread could be started): from the first run
 * seen when after_s is 0, else once a watched run has gone on after_s seconds (counted from
 * the first run's start). *shown is set to 1 when the panel first shows (at once for
 * after_s 0), and never reset. */
struct live_view *live_view_start(live_watch *watch, double after_s, atomic_int *shown);
/* Stops, erasing the panel. NULL is a no-op. */
void live_view_stop(struct live_view *view);

#endif
