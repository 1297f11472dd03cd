/* cli_live (live.h): the watch, and the panel and endpoint the options ask for. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"
#include "live_view.h"
#include "metrics.h"

int cli_live_start(cli_live *live, const cli_live_options *o, int json)
{
    memset(live, 0, sizeof *live);
    live_watch_init(&live->watch);
    atomic_init(&live->panel_shown, 0);
    if (o->metrics_any && !o->metrics)
        return cli_usage_error("--metrics-any needs --metrics HOST:PORT");
    if (o->live && o->no_live)
        return cli_usage_error("--live and --no-live: one or the other");
    if (o->metrics) {
        struct sockaddr_storage addr;
        socklen_t len = 0;
        int rc = metrics_parse_address(o->metrics, o->metrics_any, &addr, &len);
        if (rc == CLI_EXIT_OK)
            rc = metrics_start(&live->watch, &addr, len, &live->metrics);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    /* a panel only where it can be redrawn in place; elsewhere the report alone. Unasked
     * for, it waits until the runs have gone on a while: a short command prints as ever */
    if (!o->no_live && !json && isatty(STDERR_FILENO))
        live->view = live_view_start(&live->watch, o->live ? 0.0 : LIVE_AUTO_AFTER_S,
                                     &live->panel_shown);
    return CLI_EXIT_OK;
}

void cli_live_end(cli_live *live)
{
    live_view_stop(live->view);
    metrics_stop(live->metrics);
    live->view = NULL;
    live->metrics = NULL;
}

void cli_live_stop(cli_live *live)
{
    cli_live_end(live);
    live_watch_destroy(&live->watch);
}

int cli_live_panel_on(const cli_live *live) { return atomic_load(&live->panel_shown); }

const atomic_int *cli_live_panel_flag(const cli_live *live) { return &live->panel_shown; }
