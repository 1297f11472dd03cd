/* The library's sp_report as the CLI shows it: one place, so that bench, infer and run print
 * the same figures with the same words, in text and in JSON. */
#ifndef SP_CLI_REPORT_OUT_H
#define SP_CLI_REPORT_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "figures.h"
#include "streampipe.h"

/* The first figures of every command's result, the one set of keys that says what wrote it:
 * "tool":"streampipe", "version":"X.Y.Z" (the library's, as --version prints it) and
 * "command":"bench" (probe, latency, infer, run); text: "streampipe bench (library X.Y.Z)". */
void cli_tool_figures(fig_out *o, const char *command);
/* "1.5 MiB", "2.00 GiB" into buf. */
const char *cli_format_bytes(double bytes, char *buf, size_t size);
/* The report as the "report" member of the JSON object; as text, under `title`: the memory
 * held, the engine table, makespan, bound, efficiency, hidden transfer, model, copy rates,
 * bottleneck and notes. */
void cli_report_figures(fig_out *o, const char *title, const sp_report *report);

/* The chunk and depth changes a pipeline made (sp_pipeline_tune_changes): read before it is
 * destroyed, shown after its report as the "tune_changes_list" table (text: one line each,
 * when, from and to, and why). */
typedef struct cli_tune_list {
    sp_tune_change change[SP_TUNE_CHANGES_KEPT];
    size_t n;
    uint64_t total;
} cli_tune_list;
void cli_tune_list_read(cli_tune_list *list, const sp_pipeline *pipeline);
void cli_tune_figures(fig_out *o, const cli_tune_list *list);

#endif
