/* comm.c - collectives over an MPI communicator or over TL_SOLO (see comm.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

tl_status tl_bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm c, tl_err *err) {
  if (c == TL_SOLO) return TL_OK;
  return TL_MPI(err, MPI_Bcast(buf, count, t, root, c));
}

tl_status tl_allreduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                       tl_err *err) {
  if (c != TL_SOLO) return TL_MPI(err, MPI_Allreduce(send, recv, count, t, op, c));
  solo_copy(send, recv, count, t);
  return TL_OK;
}

tl_status tl_reduce(const void *send, void *recv, int count, MPI_Datatype t, MPI_Op op, int root,
                    MPI_Comm c, tl_err *err) {
  if (c != TL_SOLO) return TL_MPI(err, MPI_Reduce(send, recv, count, t, op, root, c));
  solo_copy(send, recv, count, t);
  return TL_OK;
}

tl_status tl_gatherv(const void *send, int scount, MPI_Datatype t, void *recv, const int *rcounts,
                     const int *displs, int root, MPI_Comm c, tl_err *err) {
  if (c != TL_SOLO) return TL_MPI(err, MPI_Gatherv(send, scount, t, recv, rcounts, displs, t, root, c));
  (void)scount;
  solo_copy(send, (char *)recv + (size_t)displs[0] * solo_size(t), rcounts[0], t);
  return TL_OK;
}

tl_status tl_allgather(const void *send, int count, MPI_Datatype t, void *recv, MPI_Comm c,
                       tl_err *err) {
  if (c != TL_SOLO) return TL_MPI(err, MPI_Allgather(send, count, t, recv, count, t, c));
  solo_copy(send, recv, count, t);
  return TL_OK;
}

tl_status tl_barrier(MPI_Comm c, tl_err *err) {
  if (c == TL_SOLO) return TL_OK;
  return TL_MPI(err, MPI_Barrier(c));
}

/* Sleeps *us microseconds and doubles it up to TL_IDLE_MAX_US. */
static void idle_nap(long *us) {
  struct timespec ts = {0, *us * 1000L};
  nanosleep(&ts, NULL);
  *us = *us * 2 > TL_IDLE_MAX_US ? TL_IDLE_MAX_US : *us * 2;
}

tl_status tl_wait_idle(MPI_Request *rq, MPI_Status *status, tl_err *err) {
  long us = 5;
  for (;;) {
    int done = 0;
    tl_status st = TL_MPI(err, MPI_Test(rq, &done, status));
    if (st || done) return st;
    idle_nap(&us);
  }
}

/* ---- MPI_Allreduce without spinning (the MPI profiling interface) ---- */

/* Integer types: their reductions give the same bits in any order, so a nonblocking reduction
 * (another algorithm than the blocking one's) cannot change a value. */
static int exact_type(MPI_Datatype t) {
  static const MPI_Datatype T[] = {MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_UNSIGNED_SHORT,
                                   MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG,
                                   MPI_UNSIGNED_LONG_LONG, MPI_INT8_T, MPI_UINT8_T, MPI_INT16_T, MPI_UINT16_T,
                                   MPI_INT32_T, MPI_UINT32_T, MPI_INT64_T, MPI_UINT64_T, MPI_C_BOOL, MPI_AINT,
                                   MPI_OFFSET, MPI_COUNT};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++)
    if (t == T[i]) return 1;
  return 0;
}

static int builtin_op(MPI_Op op) {
  return op == MPI_SUM || op == MPI_MAX || op == MPI_MIN || op == MPI_PROD || op == MPI_LAND || op == MPI_LOR ||
         op == MPI_LXOR || op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
}

/* Open MPI's blocking collectives poll a core at 100% until the last rank arrives. HDF5 meets
 * its ranks in MPI_Allreduce at every collective dataset write and create (the item table's
 * windows), while the other rank may still be compressing its chunks: sampled on the
 * 60,000-unit SpatialEval job on 2 ranks, 7% of the run's CPU was that spin. The MPI profiling
 * interface (MPI 3.1, section 14.2) lets a program define MPI_Allreduce and reach the library
 * through PMPI_Allreduce; the dynamic linker binds HDF5's calls (and tally's) to this one.
 *
 * An integer reduction with a predefined operation is started as PMPI_Iallreduce and tested:
 * ALLREDUCE_SPINS tests without a pause (a partner that is nearly there costs no sleep), then
 * naps of 5 us doubling to ALLREDUCE_NAP_MAX_US between tests. Anything else (floating point,
 * user operations, derived types) goes to PMPI_Allreduce as it is: its bits may depend on the
 * algorithm. Same arguments, same results, same error codes. Measured on that job (2 ranks,
 * A B A B, 7 pairs): 200 tests and naps up to 50 us took 0.91x the CPU of the blocking call at
 * 1.01x its wall time; 16 tests and 50 us 0.92x and 1.03x; 400 tests and 20 us 0.94x and 1.03x;
 * tl_wait_idle's 16 tests and 200 us 0.96x and 1.06x. */
#define ALLREDUCE_SPINS 200
#define ALLREDUCE_NAP_MAX_US 50
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  if (!exact_type(t) || !builtin_op(op)) return PMPI_Allreduce(sendbuf, recvbuf, count, t, op, c);
  MPI_Request rq;
  int rc = PMPI_Iallreduce(sendbuf, recvbuf, count, t, op, c, &rq);
  if (rc != MPI_SUCCESS) return rc;
  long us = 5;
  for (int spins = 0;;) {
    int done = 0;
    rc = PMPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (spins < ALLREDUCE_SPINS) {
      spins++;
      continue;
    }
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
    us = us * 2 > ALLREDUCE_NAP_MAX_US ? ALLREDUCE_NAP_MAX_US : us * 2;
  }
}

tl_status tl_probe_idle(int src, int tag, MPI_Comm c, MPI_Status *status, tl_err *err) {
  long us = 5;
  for (;;) {
    int flag = 0;
    tl_status st = TL_MPI(err, MPI_Iprobe(src, tag, c, &flag, status));
    if (st || flag) return st;
    idle_nap(&us);
  }
}

tl_status tl_mpi_check(int rc, const char *call, tl_err *err) {
  if (rc == MPI_SUCCESS) return TL_OK;
  char why[MPI_MAX_ERROR_STRING + 1] = "";
  int len = 0;
  if (MPI_Error_string(rc, why, &len) != MPI_SUCCESS) snprintf(why, sizeof why, "MPI error %d", rc);
  const char *paren = strchr(call, '(');
  int n = paren ? (int)(paren - call) : (int)strlen(call);
  if (err && err->msg[0]) return TL_EMPI; /* keep the first message */
  return tl_err_set(err, TL_EMPI, "%.*s failed: %s", n, call, why);
}

tl_status tl_agree(tl_status st, tl_err *err, MPI_Comm c) {
  if (c == TL_SOLO) return st;
  int rank = 0, size = 1;
  MPI_Comm_rank(c, &rank);
  MPI_Comm_size(c, &size);
  int who = st != TL_OK ? rank : size, first = size;
  tl_err local = {{0}};
  MPI_Request rq; /* the reduction is also where the ranks meet: waited for without spinning */
  if (TL_MPI(&local, MPI_Iallreduce(&who, &first, 1, MPI_INT, MPI_MIN, c, &rq)) ||
      tl_wait_idle(&rq, MPI_STATUS_IGNORE, &local)) {
    if (err) *err = local;
    return TL_EMPI;
  }
  if (first == size) return TL_OK;
  int code = (int)st;
  tl_err m;
  memset(&m, 0, sizeof m);
  if (rank == first) {
    const char *mine = err ? err->msg : ""; /* "": the failing rank has said it already */
    if (first != 0 && mine[0] && strncmp(mine, "rank ", 5) != 0) tl_err_set(&m, st, "rank %d: %s", first, mine);
    else tl_err_set(&m, st, "%s", mine);
  }
  char *msg = m.msg;
  if (TL_MPI(&local, MPI_Bcast(&code, 1, MPI_INT, first, c)) ||
      TL_MPI(&local, MPI_Bcast(msg, TL_ERR_MSG_MAX, MPI_CHAR, first, c))) {
    if (err) *err = local;
    return TL_EMPI;
  }
  msg[TL_ERR_MSG_MAX - 1] = '\0';
  if (err) memcpy(err->msg, msg, sizeof err->msg);
  return (tl_status)code;
}

tl_status tl_comm_dup(MPI_Comm in, MPI_Comm *out, tl_err *err) {
  *out = MPI_COMM_NULL;
  tl_status st = TL_MPI(err, MPI_Comm_dup(in, out));
  if (!st) st = TL_MPI(err, MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN));
  return st;
}
