/* The journals of `streampipe run` under mpirun: one per rank, beside the shared temporary
 * output, named ".NAME.journal.RANK-of-RANKS.TOKEN" (TOKEN: the job's, chosen by rank 0, so
 * that a resumed job's journals never replace the killed job's ones it reads). A resume takes
 * every journal of that pattern, whatever the rank count that wrote it: the union of their
 * records is not run again, the rest is split evenly over the ranks of this job. */
#ifndef SP_CLI_RUN_RANK_JOURNAL_H
#define SP_CLI_RUN_RANK_JOURNAL_H

#include <stddef.h>

#include "streampipe_io.h"

#define RANK_JOURNAL_MARK ".journal."

typedef struct rank_range {
    size_t first, count;
} rank_range;

/* The journal's file name (in OUTPUT's folder) or its path, for rank of size: 0, -1 when
 * too long. */
int rank_journal_name(char *name, size_t cap, const char *output, const char *token, int rank,
                      int size);
int rank_journal_path(char *path, size_t cap, const char *output, const char *token, int rank,
                      int size);
/* The ranks' journals beside OUTPUT: removed (remove 1: a fresh start), or their paths into
 * list, each ended by '\n'. 0, or -1 when they do not fit in cap bytes. */
int rank_journals_found(const char *output, int remove, char *list, size_t cap);
/* list's lines as NULL-terminated paths (pointing into list, whose '\n's become NULs), at
 * most most - 1 of them: their number. */
size_t rank_journals_split(char *list, const char **paths, size_t most);
/* This rank's share of the to_do records io still has to run (sp_file_io_todo_from's gaps,
 * in the input's order), an even contiguous part of them, as at most `most` ranges of the
 * input: their number. */
size_t rank_share(const sp_file_io *io, size_t to_do, int rank, int size, rank_range *out,
                  size_t most);

#endif
