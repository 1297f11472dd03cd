/* --metrics HOST:PORT (metrics.h): parsed with getaddrinfo (numeric port), and refused when
 * HOST is not loopback unless --metrics-any: counters of a run are nobody else's business
 * by default. */
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "metrics.h"
#include "options.h"

static int is_loopback(const struct sockaddr *a)
{
    if (a->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)(const void *)a)->sin_addr.s_addr) >> 24) ==
               127;
    if (a->sa_family == AF_INET6)
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr);
    return 0;
}

/* HOST and PORT of "HOST:PORT", "[V6]:PORT" or ":PORT" (HOST then 127.0.0.1). */
static int split(const char *text, char *host, size_t size, const char **port)
{
    const char *colon = text[0] == '[' ? strstr(text, "]:") : strrchr(text, ':');
    if (!colon)
        return -1;
    const char *start = text[0] == '[' ? text + 1 : text;
    size_t n = (size_t)(colon - start);
    if (n >= size)
        return -1;
    memcpy(host, start, n);
    host[n] = '\0';
    if (n == 0)
        snprintf(host, size, "127.0.0.1");
    *port = colon + (text[0] == '[' ? 2 : 1);
    return 0;
}

int metrics_parse_address(const char *text, int any, struct sockaddr_storage *addr,
                          socklen_t *len)
{
    char host[256];
    const char *port = NULL;
    unsigned long long number = 0;
    if (split(text, host, sizeof host, &port) != 0 || cli_parse_count(port, 65535, &number) != 0)
        return cli_usage_error("--metrics: '%s' is not HOST:PORT (PORT 0..65535)", text);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *found;
    int rc = getaddrinfo(host, port, &hints, &found);
    if (rc != 0)
        return cli_usage_error("--metrics: '%s': %s", host, gai_strerror(rc));
    int loopback = is_loopback(found->ai_addr);
    memset(addr, 0, sizeof *addr);
    memcpy(addr, found->ai_addr, found->ai_addrlen);
    *len = found->ai_addrlen;
    freeaddrinfo(found);
    if (!loopback && !any)
        return cli_usage_error("--metrics: %s is not a loopback address: the counters would "
                               "be served to the network; add --metrics-any to mean it", host);
    return CLI_EXIT_OK;
}
