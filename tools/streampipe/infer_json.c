/* The --json result of `streampipe infer`: one object on stdout with the same figures as the
 * text, plus every run's time. Times in seconds, rates in samples per second and GB/s. */
#include "infer.h"
#include "report_out.h"
#include "json.h"
#include "stats.h"

static double rate(double amount, double seconds) { return seconds > 0.0 ? amount / seconds : 0.0; }

static void write_plan(json_writer *w, const infer_plan *plan, const infer_data *data)
{
    const infer_options *o = plan->options;
    json_string(w, "tool", "streampipe infer");
    json_string(w, "version", sp_version());
    json_string(w, "backend", sp_backend_name(plan->backend));
    json_uint(w, "device", (unsigned long long)o->device);
    json_string(w, "precision", sp_mlp_precision_name(o->precision));
    json_string(w, "model", o->model_path);
    json_string(w, "input", o->input_path);
    json_string(w, "labels", o->labels_path != NULL ? o->labels_path : "");
    json_uint(w, "images", data->n);
    json_uint(w, "replicate", o->replicate);
    json_uint(w, "records", plan->records);
    json_uint(w, "bytes_in", (unsigned long long)plan->records * SP_MLP_INPUTS);
    json_uint(w, "bytes_out", (unsigned long long)plan->records * 4);
    json_string(w, "memory", "pinned");
    json_uint(w, "repeat", plan->repeat);
}

static void write_checks(json_writer *w, const infer_plan *plan, const infer_data *data,
                         const infer_results *r)
{
    json_object_open(w, "verification");
    json_string(w, "method", "every label of every run vs a float64 reference");
    json_number(w, "tolerance", plan->tolerance);
    json_uint(w, "runs_checked", r->runs + 1u);
    json_uint(w, "labels_per_run", r->check.checked);
    json_uint(w, "wrong", r->check.wrong);
    json_uint(w, "near_ties_max", r->near_ties_max);
    json_object_close(w);
    if (data->labels != NULL)
        json_number(w, "accuracy", rate((double)r->check.correct, (double)r->check.checked));
}

static void write_times(json_writer *w, const infer_plan *plan, const infer_results *r)
{
    double median_s = cli_median(r->seconds, r->runs), best_s = r->seconds[0];
    json_array_open(w, "seconds");
    for (unsigned i = 0; i < r->runs; i++) {
        json_number(w, NULL, r->seconds[i]);
        best_s = r->seconds[i] < best_s ? r->seconds[i] : best_s;
    }
    json_array_close(w);
    json_number(w, "median_s", median_s);
    json_number(w, "samples_per_s", rate((double)plan->records, median_s));
    json_number(w, "samples_per_s_best", rate((double)plan->records, best_s));
    json_number(w, "setup_s", r->setup_s);
}

void infer_print_json(const infer_plan *plan, const infer_data *data,
                      const infer_results *results, FILE *out)
{
    json_writer w;
    json_begin(&w, out);
    json_object_open(&w, NULL);
    write_plan(&w, plan, data);
    write_checks(&w, plan, data, results);
    write_times(&w, plan, results);
    cli_json_report(&w, infer_median_report(results));
    json_object_close(&w);
    json_end(&w);
}
