/* The --json result of `streampipe infer`: one object on stdout with the same figures as the
 * text, plus every run's time. Times in seconds, rates in samples per second and GB/s. */
#include "infer.h"
#include "json.h"

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
    double median_s = infer_median(r->seconds, r->runs), best_s = r->seconds[0];
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

static void write_engines(json_writer *w, const sp_report *report)
{
    json_array_open(w, "engines");
    for (size_t i = 0; i < report->n_engines && i < SP_MAX_ENGINES; i++) {
        const sp_engine_report *e = &report->engines[i];
        json_object_open(w, NULL);
        json_string(w, "name", e->name);
        json_string(w, "kind", infer_engine_kind_name(e->kind));
        json_number(w, "busy_s", e->busy_s);
        json_number(w, "max_chunk_s", e->max_chunk_s);
        json_uint(w, "bytes", e->bytes);
        json_object_close(w);
    }
    json_array_close(w);
}

static void write_report(json_writer *w, const sp_report *report)
{
    json_object_open(w, "report");
    json_uint(w, "chunks", report->chunks);
    json_uint(w, "chunk_records", report->chunk_records);
    json_uint(w, "depth", report->depth);
    json_bool(w, "staged_in", report->staged_in);
    json_bool(w, "staged_out", report->staged_out);
    json_number(w, "makespan_s", report->makespan_s);
    write_engines(w, report);
    json_number(w, "bound_s", report->bound_s);
    json_number(w, "efficiency", report->efficiency);
    json_number(w, "serial_s", report->serial_s);
    json_number(w, "model_s", report->model_s);
    json_number(w, "hidden_transfer", report->hidden_transfer);
    json_number(w, "h2d_gbps", report->h2d_gbps);
    json_number(w, "d2h_gbps", report->d2h_gbps);
    json_string(w, "bottleneck", report->bottleneck);
    json_string(w, "notes", report->notes);
    json_object_close(w);
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
    write_report(&w, infer_median_report(results));
    json_object_close(&w);
    json_end(&w);
}
