/* exchange.c - moving rows and counts between ranks: key blocks, the record exchange, reductions. */
#include "run.h"

/* Collective. Every rank agrees on the code: the highest (worst) code of any rank. For the
 * phases whose messages are printed where they fail (run_said turns the code into a status). */
int run_agree(int rc, MPI_Comm comm) {
  int all = rc;
  if (MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) return TL_EXIT_FAIL;
  return all;
}

tl_status run_said(int exit_code, tl_err *err) {
  if (err) err->msg[0] = '\0';
  switch (exit_code) {
  case TL_EXIT_OK: return TL_OK;
  case TL_EXIT_USAGE: return TL_EUSAGE;
  case TL_EXIT_BAD_INPUT: return TL_EINPUT;
  case TL_EXIT_INTERRUPTED: return TL_EINTR;
  default: return TL_EIO;
  }
}

/* ---- variable-length bytes to rank 0 ---- */

tl_status run_gather_bytes(const void *mine, size_t len, const char *what, MPI_Comm comm, char **all, size_t *total,
                           tl_err *err) {
  const int rank = tl_comm_rank(comm), nranks = tl_comm_size(comm);
  *all = NULL;
  *total = 0;
  tl_status st = TL_OK;
  if (len > INT_MAX) st = tl_err_set(err, TL_ENOMEM, "%s: over 2 GiB on rank %d", what, rank);
  int n = len > INT_MAX ? 0 : (int)len, *lens = NULL, *disp = NULL;
  if (!st && rank == 0) {
    lens = calloc((size_t)nranks, sizeof *lens);
    disp = calloc((size_t)nranks + 1, sizeof *disp);
    if (!lens || !disp) st = tl_err_set(err, TL_ENOMEM, "out of memory gathering %s on rank 0", what);
  }
  if (!(st = tl_agree(st, err, comm))) st = tl_agree(TL_MPI(err, MPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, comm)), err, comm);
  char *buf = NULL;
  if (!st && rank == 0) {
    int64_t sum = 0;
    for (int q = 0; q < nranks; q++) sum += lens[q];
    if (sum > INT_MAX) {
      st = tl_err_set(err, TL_ENOMEM, "%s: over 2 GiB in all", what);
    } else {
      for (int q = 0; q < nranks; q++) disp[q + 1] = disp[q] + lens[q];
      if (!(buf = malloc((size_t)sum + 1))) st = tl_err_set(err, TL_ENOMEM, "out of memory gathering %s on rank 0", what);
    }
  }
  if (!(st = tl_agree(st, err, comm)))
    st = tl_agree(TL_MPI(err, MPI_Gatherv(mine ? mine : "", n, MPI_BYTE, buf, lens, disp, MPI_BYTE, 0, comm)), err, comm);
  if (!st && rank == 0) {
    buf[disp[nranks]] = 0;
    *all = buf;
    *total = (size_t)disp[nranks];
    buf = NULL;
  }
  free(buf);
  free(lens);
  free(disp);
  return st;
}

/* ---- moving rows to their owners ---- */

/* Collective: record i of rec (n records of w uint64) to rank dest[i] (-1: to none), in one
 * MPI_Alltoallv. *out (malloc'd, caller frees) gets the records sent to this rank, in rank
 * order, *nout of them. A failure (memory, or over 2^31 values to one rank: MPI counts are
 * int) is TL_ENOMEM on every rank. */
tl_status run_to_ranks(const uint64_t *rec, size_t n, size_t w, const int *dest, MPI_Comm comm, uint64_t **out,
                          size_t *nout, tl_err *err) {
  int nranks;
  MPI_Comm_size(comm, &nranks);
  *out = NULL;
  *nout = 0;
  int *scount = calloc((size_t)nranks, sizeof *scount), *rcount = calloc((size_t)nranks, sizeof *rcount);
  int *sdisp = calloc((size_t)nranks + 1, sizeof *sdisp), *rdisp = calloc((size_t)nranks + 1, sizeof *rdisp);
  int64_t *cnt = calloc((size_t)nranks, sizeof *cnt), *at = calloc((size_t)nranks, sizeof *at);
  uint64_t *sbuf = NULL, *rbuf = NULL;
  int bad = !scount || !rcount || !sdisp || !rdisp || !cnt || !at;
  for (size_t i = 0; !bad && i < n; i++)
    if (dest[i] >= 0) cnt[dest[i]]++;
  for (int q = 0; !bad && q < nranks; q++) {
    if ((int64_t)sdisp[q] + cnt[q] * (int64_t)w > 0x7fffffff) bad = 1;
    else scount[q] = (int)(cnt[q] * (int64_t)w), sdisp[q + 1] = sdisp[q] + scount[q];
  }
  if (!bad && !(sbuf = malloc(((size_t)sdisp[nranks] + 1) * sizeof *sbuf))) bad = 1;
  for (size_t i = 0; !bad && i < n; i++) {
    if (dest[i] < 0) continue;
    memcpy(sbuf + sdisp[dest[i]] + at[dest[i]], rec + i * w, w * sizeof *sbuf);
    at[dest[i]] += (int64_t)w;
  }
  static const char too_many[] = "cannot exchange records (memory, or over 2^31 values per rank): use more ranks";
  tl_status st = tl_agree(bad ? tl_err_set(err, TL_ENOMEM, "%s", too_many) : TL_OK, err, comm);
  if (!st) st = tl_agree(TL_MPI(err, MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm)), err, comm);
  if (st) goto done;
  int64_t rtotal = 0;
  for (int q = 0; q < nranks; q++) rdisp[q] = (int)rtotal, rtotal += rcount[q];
  bad = rtotal > 0x7fffffff || !(rbuf = malloc(((size_t)rtotal + 1) * sizeof *rbuf));
  if ((st = tl_agree(bad ? tl_err_set(err, TL_ENOMEM, "%s", too_many) : TL_OK, err, comm))) goto done;
  st = TL_MPI(err, MPI_Alltoallv(sbuf, scount, sdisp, MPI_UINT64_T, rbuf, rcount, rdisp, MPI_UINT64_T, comm));
  if ((st = tl_agree(st, err, comm))) goto done;
  *out = rbuf;
  *nout = (size_t)rtotal / w;
  rbuf = NULL;
done:
  free(scount);
  free(rcount);
  free(sdisp);
  free(rdisp);
  free(cnt);
  free(at);
  free(sbuf);
  free(rbuf);
  return st;
}

/* Collective. Afterwards h holds exactly this rank's key block of benchmark rb, in key order
 * (rank q owns local units [U q / N, U (q + 1) / N)): the fixed-size records, one exchange. */
tl_status run_redistribute(const tl_run_bench *rb, held_rows *h, MPI_Comm comm, tl_err *err) {
  int rank, nranks;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const size_t w = (size_t)h->w;
  const uint64_t lo = tl_block_lo(rb->U, rank, nranks), hi = tl_block_lo(rb->U, rank + 1, nranks);
  const size_t nblk = (size_t)(hi - lo);
  int *dest = malloc((h->n ? h->n : 1) * sizeof *dest);
  for (size_t i = 0; dest && i < h->n; i++) dest[i] = tl_block_owner(h->rec[i * w], rb->U, nranks);
  tl_status st = tl_agree(dest ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory"), err, comm);
  if (st) {
    free(dest);
    return st;
  }
  uint64_t *rbuf = NULL;
  size_t nr = 0;
  st = run_to_ranks(h->rec, h->n, w, dest, comm, &rbuf, &nr, err); /* (agreed) */
  free(dest);
  if (st) return st;
  st = nr != nblk ? tl_err_set(err, TL_EINTERNAL, "redistribution: a rank would receive the wrong number of units") : TL_OK;
  if ((st = tl_agree(st, err, comm))) {
    free(rbuf);
    return st;
  }
  /* into key order, each unit exactly once */
  free(h->rec);
  h->rec = calloc((nblk ? nblk : 1) * w, sizeof *h->rec);
  uint8_t *seen = calloc(nblk ? nblk : 1, 1);
  h->n = h->cap = 0;
  if (!h->rec || !seen) st = tl_err_set(err, TL_ENOMEM, "out of memory for this rank's block of units");
  for (size_t i = 0; !st && i < nblk; i++) {
    uint64_t u = rbuf[i * w];
    if (u < lo || u >= hi || seen[u - lo]) {
      st = tl_err_set(err, TL_EINTERNAL, "redistribution: unit %llu arrived at the wrong rank, or twice", (unsigned long long)u);
      break;
    }
    memcpy(h->rec + (u - lo) * w, rbuf + i * w, w * sizeof *rbuf);
    seen[u - lo] = 1;
  }
  if (!st) h->n = h->cap = nblk;
  free(seen);
  free(rbuf);
  return st;
}

/* Collective: every rank reduces benchmark rb's accumulator blocks (each with its operation)
 * to rank 0, or to every rank when all is 1. acc[k] is this rank's block k (in), tot[k] the
 * result (rank 0's, or every rank's). */
tl_status run_reduce_acc(const tl_acc_block *lay, int nblk, int64_t *const *acc, int64_t *const *tot, int all,
                            MPI_Comm comm, tl_err *err) {
  for (int k = 0; k < nblk; k++) {
    MPI_Op op = lay[k].op == TL_ACC_MIN ? MPI_MIN : lay[k].op == TL_ACC_MAX ? MPI_MAX : MPI_SUM;
    for (size_t off = 0; off < lay[k].len; off += (1u << 28)) {
      size_t n = lay[k].len - off < (1u << 28) ? lay[k].len - off : (1u << 28);
      tl_status st = all ? TL_MPI(err, MPI_Allreduce(acc[k] + off, tot[k] + off, (int)n, MPI_INT64_T, op, comm))
                         : TL_MPI(err, MPI_Reduce(acc[k] + off, tot[k] + off, (int)n, MPI_INT64_T, op, 0, comm));
      if (st) return st;
    }
  }
  return TL_OK;
}

/* Collective: the engine calls of this attempt, the stages taken from the journal and the stages
 * skipped, per stage, summed over ranks, into rcnt (every rank). */
tl_status run_sum_counts(const bench_run *r, run_counts *rcnt, MPI_Comm comm, tl_err *err) {
  uint64_t mine[3 * TL_MAX_STAGES], all[3 * TL_MAX_STAGES];
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    mine[s] = tl_pipe_calls(r->pipe, s);
    mine[TL_MAX_STAGES + s] = r->tal.resumed[s];
    mine[2 * TL_MAX_STAGES + s] = tl_pipe_skips(r->pipe, s);
  }
  tl_status st = TL_MPI(err, MPI_Allreduce(mine, all, 3 * TL_MAX_STAGES, MPI_UINT64_T, MPI_SUM, comm));
  if (st) return st;
  rcnt->units = r->U;
  rcnt->nstages = 1;
  for (size_t b = 0; b < r->nb; b++)
    if (r->rbs[b].nstages > rcnt->nstages) rcnt->nstages = r->rbs[b].nstages;
  for (int s = 0; s < TL_MAX_STAGES; s++) {
    rcnt->calls[s] = all[s];
    rcnt->resumed[s] = all[TL_MAX_STAGES + s];
    rcnt->skips[s] = all[2 * TL_MAX_STAGES + s];
  }
  for (int s = 1; s < TL_MAX_STAGES; s++) { /* the judge's stages (samples): [1] holds their sum */
    rcnt->judge_calls += rcnt->calls[s];
    rcnt->judge_resumed += rcnt->resumed[s];
    rcnt->judge_skips += rcnt->skips[s];
  }
  return TL_OK;
}
