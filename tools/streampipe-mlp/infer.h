/* `streampipe infer`: the digits MLP streamed through the pipeline. The flow, in infer.c:
 * options -> model, images, labels and the float64 reference (infer_data.c) -> stages,
 * pipeline and pinned stream, timed runs, each output checked (infer_run.c, infer_data.c)
 * -> text or JSON (infer_output.c). */
#ifndef SP_CLI_INFER_H
#define SP_CLI_INFER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "streampipe.h"
#include "stats.h"
#include "streampipe_mlp.h"

#define INFER_MAX_REPEAT CLI_MAX_SAMPLES
/* The images are read whole and each gets a float64 reference, so the input is kept to 256 MiB
 * (4 Mi images); --replicate makes streams as long as wanted from fewer. */
#define INFER_MAX_INPUT_BYTES ((size_t)256 << 20)
#define INFER_SHOW_BAD 5 /* wrong labels printed before giving up */

/* Rounding bounds for a label that differs from the float64 reference: relative gap between
 * its logit and the top one (see infer_label_acceptable). */
#define INFER_FP32_TOLERANCE 1e-4
#define INFER_TF32_TOLERANCE 1e-2

/* The job: what the options say, then, once the backend and the images are known, every
 * value decided (infer.c). */
typedef struct infer_plan {
    const char *model_path;
    const char *input_path;
    const char *labels_path;      /* NULL: no accuracy */
    const char *predictions_path; /* NULL: not saved */
    size_t replicate;             /* copies of the input in the stream */
    sp_backend_kind backend;      /* asked for; once resolved, HOST or CUDA */
    int device;
    sp_mlp_precision precision;
    unsigned repeat;              /* 0 until resolved: 5 on CUDA, 3 on HOST */
    size_t chunk;                 /* records per chunk; 0: the library's choice */
    unsigned depth;               /* 0: the library's choice */
    sp_graph_mode graph;          /* --graph */
    unsigned streams;             /* queues per stage (sp_stage.streams); 0: one */
    int json;
    size_t records;               /* images x replicate */
    double tolerance;
    unsigned host_workers;
} infer_plan;

/* The images and what they should come out as. */
typedef struct infer_data {
    sp_mlp *model;
    unsigned char *images;   /* n x SP_MLP_INPUTS */
    unsigned char *labels;   /* n, or NULL */
    size_t n;
    int32_t *reference;      /* n: argmax of the float64 logits */
    double *top_gap;         /* n x SP_MLP_CLASSES: (top - logit[c]) / max(1, max |logit|) */
} infer_data;

/* How one run's labels compare. */
typedef struct infer_check {
    size_t checked;
    size_t agree;      /* equal to the reference's argmax */
    size_t near_ties;  /* differ, within the tolerance */
    size_t wrong;      /* differ beyond it: a failure */
    size_t correct;    /* equal to the true label (when labels were given) */
    size_t first_wrong;
} infer_check;

typedef struct infer_results {
    unsigned runs;
    double seconds[INFER_MAX_REPEAT]; /* wall time of each sp_pipeline_run */
    sp_report reports[INFER_MAX_REPEAT];
    infer_check check;                /* the last run's (every run is checked) */
    size_t near_ties_max;             /* over all runs */
    double setup_s, fill_s; /* building stages, pipeline and pinned stream; replicating */
} infer_results;

int infer_data_load(const infer_plan *plan, infer_data *data);
void infer_data_free(infer_data *data);
/* Copies the n images `replicate` times into dst (records x SP_MLP_INPUTS), in parallel. */
void infer_replicate(const infer_data *data, unsigned char *dst, size_t records,
                     unsigned workers);

/* 1 when `label` may stand for image i: the reference's argmax, or within tolerance of it. */
int infer_label_acceptable(const infer_data *data, size_t image, int32_t label,
                           double tolerance);
/* Checks every label of a run (image = record mod n), in parallel. */
void infer_verify(const infer_data *data, const int32_t *labels, size_t records,
                  double tolerance, unsigned workers, infer_check *check);

/* Context, stages, pipeline, pinned stream, warm-up, the timed runs. */
int infer_run_all(sp_context *ctx, const infer_plan *plan, const infer_data *data,
                  infer_results *results);

/* The result as text, or as one JSON object with --json (infer_output.c). */
void infer_print_result(const infer_plan *plan, const infer_data *data,
                        const infer_results *results, FILE *out);

#endif /* SP_CLI_INFER_H */
