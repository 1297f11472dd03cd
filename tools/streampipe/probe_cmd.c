/* `streampipe probe`: options, then sp_probe_run on the chosen backend, then the table or the
 * JSON (probe_cmd_print.c). Progress goes to stderr so that --json output stays clean. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "probe_cmd.h"

typedef struct probe_options {
    sp_backend_kind backend;
    int device;
    int json;
    int quick;
} probe_options;

enum probe_option_code { OPT_BACKEND = 256, OPT_DEVICE, OPT_JSON, OPT_QUICK, OPT_HELP };

static const struct option long_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"json", no_argument, NULL, OPT_JSON},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void print_probe_usage(FILE *out)
{
    fputs("usage: streampipe probe [options]\n\n"
          "Measures, in this process and through the chosen backend, what the copy paths\n"
          "of this machine reach: H2D, D2H and both at once (pinned and pageable), the\n"
          "pinned H2D rate by chunk size (64 KiB .. 64 MiB), the cost of pinning memory,\n"
          "pageable -> pinned host copies over 1..16 threads, the pipeline's staging copy\n"
          "while both copy engines run (and each alone), and the cost of one event\n"
          "record, queue wait, empty launch and 4 KiB copy. Each figure is the median of\n"
          "several runs on random data. On the host backend the copy rates are memcpy\n"
          "rates, not a bus.\n\n"
          "  --backend auto|host|cuda   backend (default auto: CUDA when a GPU is present)\n"
          "  --device N                 GPU index (default 0)\n"
          "  --quick                    3 repeats and smaller copies (about 4x faster)\n"
          "  --json                     one JSON object on stdout instead of the table\n"
          "  --help                     this text\n",
          out);
}

static int apply_option(int code, const char *value, probe_options *o)
{
    switch (code) {
    case OPT_BACKEND: return args_backend_option(value, &o->backend);
    case OPT_DEVICE: return args_device_option(value, &o->device);
    case OPT_JSON: o->json = 1; return CLI_EXIT_OK;
    case OPT_QUICK: o->quick = 1; return CLI_EXIT_OK;
    default: return cli_usage_error("internal: unhandled option %d", code);
    }
}

/* CLI_EXIT_OK to go on; *help_shown = 1 after --help (then stop with CLI_EXIT_OK). */
static int parse_probe_args(int argc, char **argv, probe_options *o, int *help_shown)
{
    memset(o, 0, sizeof *o);
    o->backend = SP_BACKEND_AUTO;
    *help_shown = 0;
    optind = 1;
    opterr = 0; /* our own messages: getopt would name the program "probe" */
    int code;
    while ((code = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
        if (code == 'h' || code == OPT_HELP) {
            print_probe_usage(stdout);
            *help_shown = 1;
            return CLI_EXIT_OK;
        }
        if (code == '?')
            return cli_usage_error("probe: unknown option '%s' (see --help)", argv[optind - 1]);
        if (code == ':')
            return cli_usage_error("probe: option '%s' needs a value", argv[optind - 1]);
        int rc = apply_option(code, optarg, o);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (optind < argc)
        return cli_usage_error("probe: unexpected argument '%s'", argv[optind]);
    return CLI_EXIT_OK;
}

int probe_main(int argc, char **argv)
{
    probe_options o;
    int help_shown = 0;
    int rc = parse_probe_args(argc, argv, &o, &help_shown);
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
    else if (o.json)
        probe_print_json(&result, o.device, stdout);
    else
        probe_print_text(&result, o.device, stdout);
    sp_context_destroy(ctx);
    return rc;
}
