/* The library's sp_report as the CLI shows it, in text and in JSON: one place, so that bench
 * and infer print the same figures with the same words. */
#ifndef SP_CLI_REPORT_OUT_H
#define SP_CLI_REPORT_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "json.h"
#include "streampipe.h"

/* "h2d", "compute", ... */
const char *cli_engine_kind_name(sp_engine_kind kind);
/* "1.5 MiB", "2.00 GiB" into buf. */
const char *cli_format_bytes(double bytes, char *buf, size_t size);
/* The engine table, then makespan, bound, efficiency, hidden transfer, model, copy rates,
 * bottleneck and notes, each on an indented line. */
void cli_print_report(const sp_report *report, FILE *out);
/* The same as a "report" member of the object being written. */
void cli_json_report(json_writer *w, const sp_report *report);

#endif
