/* The two ways the CLI reports a failure, kept in one place so every message looks alike. */
#include <stdarg.h>
#include <stdio.h>

#include "cli.h"

int cli_report_failure(const char *what, sp_status status, const char *detail)
{
    int has_detail = detail != NULL && detail[0] != '\0';
    fprintf(stderr, "streampipe: %s failed: %s (%s)%s%s\n", what, sp_status_name(status),
            sp_status_message(status), has_detail ? ": " : "", has_detail ? detail : "");
    return CLI_EXIT_FAILURE;
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    fputs("streampipe: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n", stderr);
    return CLI_EXIT_USAGE;
}
