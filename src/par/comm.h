/* comm.h - the collectives of a correlation study and of the parallel writer, over an MPI
 * communicator or over this one process with MPI never initialised.
 *
 * A plain `tally correlate` (no mpirun or srun: nothing to share the work with) passes TL_SOLO
 * and does not initialise MPI at all (MPI_Init and MPI_Finalize of a singleton cost ~20 ms here;
 * bench/mpi_startup.sh). Over TL_SOLO each call does what the MPI call does on a one-rank
 * communicator: the rank is 0 of 1; a broadcast or a barrier does nothing; a reduction, gather or
 * allgather copies the send buffer to the receive buffer (count elements; a gatherv's rcounts[0]
 * at displs[0]). Over any other communicator each call is the MPI call it names, collective as
 * that one is.
 *
 * Over TL_SOLO only these datatypes are known (MPI_Type_size may not be called before MPI_Init):
 * MPI_CHAR, MPI_INT, MPI_DOUBLE, MPI_INT64_T, MPI_UINT64_T, MPI_UINT32_T; another one aborts the
 * process with a message (a programming error). */
#ifndef TALLY_COMM_H
#define TALLY_COMM_H

#include <mpi.h>

#include "tally/err.h"

#define TL_SOLO MPI_COMM_NULL

int tl_comm_rank(MPI_Comm c);
int tl_comm_size(MPI_Comm c);
/* Each returns TL_OK, or TL_EMPI with the MPI call named in err (may be NULL) when the call
 * failed (a communicator with MPI_ERRORS_RETURN: tl_comm_dup). A failed collective is not
 * agreed on: the caller passes the status to tl_agree like any other failure. */
tl_status tl_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm c, tl_err *err);
tl_status tl_allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                       tl_err *err);
tl_status tl_reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, int root,
                    MPI_Comm c, tl_err *err);
tl_status tl_gatherv(const void *send, int scount, MPI_Datatype t, void *recv, const int *rcounts,
                     const int *displs, int root, MPI_Comm c, tl_err *err);
tl_status tl_allgather(const void *send, int count, MPI_Datatype t, void *recv, MPI_Comm c,
                       tl_err *err);
tl_status tl_barrier(MPI_Comm c, tl_err *err);

/* ---- waiting without a spinning core ----
 * Open MPI's blocking calls poll at 100% of a core while they wait, so two ranks that wait on
 * each other for much of a run would cost up to twice the CPU of one (and steal the core a
 * busy rank of the same node needs). These waits test, then sleep between tests, the sleep
 * growing from 5 us to TL_IDLE_MAX_US: the latency they add is at most that bound, and a wait
 * that ends at once costs one test. */
#define TL_IDLE_MAX_US 200
/* Waits for rq (MPI_Test, then sleeps) and fills *status (may be MPI_STATUS_IGNORE). */
tl_status tl_wait_idle(MPI_Request *rq, MPI_Status *status, tl_err *err);
/* MPI_Probe(src, tag, c) the same way. */
tl_status tl_probe_idle(int src, int tag, MPI_Comm c, MPI_Status *status, tl_err *err);

/* ---- the collective error contract (docs/ARCHITECTURE.md "Failures") ----
 * Every phase of a collective command ends in tl_agree before the next collective: a rank that
 * failed still calls it, so no rank waits in a collective for one that has given up. */

/* Collective. Ranks arrive at different times (one is still scoring); they meet in an
 * MPI_Iallreduce waited for by tl_wait_idle, so the early ones sleep instead of spinning. Makes a per-rank outcome common: TL_OK on every rank when every rank passed
 * TL_OK; otherwise every rank gets the status of the lowest failing rank, and that rank's
 * message in err->msg (pass a buffer on every rank). When the lowest failing rank is not 0 and
 * its message does not name it, "rank N: " is put in front, so rank 0 can print it once. An
 * empty message means the failing rank has reported the failure itself (several lines, an input
 * log): it stays empty and nothing more is printed. Over TL_SOLO returns st. When MPI itself fails here: TL_EMPI with the call named. */
tl_status tl_agree(tl_status st, tl_err *err, MPI_Comm c);

/* An MPI call's result as a status: TL_OK for MPI_SUCCESS, else TL_EMPI with "<call> failed:
 * <MPI_Error_string>" in err (when err is non-NULL and holds no message yet). Needs a
 * communicator whose error handler is MPI_ERRORS_RETURN (tl_comm_dup), else MPI aborts first. */
tl_status tl_mpi_check(int rc, const char *call, tl_err *err);
/* TL_MPI(err, MPI_Bcast(...)) runs the call and checks it, naming it in the message. */
#define TL_MPI(err, call) tl_mpi_check((call), #call, (err))

/* Collective over `in`: *out = a duplicate of in whose error handler is MPI_ERRORS_RETURN, so
 * that a failed MPI call returns a code (TL_MPI) instead of aborting the job. */
tl_status tl_comm_dup(MPI_Comm in, MPI_Comm *out, tl_err *err);

#endif
