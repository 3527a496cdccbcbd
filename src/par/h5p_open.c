/* h5p_open.c - the collective parallel-HDF5 table writer (writer.h; its design and parts in
 * h5p_int.h): open, close, abort, the root attributes. */
#include <errno.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "h5_common.h"
#include "h5p_int.h"
#include "tally/str.h"

static tl_status attr_check(h5p *w, const char *name, const void *value, size_t n, tl_err *e) {
  uint64_t h = h5p_fnv(h5p_fnv_str(14695981039346656037ULL, name), value, n);
  return h5p_same_everywhere(w, h, e,
                             "parallel writer: the ranks passed different values for attribute '%s'",
                             name);
}

static tl_status attr_str(tl_writer *w_, const char *name, const char *value, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = attr_check(w, name, value, strlen(value), &e);
  if (st == TL_OK) {
    if (tl_h5_attr_str(w->file, name, value) != TL_OK)
      st = h5p_fail(w, &e, 0, "HDF5: cannot write attribute '%s'", name);
    st = h5p_agreed(w, st, &e);
  }
  return h5p_report(st, &e, err);
}

static tl_status attr_i64(tl_writer *w_, const char *name, int64_t value, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = attr_check(w, name, &value, sizeof value, &e);
  if (st == TL_OK) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(w->file, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a < 0 ? -1 : H5Awrite(a, H5T_NATIVE_INT64, &value);
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    if (rc < 0) st = h5p_fail(w, &e, 0, "HDF5: cannot write attribute '%s'", name);
    st = h5p_agreed(w, st, &e);
  }
  return h5p_report(st, &e, err);
}

/* Local. Frees the writer and its communicator; TL_EMPI in e when MPI_Comm_free failed (this
 * rank's only: no collective follows). */
static tl_status destroy(h5p *w, tl_err *e) {
  tl_status st = TL_OK;
  if (!w) return st;
  if (w->comm != MPI_COMM_NULL) st = TL_MPI(e, MPI_Comm_free(&w->comm));
  free(w->path);
  free(w->part);
  free(w);
  return st;
}

/* Set when H5Fclose failed (disk full while flushing): HDF5 1.10 then still holds the file and
 * crashes when it closes it at library shutdown, so the process must not shut HDF5 down. */
static int g_hdf5_broken = 0;
int tl_h5_broken(void) { return g_hdf5_broken; }

static tl_status close_(tl_writer *w_, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  tl_status st = TL_OK;
  H5Pclose(w->dxpl);
  if (H5Fclose(w->file) < 0) {
    g_hdf5_broken = 1;
    st = h5p_fail(w, &e, 0, "HDF5: cannot finish the file");
  }
  st = h5p_agreed(w, st, &e);
  /* Every rank has closed: rank 0 publishes (or drops) the file and tells the others. */
  if (w->rank == 0) {
    if (st != TL_OK) remove(w->part);
    else if (rename(w->part, w->path) != 0)
      st = tl_err_set(&e, TL_EIO, "cannot rename '%s' to '%s': %s", w->part, w->path,
                      strerror(errno));
  }
  st = h5p_agreed(w, st, &e);
  tl_status freed = destroy(w, &e);
  return h5p_report(st != TL_OK ? st : freed, &e, err);
}

static void abort_(tl_writer *w_) {
  h5p *w = (h5p *)w_;
  H5Pclose(w->dxpl);
  /* After a failed write (a full disk) the ranks' metadata caches may disagree about what is
   * left to flush, and a collective H5Fclose then waits forever (one rank in the cache's sync
   * point, another in MPI_File_close: seen on 2 ranks, also when the journal filled the disk and
   * no dataset write failed). The file is being dropped: leave it
   * open on every rank and let the process end without shutting HDF5 down (tl_h5_broken). */
  int failed = w->failed || tl_fs_full(w->part), any = 0;
  /* when MPI itself fails here, the file is left open as after a failed write */
  if (tl_allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, w->comm, NULL) != TL_OK) any = 1;
  if (any) g_hdf5_broken = 1;
  else if (H5Fclose(w->file) < 0) g_hdf5_broken = 1;
  /* An abort reports nothing (the caller already has its failure): a failed barrier or
   * MPI_Comm_free changes nothing of what is left to do. */
  (void)tl_barrier(w->comm, NULL);
  if (w->rank == 0) remove(w->part);
  (void)destroy(w, NULL);
}

static const tl_writer_vtbl VT = {h5p_write_table, h5p_write_slice, h5p_write_rows, attr_str,
                                   attr_i64, close_, abort_};

tl_writer *tl_h5_parallel_open(const char *path, MPI_Comm comm, tl_err *err) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* errors are reported by us, with names */
  int rank = tl_comm_rank(comm), size = tl_comm_size(comm), solo = comm == TL_SOLO;
  tl_err e = {{0}};
  tl_status st = TL_OK;
  h5p *w = calloc(1, sizeof *w);
  if (w) {
    w->base.vt = &VT;
    w->comm = MPI_COMM_NULL;
    w->file = -1;
    w->dxpl = -1;
    w->rank = rank;
    w->size = size;
    w->path = tl_strdup(path);
    tl_buf b;
    tl_buf_init(&b);
    if (tl_buf_printf(&b, "%s.part", path) == TL_OK) w->part = tl_buf_detach(&b);
    tl_buf_release(&b);
  }
  if (!w || !w->path || !w->part) st = tl_err_set(&e, TL_ENOMEM, "out of memory");
  /* Rank 0 tries the path with plain stdio first: it says why in the user's terms, and every
   * rank learns of it before any collective HDF5 call. */
  if (st == TL_OK && rank == 0) {
    FILE *f = fopen(w->part, "wb");
    if (!f) st = tl_err_set(&e, TL_EIO, "cannot create output '%s': %s", w->part, strerror(errno));
    else fclose(f);
  }
  if ((st = tl_agree(st, &e, comm)) != TL_OK) {
    (void)destroy(w, NULL);
    h5p_report(st, &e, err);
    return NULL;
  }
  /* Our own duplicate, whose MPI calls return their errors (TL_EMPI) instead of aborting the
   * job; solo: w->comm stays TL_SOLO. */
  if (!solo) st = tl_comm_dup(comm, &w->comm, &e);
  if ((st = tl_agree(st, &e, comm)) != TL_OK) {
    if (rank == 0) remove(w->part);
    (void)destroy(w, NULL);
    h5p_report(st, &e, err);
    return NULL;
  }

  /* One process without MPI (TL_SOLO) writes through HDF5's default POSIX driver: the same
   * datasets, types, chunks and filters as over MPI-IO. */
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (!solo) {
    H5Pset_fapl_mpio(fapl, w->comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl, 1);
    H5Pset_coll_metadata_write(fapl, 1);
  }
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  H5Pset_link_creation_order(fcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  w->file = H5Fcreate(w->part, H5F_ACC_TRUNC, fcpl, fapl);
  H5Pclose(fcpl);
  H5Pclose(fapl);
  w->dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (w->file < 0)
    st = h5p_fail(w, &e, 1, "HDF5: cannot create '%s'%s", w->part, solo ? "" : " with MPI-IO");
  else if (w->dxpl < 0 || (!solo && H5Pset_dxpl_mpio(w->dxpl, H5FD_MPIO_COLLECTIVE) < 0))
    st = h5p_fail(w, &e, 1, "HDF5: cannot set up collective transfers for '%s'", w->part);
  if ((st = h5p_agreed(w, st, &e)) != TL_OK) {
    /* Close only when every rank opened (H5Fclose is collective); a file opened on some ranks
     * only is left to process exit rather than risk a hang. */
    int opened = w->file >= 0, all_opened = 0;
    if (tl_allreduce(&opened, &all_opened, 1, MPI_INT, MPI_LAND, w->comm, NULL) != TL_OK)
      all_opened = 0; /* not known everywhere: leave the file to process exit */
    if (all_opened) H5Fclose(w->file);
    if (w->dxpl >= 0) H5Pclose(w->dxpl);
    (void)tl_barrier(w->comm, NULL); /* failing already: nothing more to report */
    if (rank == 0) remove(w->part);
    (void)destroy(w, NULL);
    h5p_report(st, &e, err);
    return NULL;
  }
  return &w->base;
}
