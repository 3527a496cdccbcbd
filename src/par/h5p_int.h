/* h5p_int.h - the collective parallel-HDF5 table writer (writer.h): what its parts share
 * (private to src/par/h5p_*.c).
 *
 * Every rank opens the file through MPI-IO and takes part in every call. Metadata (groups,
 * datasets, attributes) is created by all ranks with the same arguments; raw data goes through
 * H5FD_MPIO_COLLECTIVE transfers, each rank writing its own hyperslab (a rank with no rows
 * selects none but still joins the transfer).
 *
 * Layout: as the serial writer (group per table, 1-D dataset per column, `doc` attribute, no
 * object timestamps, link creation order tracked, chunked + deflate (texts level 1, numbers 4) above 4096
 * elements, shuffle for numbers), except string columns, as parallel HDF5 cannot write
 * variable-length data: a short-string column (TL_COL_STR) is a fixed-length string dataset as
 * wide as its longest value over all ranks (writer.h), and a text column `c` (TL_COL_TEXT, or a
 * TL_COL_STR column wider than TL_FIXED_STR_MAX) becomes `c.bytes` (uint8, every value's UTF-8
 * bytes in global row order) and `c.offsets` (int64 [nrows], the global byte offset where each
 * value starts). The bytes of every dataset depend only on the global rows, never on the split.
 *
 * write_rows writes the same datasets window by window (rows handed out by the caller's fill
 * function), so a rank's memory is one window however many rows it holds: a first pass over the
 * windows measures the string columns (each rank's blob offset depends on the bytes of the rows
 * before its own), then every dataset is created and each window is written with one collective
 * transfer per dataset, ranks with no window left joining with empty selections.
 *
 * Failures are made collective (comm.h, the collective error contract): every step ends in
 * tl_agree, so all ranks return the status and message of the lowest failing rank and no rank is
 * left waiting in a collective call that the others skipped. The writer works over its own
 * duplicate of the caller's communicator, with MPI_ERRORS_RETURN (tl_comm_dup): a failed MPI
 * call is TL_EMPI naming the call, agreed like any other failure. */
#ifndef TALLY_H5P_INT_H
#define TALLY_H5P_INT_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "tally/err.h"
#include "tally/table.h"
#include "writer.h"

/* The parts, one responsibility each:
 *   h5p_open.c    the writer: open, close, abort, the root attributes (the vtable);
 *   h5p_ds.c      the primitives every write uses: the agreement, failures, same-on-every-rank
 *                 checks, dataset and group creation, the collective transfer, string types;
 *   h5p_table.c   write_slice, and the layout (rows and string bytes over ranks) and the call
 *                 checks it shares with write_rows;
 *   h5p_rows.c    write_rows: the same datasets window by window;
 *   h5p_schema.c  write_table: rank 0's schema broadcast, then write_slice.
 * Ownership: the writer (h5p) owns its communicator, file, transfer list and paths (freed by
 * close or abort); a layout owns its arrays (h5p_layout_free). */

#define CHUNK_ABOVE 4096 /* datasets with more elements are chunked and deflated */
/* Deflate levels. With zlib, measured on the 84,000-unit SpatialEval job (bench/merge_bench.sh's,
 * 1 rank, 3 runs each), the text blobs at level 4 took 2.74-2.97 s of gather+write for a 6.98 MB
 * file, at 3 2.45-2.49 s for 7.50 MB, at 1 2.41-2.45 s for 8.47 MB, so texts were at 3. Deflate is
 * now libdeflate's (h5_deflate.c): on the 150,000-unit job's 86 MB of responses its level 1 took
 * 0.18 s for 9.44 MB, its level 3 0.29 s for 8.83 MB, zlib's level 3 0.45 s for 9.86 MB. Texts
 * are at 1: faster and smaller than before. Numbers (shuffled) stay at 4. */
#define TL_DEFLATE_TEXT 1
#define TL_DEFLATE_NUMBERS 4
/* A window's rows are held three times over (the caller's read-back rows, its table, one string
 * column packed), and every buffer of that size is touched page by page. Gather+write of the
 * 150,000-unit job on 1 rank (2 runs each): 65,536-row windows 1.26-1.28 s with 46,000 page
 * faults in the whole run, 16,384 0.97-0.99 s with 26,000, 8,192 0.96-0.97 s with 21,000. */
#define CHUNK_MAX 16384                  /* elements */
#define CHUNK_BYTES ((hsize_t)1 << 20)    /* at most, and a byte blob's (HDF5's chunk cache holds one) */
#define WINDOW_DEFAULT 16384 /* rows per write_rows window: one chunk of a numeric column */

typedef struct {
  tl_writer base;
  MPI_Comm comm; /* our own duplicate */
  int rank, size;
  hid_t file;
  hid_t dxpl; /* collective transfers */
  char *path;
  char *part;
  int failed; /* an HDF5 call failed on this rank (h5p_fail) */
} h5p;

/* Where one table's rows and string bytes go, the same on every rank once h5p_layout_exchange
 * has run (write_slice and write_rows). Arrays are owned (h5p_layout_free); nstr = the table's
 * string columns, k below = a string column's index among them. */
typedef struct {
  int nstr, per;         /* per = 2 + 2 nstr: the numbers one rank contributes */
  uint64_t *mine;        /* [per]: offset, nrows, then per string column its bytes and longest value */
  uint64_t *all;         /* [per * size]: every rank's `mine`, in rank order */
  uint64_t *blob_total;  /* [nstr + 1]: a string column's bytes over all ranks */
  uint64_t *blob_start;  /* [nstr + 1]: its bytes in the slices before this rank's (row order) */
  uint64_t *width;       /* [nstr + 1]: its longest value over all ranks */
  uint64_t *slices;      /* [2 size]: tile's scratch */
} layout;

/* h5p_ds.c */
tl_status h5p_agreed(h5p *w, tl_status st, tl_err *e);
tl_status h5p_report(tl_status st, const tl_err *e, tl_err *err);
tl_status h5p_fail(h5p *w, tl_err *e, int named, const char *fmt, ...);
uint64_t h5p_fnv(uint64_t h, const void *p, size_t n);
uint64_t h5p_fnv_str(uint64_t h, const char *s);
__attribute__((format(printf, 4, 5)))
tl_status h5p_same_everywhere(h5p *w, uint64_t h, tl_err *e, const char *what, ...);
hsize_t h5p_chunk_elems(hsize_t n, size_t esize);
hid_t h5p_create_ds(hid_t g, const char *name, hid_t ftype, hsize_t n, int shuffle);
herr_t h5p_write_part(h5p *w, hid_t d, hid_t mtype, hsize_t start, hsize_t count,
                      const void *buf);
tl_status h5p_create_group(h5p *w, const char *path, hid_t *g, tl_err *e);
int h5p_is_fixed(const tl_col *col, uint64_t width, uint64_t bytes, uint64_t rows);
hid_t h5p_fixed_type(uint64_t width);
void h5p_pack_fixed(unsigned char *buf, const tl_col *col, size_t n, uint64_t width);

/* h5p_table.c */
tl_status h5p_layout_alloc(layout *l, const tl_table *s, int size, tl_err *e);
void h5p_layout_free(layout *l);
void h5p_layout_measure(layout *l, const tl_table *t);
tl_status h5p_layout_exchange(h5p *w, layout *l, tl_status st, uint64_t offset, uint64_t nrows,
                              uint64_t total, const char *path, tl_err *e);
tl_status h5p_check_call(h5p *w, const tl_table *s, int bad, const char *what, uint64_t offset,
                         uint64_t nrows, uint64_t total, uint64_t extra, const char *differ,
                         tl_err *e);
tl_status h5p_write_slice(tl_writer *w_, const tl_table *t, uint64_t offset, uint64_t total,
                          tl_err *err);

/* h5p_rows.c */
tl_status h5p_write_rows(tl_writer *w_, const tl_table *s, uint64_t offset, uint64_t nrows,
                         uint64_t total, const uint64_t *str_stats, tl_fill_fn fill, void *ctx,
                         tl_err *err);

/* h5p_schema.c */
tl_status h5p_write_table(tl_writer *w_, const tl_table *t, tl_err *err);

#endif
