/* The ways the CLI reports a failure, kept in one place so every message looks alike. */
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

int cli_open_context(sp_backend_kind backend, int device, sp_context **out)
{
    sp_status status = sp_context_create(backend, device, out);
    if (status == SP_OK)
        return CLI_EXIT_OK;
    char what[64];
    snprintf(what, sizeof what, "opening the %s backend", sp_backend_name(backend));
    int rc = cli_report_failure(what, status, sp_context_last_error(*out));
    sp_context_destroy(*out); /* a failed open still yields a handle, with the reason */
    *out = NULL;
    return rc;
}

int cli_create_pipeline(sp_context *ctx, const sp_pipeline_config *config, const char *what,
                        sp_pipeline **out)
{
    sp_status status = sp_pipeline_create(ctx, config, out);
    return status == SP_OK ? CLI_EXIT_OK
                           : cli_report_failure(what, status, sp_context_last_error(ctx));
}

int cli_host_alloc(sp_context *ctx, size_t bytes, const char *what, void **out)
{
    sp_status status = sp_host_alloc(ctx, bytes, out);
    return status == SP_OK ? CLI_EXIT_OK
                           : cli_report_failure(what, status, sp_context_last_error(ctx));
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
