/* Each GPU engine's total in the pipelined run beside the same engine's total in the serial
 * run of the same process, where every step ran by itself: the check that the report's bound
 * and efficiency describe the work as it runs alone (issue 4), not only as it overlaps. */
#include <string.h>

#include "bench.h"
#include "figures.h"

static const sp_engine_report *find(const sp_report *r, const char *name)
{
    for (size_t k = 0; k < r->n_engines && k < SP_MAX_ENGINES; k++)
        if (strncmp(r->engines[k].name, name, sizeof r->engines[k].name) == 0)
            return &r->engines[k];
    return NULL;
}

static int on_gpu(const sp_engine_report *e)
{
    return e->kind == SP_ENGINE_H2D || e->kind == SP_ENGINE_COMPUTE || e->kind == SP_ENGINE_D2H;
}

/* The median runs' reports; 0 when either has no engine times (graph mode). */
static int reports(const bench_results *r, const sp_report **over, const sp_report **alone)
{
    *over = bench_median_report(&r->traced);
    *alone = bench_median_report(&r->serial);
    return (*over)->n_engines > 0 && (*alone)->n_engines > 0;
}

/* JSON: the serial run's GPU engine totals; text: beside the pipelined run's. */
void bench_alone_figures(fig_out *o, const bench_results *r)
{
    const sp_report *over, *alone;
    if (!reports(r, &over, &alone))
        return;
    fig_group(o, "engines_alone_s", NULL);
    for (size_t k = 0; k < alone->n_engines && k < SP_MAX_ENGINES; k++)
        if (on_gpu(&alone->engines[k]))
            fig_num(o, alone->engines[k].name, NULL, NULL, alone->engines[k].busy_s);
    fig_group_end(o);
    fig_text(o, NULL, "\nengine totals overlapped vs alone (the serial run: each step by "
             "itself):\n  %-16s %12s %12s %9s\n", "engine", "pipelined s", "alone s", "change");
    for (size_t k = 0; k < over->n_engines && k < SP_MAX_ENGINES; k++) {
        const sp_engine_report *e = &over->engines[k], *a = find(alone, e->name);
        if (on_gpu(e) && a && a->busy_s > 0.0)
            fig_text(o, NULL, "  %-16s %12.4f %12.4f %+8.1f%%\n", e->name, e->busy_s, a->busy_s,
                     100.0 * (e->busy_s / a->busy_s - 1.0));
    }
}
