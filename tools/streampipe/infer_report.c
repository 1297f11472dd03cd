/* The text result of `streampipe infer`: the setup, accuracy and checks, the throughput, then
 * the median run's own report (per-engine busy time and the overlap figures). */
#include "infer.h"
#include "report_out.h"
#include "stats.h"

static double rate(double amount, double seconds) { return seconds > 0.0 ? amount / seconds : 0.0; }

static void print_setup(const infer_plan *plan, const infer_data *data,
                        const infer_results *r, FILE *out)
{
    const sp_report *median = infer_median_report(r);
    const infer_options *o = plan->options;
    fprintf(out, "streampipe infer (library %s)\n", sp_version());
    if (plan->backend == SP_BACKEND_CUDA)
        fprintf(out, "backend          cuda, device %d\n", o->device);
    else
        fprintf(out, "backend          host (CPU worker threads, no GPU)\n");
    fprintf(out, "model            %s (64-256-256-10, ReLU; input pixel/16)\n", o->model_path);
    fprintf(out, "precision        %s%s\n", sp_mlp_precision_name(o->precision),
            plan->backend == SP_BACKEND_CUDA
                ? (o->precision == SP_MLP_TF32 ? " (fc1/fc2 on tensor cores, fp32 accumulation)"
                                               : " (fp32 throughout)")
                : " (the host computes fp32 either way)");
    fprintf(out, "stream           %zu images x %llu = %zu records: %.1f MB in, %.1f MB out, "
            "pinned (sp_host_alloc)\n", data->n, o->replicate, plan->records,
            (double)plan->records * SP_MLP_INPUTS / 1e6, (double)plan->records * 4 / 1e6);
    fprintf(out, "chunk            %zu records (%.1f MiB of pixels), %zu chunks; depth %u\n",
            median->chunk_records, (double)median->chunk_records * SP_MLP_INPUTS / 1048576.0,
            median->chunks, median->depth);
    fprintf(out, "setup            %.3f s (stages, pipeline, pinned stream); fill %.3f s\n",
            r->setup_s, r->fill_s);
}

static void print_checks(const infer_plan *plan, const infer_data *data,
                         const infer_results *r, FILE *out)
{
    const infer_check *c = &r->check;
    if (data->labels != NULL)
        fprintf(out, "accuracy         %.2f%% (%zu of %zu records labelled right)\n",
                100.0 * rate((double)c->correct, (double)c->checked), c->correct, c->checked);
    else
        fprintf(out, "accuracy         (no --labels given)\n");
    fprintf(out, "verification     every label of %u runs vs the float64 reference: 0 wrong; "
            "near ties decided the other way: %zu (at most, per run; tolerance %g)\n",
            r->runs + 1, r->near_ties_max, plan->tolerance);
}

static void print_throughput(const infer_plan *plan, const infer_results *r, FILE *out)
{
    double median_s = cli_median(r->seconds, r->runs), best_s = r->seconds[0];
    for (unsigned i = 1; i < r->runs; i++)
        best_s = r->seconds[i] < best_s ? r->seconds[i] : best_s;
    fprintf(out, "runs             %u timed; median %.4f s, best %.4f s\n", r->runs, median_s,
            best_s);
    fprintf(out, "throughput       %.1f M samples/s (median), %.1f M samples/s (best)\n",
            rate((double)plan->records, median_s) / 1e6, rate((double)plan->records, best_s) / 1e6);
}

static void print_report(const infer_results *r, FILE *out)
{
    const sp_report *report = infer_median_report(r);
    fputs("\nthe median run's report:\n", out);
    cli_print_report(report, out);
}

const sp_report *infer_median_report(const infer_results *r)
{
    return &r->reports[cli_lower_median_index(r->seconds, r->runs)];
}

void infer_print_text(const infer_plan *plan, const infer_data *data,
                      const infer_results *results, FILE *out)
{
    print_setup(plan, data, results, out);
    print_checks(plan, data, results, out);
    print_throughput(plan, results, out);
    print_report(results, out);
}
