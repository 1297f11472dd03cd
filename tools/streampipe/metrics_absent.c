/* The endpoint (metrics.h) in a build without libmicrohttpd: asking for it fails, naming
 * what to install. */
#include <stdio.h>

#include "cli.h"
#include "metrics.h"

int metrics_start(live_watch *watch, const struct sockaddr_storage *addr, socklen_t len,
                  struct live_metrics **out)
{
    (void)watch, (void)addr, (void)len;
    *out = NULL;
    fprintf(stderr, "streampipe: --metrics: this streampipe was built without libmicrohttpd "
            "(Debian: libmicrohttpd-dev; configure again)\n");
    return CLI_EXIT_FAILURE;
}

void metrics_stop(struct live_metrics *m) { (void)m; }
