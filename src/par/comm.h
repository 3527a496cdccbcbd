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

#define TL_SOLO MPI_COMM_NULL

int tl_comm_rank(MPI_Comm c);
int tl_comm_size(MPI_Comm c);
void tl_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm c);
void tl_allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c);
void tl_reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c);
void tl_gatherv(const void *send, int scount, MPI_Datatype t, void *recv, const int *rcounts,
                const int *displs, int root, MPI_Comm c);
void tl_allgather(const void *send, int count, MPI_Datatype t, void *recv, MPI_Comm c);
void tl_barrier(MPI_Comm c);

#endif
