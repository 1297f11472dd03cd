/* The MPI calls of `streampipe run` under mpirun, behind an interface without MPI types, so
 * that a build without MPI (run_mpi.c's stub) is the same program as before: one rank. */
#ifndef SP_CLI_RUN_MPI_H
#define SP_CLI_RUN_MPI_H

#include <stddef.h>

typedef struct run_mpi {
    int rank, size;   /* in MPI_COMM_WORLD; 0 and 1 without MPI */
    int local_rank;   /* among the ranks of this host: which GPU to take */
    int initialized;  /* MPI_Init was called (and MPI_Finalize is due) */
} run_mpi;

/* Starts MPI when the process was launched by mpirun (its environment says so); otherwise,
 * and in a build without MPI, one rank. 0, or -1 with a message printed. */
int run_mpi_init(run_mpi *m);
void run_mpi_finalize(run_mpi *m);
/* 1 when every rank passed ok != 0 (a reduction: every rank must call it). */
int run_mpi_all_ok(const run_mpi *m, int ok);
/* Rank 0's text (bytes, NUL-terminated) copied to every rank. 0 or -1. */
int run_mpi_broadcast_text(const run_mpi *m, char *text, size_t bytes);
/* Every rank's n doubles gathered into all (size x n) on rank 0. 0 or -1. */
int run_mpi_gather(const run_mpi *m, const double *mine, size_t n, double *all);

#endif
