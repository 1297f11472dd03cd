/* The inputs of `streampipe infer`: the model, the images and labels, what every image should
 * come out as according to the float64 reference, and the check of every label of every run. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "infer.h"
#include "par_for.h"
#include "whole_file.h"

#define MAX_WORKERS 256

static int load_images(const infer_plan *plan, infer_data *data)
{
    size_t size = 0;
    int rc = cli_read_whole_file("input", plan->input_path, INFER_MAX_INPUT_BYTES,
                                 &data->images, &size);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (size == 0 || size % SP_MLP_INPUTS != 0) {
        fprintf(stderr, "streampipe: the input '%s' has %zu bytes, not a positive multiple of "
                "%d (one 8x8 image of bytes each)\n", plan->input_path, size, SP_MLP_INPUTS);
        return CLI_EXIT_FAILURE;
    }
    data->n = size / SP_MLP_INPUTS;
    for (size_t i = 0; i < size; i++)
        if (data->images[i] > SP_MLP_MAX_PIXEL) {
            fprintf(stderr, "streampipe: the input '%s' has grey level %u at byte %zu; the "
                    "model reads 0..%d\n", plan->input_path, data->images[i], i,
                    SP_MLP_MAX_PIXEL);
            return CLI_EXIT_FAILURE;
        }
    return CLI_EXIT_OK;
}

static int load_labels(const infer_plan *plan, infer_data *data)
{
    size_t size = 0;
    if (plan->labels_path == NULL)
        return CLI_EXIT_OK;
    /* one byte per image: never more than the largest input has images */
    int rc = cli_read_whole_file("labels", plan->labels_path,
                                 INFER_MAX_INPUT_BYTES / SP_MLP_INPUTS, &data->labels, &size);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (size != data->n) {
        fprintf(stderr, "streampipe: the labels '%s' have %zu bytes for %zu images (one byte "
                "each)\n", plan->labels_path, size, data->n);
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < size; i++)
        if (data->labels[i] >= SP_MLP_CLASSES) {
            fprintf(stderr, "streampipe: label %zu in '%s' is %u, not 0..9\n", i,
                    plan->labels_path, data->labels[i]);
            return CLI_EXIT_FAILURE;
        }
    return CLI_EXIT_OK;
}

/* The reference's argmax of each image, and each class's gap below the top logit. */
static int compute_reference(infer_data *data)
{
    double *logits = malloc(data->n * SP_MLP_CLASSES * sizeof *logits);
    data->reference = malloc(data->n * sizeof *data->reference);
    data->top_gap = malloc(data->n * SP_MLP_CLASSES * sizeof *data->top_gap);
    if (logits == NULL || data->reference == NULL || data->top_gap == NULL) {
        free(logits);
        return cli_report_failure("allocating the reference", SP_ERR_OUT_OF_MEMORY, "");
    }
    sp_mlp_reference_logits(data->model, data->images, data->n, logits);
    for (size_t i = 0; i < data->n; i++) {
        const double *l = logits + i * SP_MLP_CLASSES;
        size_t top = 0;
        double scale = 1.0;
        for (size_t c = 0; c < SP_MLP_CLASSES; c++) {
            top = l[c] > l[top] ? c : top;
            scale = fmax(scale, fabs(l[c]));
        }
        data->reference[i] = (int32_t)top;
        for (size_t c = 0; c < SP_MLP_CLASSES; c++)
            data->top_gap[i * SP_MLP_CLASSES + c] = (l[top] - l[c]) / scale;
    }
    free(logits);
    return CLI_EXIT_OK;
}

int infer_data_load(const infer_plan *plan, infer_data *data)
{
    memset(data, 0, sizeof *data);
    sp_status status = sp_mlp_load_file(plan->model_path, &data->model);
    if (status != SP_OK) {
        int rc = cli_report_failure("loading the model", status, sp_mlp_last_error(data->model));
        sp_mlp_free(data->model);
        data->model = NULL;
        return rc;
    }
    int rc = load_images(plan, data);
    if (rc == CLI_EXIT_OK)
        rc = load_labels(plan, data);
    if (rc == CLI_EXIT_OK)
        rc = compute_reference(data);
    return rc;
}

void infer_data_free(infer_data *data)
{
    sp_mlp_free(data->model);
    free(data->images);
    free(data->labels);
    free(data->reference);
    free(data->top_gap);
    memset(data, 0, sizeof *data);
}

/* ---- the stream ------------------------------------------------------------------------------ */

typedef struct replicate_job {
    const infer_data *data;
    unsigned char *dst;
} replicate_job;

/* Records [begin, end): whole copies of the image set where possible, one memcpy each. */
static void replicate_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    (void)worker;
    const replicate_job *job = arg;
    const size_t n = job->data->n;
    size_t r = begin;
    while (r < end) {
        size_t image = r % n;
        size_t run = n - image < end - r ? n - image : end - r;
        memcpy(job->dst + r * SP_MLP_INPUTS, job->data->images + image * SP_MLP_INPUTS,
               run * SP_MLP_INPUTS);
        r += run;
    }
}

void infer_replicate(const infer_data *data, unsigned char *dst, size_t records,
                     unsigned workers)
{
    replicate_job job = {data, dst};
    par_for(records, workers, replicate_range, &job);
}

/* ---- checking labels ---------------------------------------------------------------------- */

/* Each label must be the float64 reference's argmax, or a near tie that rounding
 * may decide either way: its logit within `tolerance` of the top one, relative to
 * max(1, largest |logit|). Every label of every timed run is checked. */
int infer_label_acceptable(const infer_data *data, size_t image, int32_t label,
                           double tolerance)
{
    if (label < 0 || label >= SP_MLP_CLASSES)
        return 0;
    return label == data->reference[image] ||
           data->top_gap[image * SP_MLP_CLASSES + (size_t)label] <= tolerance;
}

typedef struct verify_job {
    const infer_data *data;
    const int32_t *labels;
    double tolerance;
    infer_check parts[MAX_WORKERS];
} verify_job;

static void verify_range(size_t begin, size_t end, unsigned worker, void *arg)
{
    verify_job *job = arg;
    infer_check *part = &job->parts[worker];
    const size_t n = job->data->n;
    size_t image = begin % n;
    for (size_t r = begin; r < end; r++, image = image + 1 == n ? 0 : image + 1) {
        const int32_t label = job->labels[r];
        if (label == job->data->reference[image])
            part->agree++;
        else if (infer_label_acceptable(job->data, image, label, job->tolerance))
            part->near_ties++;
        else if (part->wrong++ == 0)
            part->first_wrong = r;
        if (job->data->labels != NULL)
            part->correct += label == job->data->labels[image];
    }
    part->checked = end - begin;
}

void infer_verify(const infer_data *data, const int32_t *labels, size_t records,
                  double tolerance, unsigned workers, infer_check *check)
{
    verify_job job;
    memset(&job, 0, sizeof job);
    job.data = data;
    job.labels = labels;
    job.tolerance = tolerance;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    par_for(records, workers, verify_range, &job);
    memset(check, 0, sizeof *check);
    check->first_wrong = records;
    for (unsigned w = 0; w < workers; w++) { /* ranges are in index order, so the first wrong */
        const infer_check *p = &job.parts[w]; /* record is the first worker's that has one */
        if (p->wrong > 0 && check->wrong == 0)
            check->first_wrong = p->first_wrong;
        check->checked += p->checked;
        check->agree += p->agree;
        check->near_ties += p->near_ties;
        check->wrong += p->wrong;
        check->correct += p->correct;
    }
}
