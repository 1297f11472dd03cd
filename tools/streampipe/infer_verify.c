/* Checking labels: each must be the float64 reference's argmax, or a near tie that rounding
 * may decide either way: its logit within `tolerance` of the top one, relative to
 * max(1, largest |logit|). Every label of every timed run is checked. */
#include <string.h>

#include "infer.h"
#include "par_for.h"

#define MAX_WORKERS 256

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
