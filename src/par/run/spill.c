/* spill.c - the spilled item-table rows: written as units finish, read back window by window when the tables are written. */
#include <zstd.h>

#include "run.h"

/* "<dir>/r<rank, 5 digits>.bin" (malloc'd): rank q's spilled rows. */
static char *spill_path(const char *dir, int q) {
  tl_buf p;
  tl_buf_init(&p);
  tl_buf_printf(&p, "%s/r%05d.bin", dir, q);
  return tl_buf_detach(&p);
}

/* A spilled row: uint32 byte count of what follows, then each cell in column order: a string as
 * uint32 length, its bytes and a NUL; an int64 or a double as its 8 bytes. A string cell that is
 * the unit's reply text of stage s (the table borrows ur->text[s]: the same pointer) whose reply
 * the replay engine served from a line (refs[s]) is spilled as SPILL_REF and the reference, the
 * reply's source (ur->source[s], "<path>:<line>") as SPILL_SRC and the reference's source and
 * line: see put_ref. Each string cell's length is added to sb[2k] and raised into sb[2k + 1]
 * (k: its index among the string columns; write_rows' str_stats). */
#define SPILL_REF UINT32_MAX       /* a reply text, read back from its answers file */
#define SPILL_SRC (UINT32_MAX - 1) /* a reply's source, "<path>:<line>" of its answers line */

/* A referenced cell: the marker, role (0 model, 1 judge), then for SPILL_REF the reference's
 * src, off, len, resp, line, sum and tlen (40 bytes), for SPILL_SRC its src and line: 48 or
 * 16 bytes in all. */
static tl_status put_ref(tl_buf *out, uint32_t marker, int stage, const tl_reply_ref *rf) {
  char b[48]; /* the longest: SPILL_REF's */
  size_t n = 0;
  const uint32_t role = stage ? TL_ROLE_JUDGE : TL_ROLE_MODEL;
#define PUT(v) (memcpy(b + n, &(v), sizeof(v)), n += sizeof(v))
  PUT(marker);
  PUT(role);
  PUT(rf->src);
  if (marker == SPILL_REF) {
    PUT(rf->off);
    PUT(rf->len);
    PUT(rf->resp);
    PUT(rf->line);
    PUT(rf->sum);
    PUT(rf->tlen);
  } else {
    PUT(rf->line);
  }
#undef PUT
  return tl_buf_append(out, b, n);
}

tl_status run_spill_row(const tl_table *t, size_t row, const tl_row *ur, const tl_reply_ref *const *refs, tl_buf *out,
                        uint64_t *sb) {
  tl_buf_reset(out);
  uint32_t len = 0;
  tl_status st = tl_buf_append(out, (const char *)&len, 4);
  for (int c = 0; c < t->ncols && !st; c++) {
    const tl_col *col = &t->cols[c];
    if (tl_col_is_str(col->type)) {
      const char *v = col->v.s[row];
      const size_t vl = col->len[row];
      sb[0] += vl;
      if (vl > sb[1]) sb[1] = vl;
      sb += 2;
      int done = 0;
      for (int s = 0; v && ur && refs && s < TL_MAX_STAGES && !done; s++) {
        if (!refs[s]) continue;
        if (v == ur->text[s] && vl == refs[s]->tlen) st = put_ref(out, SPILL_REF, s, refs[s]), done = 1;
        else if (v == ur->source[s]) st = put_ref(out, SPILL_SRC, s, refs[s]), done = 1;
      }
      if (done) continue;
      uint32_t n = (uint32_t)vl;
      st = tl_buf_append(out, (const char *)&n, 4);
      if (!st) st = tl_buf_append(out, v, (size_t)n + 1);
    } else {
      st = tl_buf_append(out, col->type == TL_COL_I64 ? (const char *)&col->v.i[row] : (const char *)&col->v.f[row], 8);
    }
  }
  if (!st && out->len - 4 > UINT32_MAX) st = TL_EINTERNAL;
  len = (uint32_t)(out->len - 4);
  if (!st) memcpy(out->data, &len, 4);
  return st;
}

/* ---- frames ----
 * A rank's spill file is a sequence of frames: uint32 compressed bytes, uint32 raw bytes, the
 * zstd frame (level SPILL_ZLEVEL) of raw bytes that are whole spilled rows, then zeros up to the
 * next multiple of SPILL_ALIGN bytes. Rows are gathered until they hold SPILL_BLOCK bytes (a
 * row that would go past it starts a new frame, so every row starts under SPILL_BLOCK into its
 * frame; a longer row alone makes a longer frame). A row's place (held_rows rec[1]) packs the
 * rank (SPILL_RANK_BITS), its frame's offset in SPILL_ALIGN units (SPILL_FRAME_BITS: 16 GiB of
 * frames per rank) and the row's offset in the frame's raw bytes (SPILL_IN_BITS).
 * Why compressed, and why so (bench/scratch_compress.py on the 60,000-unit SpatialEval replay
 * job, rows already without their reply texts, 64 KiB blocks; the same figures in
 * docs/PERFORMANCE.md "Scratch"): raw 334.7 B/unit; zstd-1 48.1 B/unit (6.96x) for 0.66 us of
 * CPU per unit to compress and 0.22 us to read back; zstd-3 46.9 B (0.74 us); libdeflate-1 59.7 B
 * (0.95 us); libdeflate-6 51.2 B (2.90 us). zstd-1: nearly the smallest, the cheapest. */
#define SPILL_ZLEVEL 1
#define SPILL_BLOCK ((size_t)1 << 16)
#define SPILL_ALIGN 64
#define SPILL_RANK_BITS 20
#define SPILL_FRAME_BITS 28
#define SPILL_IN_BITS 16

static uint64_t spref(int rank, uint64_t frame_off, uint64_t in) {
  return (uint64_t)rank << (SPILL_FRAME_BITS + SPILL_IN_BITS) | (frame_off / SPILL_ALIGN) << SPILL_IN_BITS | in;
}
static int spref_rank(uint64_t ref) { return (int)(ref >> (SPILL_FRAME_BITS + SPILL_IN_BITS)); }
static uint64_t spref_frame(uint64_t ref) {
  return ((ref >> SPILL_IN_BITS) & ((1ULL << SPILL_FRAME_BITS) - 1)) * SPILL_ALIGN;
}
static uint32_t spref_in(uint64_t ref) { return (uint32_t)(ref & ((1ULL << SPILL_IN_BITS) - 1)); }

/* The gathered rows as one frame at spill_pos. 0, or -1 (errno set) when it cannot be written. */
static int frame_write(run_spill *sp) {
  if (!sp->spill_blk.len) return 0;
  const size_t bound = ZSTD_compressBound(sp->spill_blk.len) + 8 + SPILL_ALIGN;
  if (bound > sp->spill_zcap) {
    char *z = realloc(sp->spill_z, bound);
    if (!z) return errno = ENOMEM, -1;
    sp->spill_z = z;
    sp->spill_zcap = bound;
  }
  if (!sp->spill_zctx && !(sp->spill_zctx = ZSTD_createCCtx())) return errno = ENOMEM, -1;
  size_t zn = ZSTD_compressCCtx(sp->spill_zctx, sp->spill_z + 8, sp->spill_zcap - 8 - SPILL_ALIGN, sp->spill_blk.data,
                                sp->spill_blk.len, SPILL_ZLEVEL);
  if (ZSTD_isError(zn) || zn > UINT32_MAX || sp->spill_blk.len > UINT32_MAX) return errno = EIO, -1;
  const uint32_t hdr[2] = {(uint32_t)zn, (uint32_t)sp->spill_blk.len};
  memcpy(sp->spill_z, hdr, 8);
  size_t n = 8 + zn, padded = (n + SPILL_ALIGN - 1) / SPILL_ALIGN * SPILL_ALIGN;
  memset(sp->spill_z + n, 0, padded - n);
  if (fwrite(sp->spill_z, 1, padded, sp->spill) != padded) return -1;
  sp->spill_pos += padded;
  tl_buf_reset(&sp->spill_blk);
  return 0;
}

tl_status run_spill_put(bench_run *r, const tl_buf *row, uint64_t *ref) {
  run_spill *sp = &r->sp;
  if (sp->spill_blk.len && sp->spill_blk.len + row->len > SPILL_BLOCK && frame_write(sp) != 0) return TL_EIO;
  if (sp->spill_pos / SPILL_ALIGN >= (1ULL << SPILL_FRAME_BITS) || r->rank >= (1 << SPILL_RANK_BITS)) {
    errno = EFBIG;
    return TL_EIO;
  }
  *ref = spref(r->rank, sp->spill_pos, sp->spill_blk.len);
  return tl_buf_append(&sp->spill_blk, row->data, row->len);
}

void run_spill_frames_release(run_spill *sp) {
  tl_buf_release(&sp->spill_blk);
  free(sp->spill_z);
  ZSTD_freeCCtx(sp->spill_zctx);
  sp->spill_zctx = NULL;
  sp->spill_z = NULL;
  sp->spill_zcap = 0;
}

tl_status run_spill_end(bench_run *r) {
  int rc = frame_write(&r->sp);
  run_spill_frames_release(&r->sp);
  return rc ? TL_EIO : TL_OK;
}

static int spill_read(window_ctx *c, int q, int fd, uint64_t off, void *dst, size_t n);

/* The frames a window reads, decompressed: the last few (LRU), for the call (a window's rows
 * of one rank lie mostly in order in its file; the ranks' chunks interleave). */
enum { FCACHE = 8 };
typedef struct {
  int q[FCACHE];
  uint64_t at[FCACHE], used[FCACHE], tick;
  tl_buf raw[FCACHE], z;
  ZSTD_DCtx *dctx;   /* made on first use, freed with the cache */
} frame_cache;

/* The raw bytes of the frame at offset `at` of rank q's file (*n bytes), decompressed now if
 * not cached; NULL on a read error, a damaged frame or no memory (c->st set). */
static const char *frame_get(window_ctx *c, frame_cache *fc, int q, int fd, uint64_t at, size_t *n) {
  int lru = 0;
  fc->tick++;
  for (int k = 0; k < FCACHE; k++) {
    if (fc->used[k] && fc->q[k] == q && fc->at[k] == at) {
      fc->used[k] = fc->tick;
      *n = fc->raw[k].len;
      return fc->raw[k].data;
    }
    if (fc->used[k] < fc->used[lru]) lru = k;
  }
  uint32_t hdr[2];
  if (spill_read(c, q, fd, at, hdr, 8) != 0) goto cut;
  tl_buf_reset(&fc->z);
  tl_buf_reset(&fc->raw[lru]);
  if (tl_buf_extend(&fc->z, hdr[0]) || tl_buf_extend(&fc->raw[lru], hdr[1])) {
    c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
    return NULL;
  }
  if (spill_read(c, q, fd, at + 8, fc->z.data, hdr[0]) != 0) goto cut;
  if (!fc->dctx && !(fc->dctx = ZSTD_createDCtx())) {
    c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
    return NULL;
  }
  size_t got = ZSTD_decompressDCtx(fc->dctx, fc->raw[lru].data, hdr[1], fc->z.data, hdr[0]);
  if (ZSTD_isError(got) || got != hdr[1]) goto cut;
  fc->q[lru] = q;
  fc->at[lru] = at;
  fc->used[lru] = fc->tick;
  *n = hdr[1];
  return fc->raw[lru].data;
cut:
  fc->used[lru] = 0;
  c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are cut short or damaged (frame at byte %llu)", q,
                     (unsigned long long)at);
  return NULL;
}

/* ---- the references table (run.h run_spill.pref) ---- */

static size_t pref_slot(const run_spill *sp, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & (sp->cappref - 1);
}

tl_status run_pref_note(run_spill *sp, uint64_t g, int s, const char *text, const tl_reply_ref *ref) {
  if ((sp->npref + 1) * 2 > sp->cappref) { /* at most half full */
    size_t cap = sp->cappref ? sp->cappref * 2 : 1024;
    struct run_pref *old = sp->pref, *p = calloc(cap, sizeof *p);
    if (!p) return TL_ENOMEM;
    const size_t ocap = sp->cappref;
    sp->pref = p;
    sp->cappref = cap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].key) {
        size_t j = pref_slot(sp, old[i].key);
        while (p[j].key) j = (j + 1) & (cap - 1);
        p[j] = old[i];
      }
    free(old);
  }
  const uint64_t key = 1 + g * TL_MAX_STAGES + (uint64_t)s;
  size_t j = pref_slot(sp, key);
  while (sp->pref[j].key && sp->pref[j].key != key) j = (j + 1) & (sp->cappref - 1);
  if (!sp->pref[j].key) sp->npref++;
  sp->pref[j] = (struct run_pref){key, text, *ref};
  return TL_OK;
}

int run_pref_take(run_spill *sp, uint64_t g, int s, const char **text, tl_reply_ref *ref) {
  if (!sp->npref) return 0;
  const uint64_t key = 1 + g * TL_MAX_STAGES + (uint64_t)s;
  const size_t mask = sp->cappref - 1;
  size_t j = pref_slot(sp, key);
  while (sp->pref[j].key && sp->pref[j].key != key) j = (j + 1) & mask;
  if (!sp->pref[j].key) return 0;
  *text = sp->pref[j].text;
  *ref = sp->pref[j].ref;
  /* backward-shift deletion: the entries after it that probed past j move up */
  size_t i = j;
  for (size_t k = (j + 1) & mask; sp->pref[k].key; k = (k + 1) & mask) {
    size_t home = pref_slot(sp, sp->pref[k].key);
    if (((k - home) & mask) >= ((k - i) & mask)) { /* k's home is not in (i, k]: it may move to i */
      sp->pref[i] = sp->pref[k];
      i = k;
    }
  }
  sp->pref[i].key = 0;
  sp->npref--;
  return 1;
}

void run_pref_release(run_spill *sp) {
  free(sp->pref);
  sp->pref = NULL;
  sp->npref = sp->cappref = 0;
  free(sp->nocopy_own);
  sp->nocopy_own = NULL;
  sp->nocopy_dir = NULL;
  sp->last_path = NULL;
}

/* Reads n bytes at off of rank q's spill file (descriptor fd) into dst, through the
 * read-ahead. 0 ok, -1 on a read error, a file cut short or no memory. */
static int spill_read(window_ctx *c, int q, int fd, uint64_t off, void *dst, size_t n) {
  int nomem;
  const char *p = tl_rdahead_at(&c->ra, q, fd, off, n, &nomem);
  if (!p) return -1;
  memcpy(dst, p, n);
  return 0;
}

/* A referenced cell of a spilled row (put_ref's form, at p, marker read) into the arena as a
 * string cell: the text read back from its answers file through the replay engine that served
 * it (checked as submit checks it), or its source. Returns the bytes of p used, 0 on failure
 * (c->st set). */
static size_t get_ref(window_ctx *c, uint32_t marker, const char *p, size_t left) {
  const size_t need = marker == SPILL_REF ? 48 - 4 : 16 - 4;
  if (left < need) {
    c->st = tl_err_set(&c->err, TL_EIO, "a spilled row is cut short");
    return 0;
  }
  uint32_t role;
  tl_reply_ref rf;
  memset(&rf, 0, sizeof rf);
  size_t n = 0;
#define GET(v) (memcpy(&(v), p + n, sizeof(v)), n += sizeof(v))
  GET(role);
  GET(rf.src);
  if (marker == SPILL_REF) {
    GET(rf.off);
    GET(rf.len);
    GET(rf.resp);
    GET(rf.line);
    GET(rf.sum);
    GET(rf.tlen);
  } else {
    GET(rf.line);
  }
#undef GET
  tl_replay *rp = role < TL_ROLE__N ? c->r->en.replay[role] : NULL;
  const char *path = rp ? tl_replay_source_path(rp, rf.src) : NULL;
  if (!path) {
    c->st = tl_err_set(&c->err, TL_EINTERNAL, "a spilled row names an answers file the run does not have");
    return 0;
  }
  char num[24]; /* the source "<path>:<line>", as the engine's source_of writes it, without printf */
  int nd = 0;
  for (unsigned long ln = rf.line; nd == 0 || ln; ln /= 10) num[sizeof num - 1 - nd++] = (char)('0' + ln % 10);
  const size_t pl = strlen(path);
  const uint32_t vl = (uint32_t)(marker == SPILL_REF ? rf.tlen : pl + 1 + (size_t)nd); /* tlen: checked */
  const size_t at = c->arena.len;
  int rb = tl_buf_append(&c->arena, (const char *)&vl, 4) ? TL_REPLAY_REF_NOMEM : TL_REPLAY_REF_OK;
  if (!rb && marker == SPILL_REF) rb = tl_replay_ref_text(rp, &rf, &c->arena);
  else if (!rb && (tl_buf_append(&c->arena, path, pl) || tl_buf_append(&c->arena, ":", 1) ||
                   tl_buf_append(&c->arena, num + sizeof num - nd, (size_t)nd) || tl_buf_append(&c->arena, "", 1)))
    rb = TL_REPLAY_REF_NOMEM;
  if (rb) c->arena.len = at;
  if (rb == TL_REPLAY_REF_CHANGED)
    c->st = tl_err_set(&c->err, TL_EIO, "the answers file '%s' changed during the run (its line %lu is not the one "
                       "answered): run the job again", path, (unsigned long)rf.line);
  else if (rb)
    c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
  return c->st ? 0 : need;
}

/* One spilled row (p, len bytes) appended to the arena with its referenced cells read back: the
 * form window_from_spill's cells are borrowed from. c->st set on failure. */
static void decode_row(window_ctx *c, const char *p, size_t len) {
  const tl_table *t = c->win; /* the window's table: its columns' types */
  const char *end = p + len, *span = p; /* span: the cells not yet appended (copied as they are) */
  for (int k = 0; k < t->ncols && !c->st; k++) {
    if (!tl_col_is_str(t->cols[k].type)) {
      if (end - p < 8) goto bad;
      p += 8;
      continue;
    }
    uint32_t sl;
    if (end - p < 4) goto bad;
    memcpy(&sl, p, 4);
    if (sl == SPILL_REF || sl == SPILL_SRC) {
      if (tl_buf_append(&c->arena, span, (size_t)(p - span))) goto bad;
      size_t used = get_ref(c, sl, p + 4, (size_t)(end - p - 4));
      if (!used) return;
      p += 4 + used;
      span = p;
    } else {
      if ((size_t)(end - p - 4) < (size_t)sl + 1) goto bad;
      p += 4 + (size_t)sl + 1;
    }
  }
  if (!c->st && tl_buf_append(&c->arena, span, (size_t)(p - span)) == TL_OK) return;
bad:
  if (!c->st) c->st = tl_err_set(&c->err, TL_EIO, "a spilled row is cut short (or out of memory)");
}

/* The window's rows from the spilled item-table rows (every unit of the window has one): read
 * into the arena, then the cells borrowed from it. */
static tl_table *window_from_spill(window_ctx *c, uint64_t first, uint64_t n) {
  bench_run *r = c->r;
  const int w = c->h->w;
  tl_buf_reset(&c->arena);
  if (n > c->at_cap) {
    size_t *p = realloc(c->at, n * sizeof *p);
    if (!p) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory for a window of rows");
      return NULL;
    }
    c->at = p;
    c->at_cap = n;
  }
  if (c->win) tl_table_clear(c->win);
  else if (!(c->win = run_items_table(r, (size_t)(c->rb - r->rbs), NULL, NULL, 0, NULL))) {
    c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
    return NULL;
  }
  size_t *at = c->at;
  frame_cache fc;
  memset(&fc, 0, sizeof fc);
  tl_buf_init(&fc.z);
  for (int k = 0; k < FCACHE; k++) tl_buf_init(&fc.raw[k]);
  for (uint64_t i = 0; i < n && !c->st; i++) {
    const uint64_t ref = c->h->rec[(first + i) * (uint64_t)w + 1];
    const int q = spref_rank(ref);
    if (r->sp.spill_fd[q] < 0) {
      char *p = spill_path(r->sp.rows_dir, q);
      r->sp.spill_fd[q] = p ? open(p, O_RDONLY) : -1;
      if (r->sp.spill_fd[q] < 0)
        c->st = tl_err_set(&c->err, TL_EIO, "cannot read the rows of rank %d ('%s'): %s", q, p ? p : "?", strerror(errno));
      free(p);
      if (c->st) break;
    }
    size_t fn = 0;
    const char *f = frame_get(c, &fc, q, r->sp.spill_fd[q], spref_frame(ref), &fn);
    if (!f) break;
    const size_t in = spref_in(ref);
    uint32_t len;
    if (in + 4 > fn || (memcpy(&len, f + in, 4), fn - in - 4 < len)) {
      c->st = tl_err_set(&c->err, TL_EIO, "the rows of rank %d are damaged", q);
      break;
    }
    at[i] = c->arena.len;
    decode_row(c, f + in + 4, len);
  }
  tl_buf_release(&fc.z);
  for (int k = 0; k < FCACHE; k++) tl_buf_release(&fc.raw[k]);
  ZSTD_freeDCtx(fc.dctx);
  tl_table *t = c->st ? NULL : c->win;
  for (uint64_t i = 0; t && i < n && !c->st; i++) {
    size_t row = tl_table_add_row(t);
    if (row == (size_t)-1) {
      c->st = tl_err_set(&c->err, TL_ENOMEM, "out of memory building the item table");
      break;
    }
    const char *p = c->arena.data + at[i];
    for (int k = 0; k < t->ncols; k++) {
      if (tl_col_is_str(t->cols[k].type)) {
        uint32_t sl;
        memcpy(&sl, p, 4);
        tl_table_ref_strn(t, row, k, p + 4, sl);
        p += 4 + (size_t)sl + 1;
      } else if (t->cols[k].type == TL_COL_I64) {
        int64_t v;
        memcpy(&v, p, 8);
        tl_table_set_i64(t, row, k, v);
        p += 8;
      } else {
        double v;
        memcpy(&v, p, 8);
        tl_table_set_f64(t, row, k, v);
        p += 8;
      }
    }
  }
  if (c->st) return NULL; /* c->win is freed with the context */
  if (c->collect) run_collect_cells(c, t);
  return t;
}

/* Rows first .. first + n - 1 of the block. */
tl_table *run_window_fill(void *vctx, uint64_t first, uint64_t n) {
  window_ctx *c = vctx;
  return c->st ? NULL : window_from_spill(c, first, n);
}

/* Collective: rank 0 creates <output>.rows/ (its parent, the output's folder, is checked), then
 * every rank creates its file there (truncated: what an earlier, killed attempt left is
 * replaced) and notes every rank's (read when the tables are written). */
tl_status run_open_spill(bench_run *r, const char *output, MPI_Comm comm, tl_err *err) {
  tl_buf d;
  tl_buf_init(&d);
  tl_buf_printf(&d, "%s.rows", output);
  r->sp.rows_dir = tl_buf_detach(&d);
  tl_status st = r->sp.rows_dir ? TL_OK : tl_err_set(err, TL_ENOMEM, "out of memory");
  if (!st && r->rank == 0 && mkdir(r->sp.rows_dir, 0777) != 0 && errno != EEXIST)
    st = tl_err_set(err, TL_EIO, "cannot create the folder '%s': %s", r->sp.rows_dir, strerror(errno));
  if ((st = tl_agree(st, err, comm))) return st;
  char *p = spill_path(r->sp.rows_dir, r->rank);
  r->sp.spill = p && !run_test_fail("spill", r->rank) ? fopen(p, "wb") : NULL;
  if (r->sp.spill && (r->sp.spill_vbuf = malloc(TL_JOURNAL_VBUF))) /* a row per unit: few, large writes */
    setvbuf(r->sp.spill, r->sp.spill_vbuf, _IOFBF, TL_JOURNAL_VBUF);
  if (r->sp.spill) { /* a signal after scoring removes it (on_signal_late) */
    snprintf(g_spill_path, sizeof g_spill_path, "%s", p);
    if (r->rank == 0) snprintf(g_rows_dir, sizeof g_rows_dir, "%s", r->sp.rows_dir);
  }
  r->sp.spill_fd = malloc((size_t)r->nranks * sizeof *r->sp.spill_fd);
  for (int q = 0; r->sp.spill_fd && q < r->nranks; q++) r->sp.spill_fd[q] = -1;
  if (!r->sp.spill || !r->sp.spill_fd)
    st = tl_err_set(err, TL_EIO, "cannot create '%s': %s", p ? p : r->sp.rows_dir, strerror(errno));
  free(p);
  return tl_agree(st, err, comm);
}

/* Rank 0, once every rank has closed its file: the spilled rows and their folder go. */
void run_remove_spill(const char *dir, FILE *log) {
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
      tl_buf p;
      tl_buf_init(&p);
      tl_buf_printf(&p, "%s/%s", dir, e->d_name);
      if (p.data && unlink(p.data) != 0) fprintf(log, "tally: cannot remove '%s': %s\n", p.data, strerror(errno));
      tl_buf_release(&p);
    }
  }
  if (d) closedir(d);
  if (rmdir(dir) != 0 && errno != ENOENT) fprintf(log, "tally: cannot remove the folder '%s': %s\n", dir, strerror(errno));
}
