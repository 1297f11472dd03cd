/* Graph submission: a bundle of G consecutive full chunks replayed from one graph
 * (submit_graph.c says how and why it is safe). It only enqueues: the scheduler does the
 * bundle's host turns before it calls sp_submit_graph, and occupies its slots after. */
#ifndef SP_SUBMIT_GRAPH_H
#define SP_SUBMIT_GRAPH_H

#include "core/ring.h"

/* Returned by sp_submit_graph: graphs are off now (b->graphs is 0); go on directly. */
#define SP_GRAPH_FALLBACK 1

/* Whether batch b's full chunks go as bundles (else b->graph_note may say why not; when
 * they do, per-operation timing is off, since replays have none). */
int sp_graph_wanted(sp_batch *b);
/* Before the first bundle: the graphs fitted to b's chunk size and staging, and the first
 * chunk a bundle may start at. */
void sp_graph_begin(sp_batch *b);
/* Chunks per bundle; whether a bundle starts at chunk i; the event its chunks' slots are
 * released by. */
size_t sp_graph_bundle(const sp_pipeline *p);
int sp_graph_fits(const sp_batch *b, size_t i); /* asked of a batch with b->graphs only */
sp_bevent *sp_graph_done_event(const sp_pipeline *p, size_t i);
/* The bundle from chunk i, after its host turns. SP_OK (*bundle_done: its chunks are
 * enqueued, to be occupied), SP_GRAPH_FALLBACK (graphs off; *bundle_done says whether the
 * one-time check did the bundle anyway), or a failure, recorded (failure.h). */
sp_status sp_submit_graph(sp_batch *b, size_t i, int *bundle_done);
/* The report's line on graph mode, once the batch is fed. */
void sp_graph_note(sp_batch *b);
/* Destroys the graph-mode objects (pipeline.c, on destroy). */
void sp_graph_release(sp_pipeline *p);

#endif
