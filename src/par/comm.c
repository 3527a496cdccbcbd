/* comm.c - collectives over an MPI communicator or over TL_SOLO (see comm.h). */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t solo_size(MPI_Datatype t) {
  if (t == MPI_CHAR) return 1;
  if (t == MPI_INT) return sizeof(int);
  if (t == MPI_DOUBLE) return sizeof(double);
  if (t == MPI_INT64_T || t == MPI_UINT64_T) return 8;
  if (t == MPI_UINT32_T) return 4;
  fprintf(stderr, "tally: internal error: a one-process collective on an unknown datatype\n");
  abort();
}

static void solo_copy(const void *send, void *recv, int count, MPI_Datatype t) {
  if (count > 0 && send != recv) memcpy(recv, send, (size_t)count * solo_size(t));
}

int tl_comm_rank(MPI_Comm c) {
  int r = 0;
  if (c != TL_SOLO) MPI_Comm_rank(c, &r);
  return r;
}

int tl_comm_size(MPI_Comm c) {
  int n = 1;
  if (c != TL_SOLO) MPI_Comm_size(c, &n);
  return n;
}

void tl_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm c) {
  if (c != TL_SOLO) MPI_Bcast(buf, count, t, root, c);
}

void tl_allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  if (c != TL_SOLO) MPI_Allreduce(send, recv, count, t, op, c);
  else solo_copy(send, recv, count, t);
}

void tl_reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  if (c != TL_SOLO) MPI_Reduce(send, recv, count, t, op, root, c);
  else solo_copy(send, recv, count, t);
}

void tl_gatherv(const void *send, int scount, MPI_Datatype t, void *recv, const int *rcounts,
                const int *displs, int root, MPI_Comm c) {
  if (c != TL_SOLO) {
    MPI_Gatherv(send, scount, t, recv, rcounts, displs, t, root, c);
    return;
  }
  (void)scount;
  solo_copy(send, (char *)recv + (size_t)displs[0] * solo_size(t), rcounts[0], t);
}

void tl_allgather(const void *send, int count, MPI_Datatype t, void *recv, MPI_Comm c) {
  if (c != TL_SOLO) MPI_Allgather(send, count, t, recv, count, t, c);
  else solo_copy(send, recv, count, t);
}

void tl_barrier(MPI_Comm c) {
  if (c != TL_SOLO) MPI_Barrier(c);
}
