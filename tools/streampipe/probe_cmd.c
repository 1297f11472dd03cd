/* `streampipe probe`: options, then sp_probe_run on the chosen backend, then the table or the
 * JSON (probe_cmd_print.c). Progress goes to stderr so that --json output stays clean. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "probe_cmd.h"

typedef struct probe_options {
    sp_backend_kind backend;
    int device;
    int json;
    int quick;
} probe_options;

static const cli_option options[] = {
    CLI_BACKEND_OPTION(probe_options),
    CLI_DEVICE_OPTION(probe_options),
    CLI_FLAG("quick", probe_options, quick, "3 repeats and smaller copies (about 4x faster)"),
    CLI_FLAG("json", probe_options, json, "one JSON object on stdout instead of the table"),
};

static const cli_command_options command = {
    "probe",
    "usage: streampipe probe [options]\n\n"
    "Measures, in this process and through the chosen backend, what the copy paths\n"
    "of this machine reach: H2D, D2H and both at once (pinned and pageable), the\n"
    "pinned H2D rate by chunk size (64 KiB .. 64 MiB), the cost of pinning memory,\n"
    "pageable -> pinned host copies over 1..16 threads, the pipeline's staging copy\n"
    "while both copy engines run (and each alone), and the cost of one event\n"
    "record, queue wait, empty launch and 4 KiB copy. Each figure is the median of\n"
    "several runs on random data. On the host backend the copy rates are memcpy\n"
    "rates, not a bus.\n\n",
    options, sizeof options / sizeof options[0], NULL, NULL};

int probe_main(int argc, char **argv)
{
    probe_options o = {.backend = SP_BACKEND_AUTO};
    int help_shown = 0;
    int rc = cli_parse_options(&command, argc, argv, &o, &help_shown);
    if (rc != CLI_EXIT_OK || help_shown)
        return rc;
    sp_context *ctx = NULL;
    rc = cli_open_context(o.backend, o.device, &ctx);
    if (rc != CLI_EXIT_OK)
        return rc;
    fprintf(stderr, "probe: measuring on %s%s...\n", sp_backend_name(sp_context_backend(ctx)),
            o.quick ? " (quick)" : "");
    sp_probe_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.quick = o.quick;
    sp_probe_result result;
    sp_status st = sp_probe_run(ctx, &cfg, &result);
    if (st != SP_OK)
        rc = cli_report_failure("the probe", st, sp_context_last_error(ctx));
    else
        probe_print_result(&result, o.device, o.json, stdout);
    sp_context_destroy(ctx);
    return rc;
}
