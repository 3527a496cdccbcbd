/* h5p_open.c - the collective parallel-HDF5 table writer (writer.h; its design and parts in
 * h5p_int.h): open, close, abort, the root attributes. */
#define _GNU_SOURCE /* fallocate, FALLOC_FL_* */
#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The space the close may write, reserved before it (collective; agreed status).
 *
 * H5Fclose flushes the metadata cache collectively. When the disk fills inside that flush, HDF5
 * fails on one rank only and the ranks then wait in different collectives (one in the cache's
 * sync point, one in the truncate's broadcast): a hang that nothing after it can undo. So the
 * blocks that the flush can write are reserved first, where a failure is still a plain agreed
 * status: rank 0 fallocates, with FALLOC_FL_KEEP_SIZE (the file's length and bytes do not
 * change), the range from the file's end to that plus the metadata cache's size (every entry it
 * holds may still be unwritten, its space allocated past the end) plus 256 KiB (entries that
 * grow and move). Measured: the close of the demo job's file wrote 6.0 KB past its end with a
 * cache of 109 KB, the 60,000-unit SpatialEval job's 7.3 KB with 140 KB. HDF5's own end of
 * allocation is not asked: H5Fget_filesize fails on these files in HDF5 1.10.8. The largest
 * need over the ranks is taken: their caches hold the same entries, but nothing relies on it.
 * *reserved: the length reserved (0 where the file system cannot preallocate: the close then
 * runs as before, with its risk; no error). */
static tl_status reserve_close(h5p *w, int64_t *reserved, tl_err *e) {
  tl_status st = TL_OK;
  size_t max_size = 0, min_clean = 0, cur_size = 0;
  int nent = 0;
  int64_t mine[2] = {0, 0}, all[2] = {0, 0};
  struct stat sb;
  if (w->rank == 0 && stat(w->part, &sb) != 0)
    st = tl_err_set(e, TL_EIO, "cannot read the size of '%s': %s", w->part, strerror(errno));
  else if (H5Fget_mdc_size(w->file, &max_size, &min_clean, &cur_size, &nent) < 0)
    st = h5p_fail(w, e, 0, "HDF5: cannot measure the metadata left to write");
  mine[0] = w->rank == 0 && st == TL_OK ? (int64_t)sb.st_size : 0;
  mine[1] = (int64_t)cur_size + ((int64_t)256 << 10);
  if ((st = h5p_agreed(w, st, e)) != TL_OK) return st;
  if ((st = tl_allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, w->comm, e)) != TL_OK) return h5p_agreed(w, st, e);
  *reserved = 0;
  if (w->rank == 0) {
    int fd = open(w->part, O_WRONLY);
    if (fd < 0) {
      st = tl_err_set(e, TL_EIO, "cannot reserve space to finish '%s': %s", w->part, strerror(errno));
    } else {
      if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)all[0], (off_t)all[1]) == 0) *reserved = all[1];
      else if (errno != EOPNOTSUPP && errno != ENOSYS)
        st = tl_err_set(e, TL_EIO, "cannot reserve %lld bytes to finish '%s': %s", (long long)all[1], w->part,
                        strerror(errno));
      close(fd);
    }
    if (st) w->failed = 1;
  }
  return h5p_agreed(w, st, e);
}

/* Rank 0, after the close: gives back what reserve_close reserved past the file's end
 * (truncating a file to its own length frees its blocks past the end on ext4, XFS and tmpfs;
 * where it does not, they stay allocated to the file until it is removed: its bytes are right
 * either way). */
static void release_close(const char *file, int64_t reserved) {
  if (reserved <= 0) return;
  int fd = open(file, O_WRONLY);
  if (fd < 0) return;
  struct stat sb;
  if (fstat(fd, &sb) == 0 && ftruncate(fd, sb.st_size) != 0) {
    /* the blocks stay reserved: nothing to report */
  }
  close(fd);
}

/* Leaves the file open on every rank (HDF5 not shut down at exit: tl_h5_broken); rank 0 removes
 * the part file. For a writer whose collective H5Fclose could hang. Collective. */
static void drop_open(h5p *w) {
  g_hdf5_broken = 1;
  (void)tl_barrier(w->comm, NULL); /* failing already: nothing more to report */
  if (w->rank == 0) remove(w->part);
}

static tl_status close_(tl_writer *w_, tl_err *err) {
  h5p *w = (h5p *)w_;
  tl_err e = {{0}};
  int64_t reserved = 0;
  tl_status st = reserve_close(w, &reserved, &e);
  H5Pclose(w->dxpl);
  if (st != TL_OK) { /* no space for the close: it is not tried */
    drop_open(w);
    (void)destroy(w, NULL); /* the reserve's failure is the one to report */
    return h5p_report(st, &e, err);
  }
  if (H5Fclose(w->file) < 0) {
    g_hdf5_broken = 1;
    st = h5p_fail(w, &e, 0, "HDF5: cannot finish the file");
  }
  st = h5p_agreed(w, st, &e);
  /* Every rank has closed: rank 0 publishes (or drops) the file and tells the others. */
  if (w->rank == 0) {
    if (st == TL_OK) release_close(w->part, reserved);
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
