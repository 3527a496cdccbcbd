/* correlate_agree.h - the agreement table of a study (issue 32): every pair of the rating
 * columns named by --agreement (or a job study's "agreement"), with bootstrap CIs, Wilson and
 * Jeffreys intervals and the confusion matrix; Krippendorff's alpha over all the columns of a
 * list of more than two (several human raters: the human-human ceiling). Private to
 * src/par/correlate*.c. */
#ifndef TALLY_CORRELATE_AGREE_H
#define TALLY_CORRELATE_AGREE_H

#include <mpi.h>

#include "correlate.h"
#include "tally/err.h"
#include "writer.h"

/* Collective over c (the study's communicator; TL_SOLO alone). Does nothing when
 * o->agreement is NULL. Rank 0 reads the table (o->table, or o->input read again), computes
 * every pair (the statistics are a pure function of the table, the seed and B, so the rank
 * count does not change a bit), prints the agreement table to o->outf and, when w is non-NULL,
 * builds the tables <prefix>/agreement and <prefix>/confusion; the ranks agree on rank 0's
 * status (tl_agree), then every rank takes part in the writes. Failures are reported once on
 * rank 0's o->log; the returned status is the same on every rank. */
tl_status corr_agreement(const tl_corr_opts *o, MPI_Comm c, int rank, tl_writer *w, const char *prefix);

#endif
