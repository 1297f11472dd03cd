/* The tuner: which chunk size and ring depth keep the slowest engine busy with the least
 * memory, inside a budget, and when to change them. PURE: no backend, no pipeline; its
 * caller (sched.c) feeds it what each chunk cost and applies what it says, so tests drive it
 * with scripted costs (tests/core/test_tuner.c).
 *
 * The model is the ring's bound (bench/PERF.md, the seeds): each engine e (h2d, compute, d2h,
 * the host's turn) costs t_e(c) = a_e + b_e * c for a chunk of c records, fitted by least
 * squares over the recent chunks; with K slots the ring moves one chunk every
 *     P(c, K) = max(max_e t_e(c), sum_e t_e(c) / K)
 * (the bottleneck, or K chunks in flight each holding its slot for the whole chain), and n
 * chunks take (n - 1) * P + sum_e t_e (the fill and the drain). The pick is the setting with
 * the least memory among those within SP_TUNE_NEAR of the best predicted rate, in budget. */
#ifndef SP_TUNER_H
#define SP_TUNER_H

#include <stddef.h>

typedef enum sp_tune_engine {
    SP_TUNE_H2D,
    SP_TUNE_COMPUTE, /* every stage together: they share the chunk's slot in turn */
    SP_TUNE_D2H,
    SP_TUNE_HOST,    /* the host's turn: staging copies, enqueueing */
    SP_TUNE_ENGINES
} sp_tune_engine;

#define SP_TUNE_WINDOW 48        /* chunks the fit looks at */
#define SP_TUNE_NEAR 0.02        /* within 2% of the best rate counts as as good */
#define SP_TUNE_GAIN 0.10        /* a change must promise 10% more ... */
#define SP_TUNE_FREE 0.25        /* ... or free a quarter of the memory, losing < SP_TUNE_NEAR */
#define SP_TUNE_MOVED 1.25       /* an engine's cost moved by this factor since the last pick */
#define SP_TUNE_SHIFT 2.0        /* ... by this much: a shift, re-picked at once */
#define SP_TUNE_WARMUP_S 1.0     /* free changes in the first second */
#define SP_TUNE_CALM_S 60.0      /* then at most one change a minute, shifts aside */
#define SP_TUNE_MIN_OBS 3        /* chunks seen at the current settings before a pick */
#define SP_TUNE_PROBE_CHUNKS 4   /* chunks run at a second size to fit the slope */
#define SP_TUNE_REACH 4        /* a pick goes at most 4x beyond the sizes seen (and 2x
                                    below): the fit's intercept is not trusted further */
#define SP_TUNE_MAX_BUFFERS 40   /* a slot's buffers: 2 pinned, M + 1 device, M scratch */

/* One buffer of every slot: its bytes are records * record_bytes + fixed_bytes, rounded up
 * to the shape's alignment (as pipeline.c allocates them). */
typedef struct sp_tune_buffer {
    size_t record_bytes;
    size_t fixed_bytes;
    int pinned; /* pinned host memory; else device memory */
} sp_tune_buffer;

typedef struct sp_tune_shape {
    size_t n_buffers;
    sp_tune_buffer buffer[SP_TUNE_MAX_BUFFERS];
    size_t align;
} sp_tune_shape;

typedef struct sp_tune_settings {
    size_t chunk;   /* records per chunk */
    unsigned depth; /* slots */
} sp_tune_settings;

typedef struct sp_tune_limits {
    size_t max_pinned, max_device; /* bytes; 0: no limit */
    size_t chunk_min, chunk_max;   /* records per chunk the caller can run */
    unsigned depth_min, depth_max;
    int chunk_fixed, depth_fixed;  /* the user's: never changed */
    int slots_held;                /* the slots stay allocated at chunk_max and the depth
                                      whatever the chunk (a run re-picks within them): a
                                      smaller setting frees nothing, so memory is no reason */
} sp_tune_limits;

/* What a chunk cost: seconds of each engine for `records` records, seen at `now`. */
typedef struct sp_tune_obs {
    size_t records;
    double seconds[SP_TUNE_ENGINES];
    double now;
} sp_tune_obs;

/* The fit of one engine: t = a + b * records; sloped: two sizes apart were seen. */
typedef struct sp_tune_fit {
    double a, b;
    int sloped;
} sp_tune_fit;

typedef enum sp_tune_verdict { SP_TUNE_KEEP, SP_TUNE_CHANGE, SP_TUNE_PROBE } sp_tune_verdict;

typedef struct sp_tune_decision {
    sp_tune_verdict verdict;
    sp_tune_settings from, to;    /* CHANGE: the new settings; PROBE: to.chunk for a few chunks */
    double predicted_gain;        /* to's predicted rate over from's, minus 1 */
    char reason[160];
} sp_tune_decision;

typedef struct sp_tuner {
    sp_tune_shape shape;
    sp_tune_limits lim;
    sp_tune_settings cur;
    sp_tune_obs obs[SP_TUNE_WINDOW];
    size_t n_obs, head;           /* a ring of the last n_obs observations */
    size_t seen_since_change;
    unsigned strikes;             /* chunks in a row far from the fit */
    int shifted;                  /* the costs shifted since the last pick */
    double t_start, t_change;     /* the tuner's start; its last change (t_start: none) */
    int picked;                   /* a first pick was made (kept or changed) */
    unsigned long picks;          /* picks made (kept or changed), the last at t_pick */
    double t_pick;
    double basis[SP_TUNE_ENGINES];/* each engine's cost per record at the last pick */
    size_t probe_chunk;           /* a probe under way: its size, and chunks still to run */
    unsigned probe_left;
    int probed;                   /* a probe has run since the last shift */
    int informed;                 /* ... and ended since the last pick: pick again */
    int extending;                /* the last change went to the edge of what was seen:
                                     seen there, pick again */
} sp_tuner;

/* Bytes that `s` holds in pinned and in device memory; 0 when they overflow size_t. */
int sp_tune_memory(const sp_tune_shape *shape, sp_tune_settings s, size_t *pinned,
                   size_t *device);
/* Whether s fits the limits and the budget. */
int sp_tune_fits(const sp_tune_shape *shape, const sp_tune_limits *lim, sp_tune_settings s);
/* The start: `want` (the planner's defaults), cut to the budget (depth first, down to one
 * slot per engine plus one, then the chunk, then the depth to 1). 0: even one record at depth
 * 1 does not fit (or the limits are empty); *out is then untouched. */
int sp_tune_initial(const sp_tune_shape *shape, const sp_tune_limits *lim,
                    sp_tune_settings want, sp_tune_settings *out);

void sp_tuner_init(sp_tuner *t, const sp_tune_shape *shape, const sp_tune_limits *lim,
                   sp_tune_settings start, double now);
/* A chunk finished; what it cost. */
void sp_tuner_observe(sp_tuner *t, const sp_tune_obs *obs);
/* The records of the next chunk: cur.chunk, or a probe's size while one runs. */
size_t sp_tuner_next_chunk(const sp_tuner *t);
/* Whether to change now, for `remaining` records still to come (0: a stream, unknown).
 * CHANGE is applied by the caller then told with sp_tuner_applied; PROBE starts at once. */
void sp_tuner_decide(sp_tuner *t, double now, size_t remaining, sp_tune_decision *d);
void sp_tuner_applied(sp_tuner *t, sp_tune_settings s, double now);

/* The fit of engine e over the window (tests read it too). */
sp_tune_fit sp_tuner_fit(const sp_tuner *t, sp_tune_engine e);
/* Records per second the model predicts for s with `remaining` records (0: a stream). */
double sp_tuner_rate(const sp_tuner *t, sp_tune_settings s, size_t remaining);

#endif
