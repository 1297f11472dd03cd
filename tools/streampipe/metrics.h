/* --metrics HOST:PORT (live.h): the live counters in the Prometheus text format (version
 * 0.0.4), served by libmicrohttpd's own thread while the command runs. Built without
 * libmicrohttpd (metrics_absent.c), asking for it fails saying so. */
#ifndef SP_CLI_METRICS_H
#define SP_CLI_METRICS_H

#include <stddef.h>
#include <sys/socket.h>

#include "live.h"

/* "127.0.0.1:9100", "[::1]:9100", "localhost:0" or ":9100" (loopback) into *addr; refuses
 * (CLI_EXIT_USAGE, said on stderr) what does not parse, and a HOST that is not loopback
 * unless `any`. */
int metrics_parse_address(const char *text, int any, struct sockaddr_storage *addr,
                          socklen_t *len);
/* The exposition text of one sample into buf (NUL-terminated, cut at size); returns the
 * length the whole text takes, as snprintf does. */
size_t metrics_format(const live_sample *s, char *buf, size_t size);

/* Serves the watch at the address (CLI_EXIT_OK; else said on stderr: a port in use, no
 * libmicrohttpd) until metrics_stop. */
int metrics_start(live_watch *watch, const struct sockaddr_storage *addr, socklen_t len,
                  struct live_metrics **out);
void metrics_stop(struct live_metrics *m);

#endif
