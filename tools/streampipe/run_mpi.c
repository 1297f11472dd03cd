/* run_mpi.h over MPI (SP_HAVE_MPI), or one rank. Every MPI call of the CLI is here; without
 * MPI `initialized` stays 0 and each call takes its one-rank path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run_mpi.h"

#ifdef SP_HAVE_MPI
#include <mpi.h>
#endif

int run_mpi_init(run_mpi *m)
{
    memset(m, 0, sizeof *m);
    m->size = 1;
#ifdef SP_HAVE_MPI
    /* mpirun (Open MPI), or a PMI launcher (srun, hydra), set one of these. Without one, the
     * program stays a plain single process and never starts MPI. */
    if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
        return 0;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "streampipe: run: MPI_Init failed\n");
        return -1;
    }
    m->initialized = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL,
                            &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &m->local_rank);
        MPI_Comm_free(&local);
    }
#endif
    return 0;
}

void run_mpi_finalize(run_mpi *m)
{
#ifdef SP_HAVE_MPI
    if (m->initialized)
        MPI_Finalize();
#endif
    m->initialized = 0;
}

int run_mpi_all_ok(const run_mpi *m, int ok)
{
    if (!m->initialized)
        return ok;
    int all = 0;
#ifdef SP_HAVE_MPI
    int mine = ok ? 1 : 0;
    if (MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 0;
#endif
    return all;
}

int run_mpi_broadcast_text(const run_mpi *m, char *text, size_t bytes)
{
    if (!m->initialized)
        return 0;
    if (bytes > (size_t)0x7fffffff)
        return -1;
#ifdef SP_HAVE_MPI
    return MPI_Bcast(text, (int)bytes, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#else
    (void)text;
    return -1;
#endif
}

int run_mpi_gather(const run_mpi *m, const double *mine, size_t n, double *all)
{
    if (!m->initialized) {
        memcpy(all, mine, n * sizeof *mine);
        return 0;
    }
    if (n > (size_t)0x7fffffff)
        return -1;
#ifdef SP_HAVE_MPI
    return MPI_Gather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD) ==
                   MPI_SUCCESS ? 0 : -1;
#else
    return -1;
#endif
}
