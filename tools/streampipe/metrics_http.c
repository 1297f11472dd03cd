/* The endpoint (metrics.h) on libmicrohttpd: its own polling thread answers GET /metrics
 * from a fresh sample of the watch; nothing of it runs on the command's thread or the
 * engine's. A client that connects and never reads is dropped after CONNECTION_TIMEOUT_S;
 * at most MAX_CONNECTIONS at once, so a flood of scrapes costs the run a thread's share of
 * a core at most. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"

#define CONNECTION_TIMEOUT_S 5
#define MAX_CONNECTIONS 16

struct live_metrics {
    struct MHD_Daemon *daemon;
    live_watch *watch;
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, char *body, size_t len)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", code == MHD_HTTP_OK
                                                   ? "text/plain; version=0.0.4; charset=utf-8"
                                                   : "text/plain; charset=utf-8");
    enum MHD_Result ok = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ok;
}

static char *text_copy(const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    struct live_metrics *m = cls;
    (void)version, (void)upload, (void)upload_size, (void)state;
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        char *body = text_copy("only GET\n");
        return body ? reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, body, strlen(body)) : MHD_NO;
    }
    if (strcmp(url, "/metrics") != 0) {
        char *body = text_copy("not found: the counters are at /metrics\n");
        return body ? reply(c, MHD_HTTP_NOT_FOUND, body, strlen(body)) : MHD_NO;
    }
    live_sample s;
    live_watch_sample(m->watch, &s);
    size_t len = metrics_format(&s, NULL, 0);
    char *body = malloc(len + 1);
    if (!body)
        return MHD_NO;
    metrics_format(&s, body, len + 1);
    return reply(c, MHD_HTTP_OK, body, len);
}

static void say_where(struct MHD_Daemon *d, const struct sockaddr_storage *addr)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[64] = "?";
    if (addr->ss_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)addr)->sin6_addr,
                  host, sizeof host);
    else
        inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)addr)->sin_addr, host,
                  sizeof host);
    fprintf(stderr, "streampipe: metrics at http://%s%s%s:%u/metrics\n",
            addr->ss_family == AF_INET6 ? "[" : "", host, addr->ss_family == AF_INET6 ? "]" : "",
            info ? (unsigned)info->port : 0u);
}

int metrics_start(live_watch *watch, const struct sockaddr_storage *addr, socklen_t len,
                  struct live_metrics **out)
{
    (void)len;
    struct live_metrics *m = calloc(1, sizeof *m);
    if (!m)
        return cli_report_failure("--metrics", SP_ERR_OUT_OF_MEMORY, "");
    m->watch = watch;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     (addr->ss_family == AF_INET6 ? MHD_USE_IPv6 : 0);
    m->daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, m, MHD_OPTION_SOCK_ADDR, addr,
                                 MHD_OPTION_CONNECTION_TIMEOUT,
                                 (unsigned)CONNECTION_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
                                 (unsigned)MAX_CONNECTIONS, MHD_OPTION_END);
    if (!m->daemon) {
        free(m);
        fprintf(stderr, "streampipe: --metrics: cannot listen there (the port in use, or "
                "the address not this host's)\n");
        return CLI_EXIT_FAILURE;
    }
    say_where(m->daemon, addr);
    *out = m;
    return CLI_EXIT_OK;
}

void metrics_stop(struct live_metrics *m)
{
    if (!m)
        return;
    MHD_stop_daemon(m->daemon);
    free(m);
}
