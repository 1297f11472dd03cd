/* The result of `streampipe infer`, as text or as one JSON object, from one description: the
 * setup, accuracy and checks, the throughput, then the median run's own report (per-engine
 * busy time and the overlap figures). Times in seconds, rates in samples per second. */
#include "infer.h"
#include "report_out.h"
#include "stats.h"

static double rate(double amount, double seconds) { return seconds > 0.0 ? amount / seconds : 0.0; }

static const sp_report *median_report(const infer_results *r)
{
    return &r->reports[cli_lower_median_index(r->seconds, r->runs)];
}

static const char *precision_about(const infer_plan *plan)
{
    if (plan->backend != SP_BACKEND_CUDA)
        return "%s (the host computes fp32 either way)";
    return plan->precision == SP_MLP_TF32
               ? "%s (fc1/fc2 on tensor cores, fp32 accumulation)"
               : "%s (fp32 throughout)";
}

static void setup(fig_out *o, const infer_plan *plan, const infer_data *data,
                  const infer_results *r)
{
    const int cuda = plan->backend == SP_BACKEND_CUDA;
    cli_tool_figures(o, "infer");
    fig_str(o, "backend", "backend", cuda ? "%s" : "%s (CPU worker threads, no GPU)",
            sp_backend_name(plan->backend));
    fig_uint(o, "device", cuda ? "device" : NULL, "%llu", (unsigned long long)plan->device);
    fig_str(o, "model", "model", "%s (64-256-256-10, ReLU; input pixel/16)", plan->model_path);
    fig_str(o, "precision", "precision", precision_about(plan),
            sp_mlp_precision_name(plan->precision));
    fig_str(o, "input", "input", "%s", plan->input_path);
    fig_str(o, "labels", plan->labels_path ? "labels" : NULL, "%s",
            plan->labels_path ? plan->labels_path : "");
    fig_uint(o, "images", "images", "%llu", data->n);
    fig_uint(o, "replicate", "replicate", "%llu", plan->replicate);
    fig_uint(o, "records", "records", "%llu", plan->records);
    fig_uint(o, "bytes_in", "bytes in", "%llu", (unsigned long long)plan->records * SP_MLP_INPUTS);
    fig_uint(o, "bytes_out", "bytes out", "%llu", (unsigned long long)plan->records * 4);
    fig_str(o, "memory", "memory", "%s (sp_host_alloc)", "pinned");
    fig_uint(o, "repeat", "repeats", "%llu timed runs", plan->repeat);
    fig_num(o, "setup_s", "setup", "%.3f s (stages, pipeline, pinned stream)", r->setup_s);
    fig_num(o, NULL, "fill", "%.3f s", r->fill_s);
}

static void checks(fig_out *o, const infer_plan *plan, const infer_data *data,
                   const infer_results *r)
{
    const infer_check *c = &r->check;
    fig_group(o, "verification", NULL);
    fig_str(o, "method", "verification", "%s", "every label of every run vs a float64 reference");
    fig_uint(o, "runs_checked", "runs checked", "%llu", r->runs + 1u);
    fig_uint(o, "labels_per_run", "labels per run", "%llu", c->checked);
    fig_uint(o, "wrong", "wrong", "%llu", c->wrong);
    fig_uint(o, "near_ties_max", "near ties", "%llu decided the other way (at most, per run)",
             r->near_ties_max);
    fig_num(o, "tolerance", "tolerance", "%g", plan->tolerance);
    fig_group_end(o);
    if (data->labels != NULL)
        fig_percent(o, "accuracy", "accuracy", "%.2f%% of the records labelled right",
                    rate((double)c->correct, (double)c->checked));
    else
        fig_text(o, "accuracy", "(no --labels given)\n");
}

static void throughput(fig_out *o, const infer_plan *plan, const infer_results *r)
{
    double median_s = cli_median(r->seconds, r->runs), best_s = r->seconds[0];
    for (unsigned i = 1; i < r->runs; i++)
        best_s = r->seconds[i] < best_s ? r->seconds[i] : best_s;
    fig_numbers(o, "seconds", r->seconds, r->runs);
    fig_num(o, "median_s", "median", "%.4f s", median_s);
    fig_num(o, NULL, "best", "%.4f s", best_s);
    fig_num(o, "samples_per_s", "throughput", "%.0f samples/s (median)",
            rate((double)plan->records, median_s));
    fig_num(o, "samples_per_s_best", "", "%.0f samples/s (best)",
            rate((double)plan->records, best_s));
}

void infer_print_result(const infer_plan *plan, const infer_data *data,
                        const infer_results *results, FILE *out)
{
    fig_out o;
    fig_begin(&o, out, plan->json);
    setup(&o, plan, data, results);
    checks(&o, plan, data, results);
    throughput(&o, plan, results);
    fig_text(&o, NULL, "\n");
    cli_report_figures(&o, "the median run's report:", median_report(results));
    fig_end(&o);
}
