/* correlate_load.c - `tally correlate`, rank 0: the table read, checked and grouped
 * (correlate_int.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "correlate_int.h"
#include "tally/str.h"

/* Splits "a,b,c" into *out, a malloc'd array of *n malloc'd strings (empty items dropped; NULL
 * and 0 for an empty or NULL s). TL_ENOMEM when out of memory (*out then holds what was made). */
static tl_status split_list(const char *s, char ***out, int *n) {
  *n = 0;
  *out = NULL;
  if (!s || !*s) return TL_OK;
  int cap = 1;
  for (const char *c = s; *c; c++) cap += *c == ',';
  if (!(*out = calloc((size_t)cap, sizeof **out))) return TL_ENOMEM;
  const char *p = s;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len && !((*out)[(*n)++] = tl_strndup(p, len))) return TL_ENOMEM;
    if (!e) break;
    p = e + 1;
  }
  return TL_OK;
}

/* ---- explicit index matrices: numpy .npy (int32/int64, C order, 2-D) or text rows ---- */
static tl_status read_indices(const char *path, uint32_t n, uint32_t **out, uint64_t *B, tl_err *err) {
  tl_buf b;
  tl_buf_init(&b);
  tl_status st = tl_file_read(path, 0, &b, err);
  if (st) {
    tl_buf_release(&b);
    return st;
  }
  uint32_t *m = NULL;
  uint64_t rows = 0;
  if (b.len >= 10 && memcmp(b.data, "\x93NUMPY", 6) == 0) {
    unsigned major = (unsigned char)b.data[6];
    size_t hl = major == 1 ? (size_t)((unsigned char)b.data[8] | ((unsigned char)b.data[9] << 8))
                           : (size_t)((unsigned char)b.data[8] | ((unsigned char)b.data[9] << 8) |
                                      ((unsigned char)b.data[10] << 16) | ((size_t)(unsigned char)b.data[11] << 24));
    size_t off = major == 1 ? 10 : 12;
    if (off + hl > b.len) { st = tl_err_set(err, TL_EINPUT, "%s: truncated .npy header", path); goto done; }
    char *hdr = tl_strndup(b.data + off, hl);
    int i8 = strstr(hdr, "'<i8'") != NULL, i4 = strstr(hdr, "'<i4'") != NULL;
    int fortran = strstr(hdr, "'fortran_order': True") != NULL;
    const char *sh = strstr(hdr, "'shape': (");
    unsigned long long d0 = 0, d1 = 0;
    int ok = sh && sscanf(sh, "'shape': (%llu, %llu)", &d0, &d1) == 2;
    free(hdr);
    if (!(i8 || i4) || fortran || !ok) {
      st = tl_err_set(err, TL_EINPUT, "%s: want a 2-D C-order int32 or int64 .npy array", path);
      goto done;
    }
    size_t es = i8 ? 8 : 4;
    if (d1 != n || d1 == 0 || d0 > (b.len - off - hl) / (d1 * es)) {
      st = tl_err_set(err, TL_EINPUT, "%s: shape (%llu, %llu), want (B, %u) and the data", path, d0, d1, n);
      goto done;
    }
    rows = d0;
    m = malloc((size_t)(rows ? rows : 1) * n * sizeof *m);
    if (!m) { st = tl_err_set(err, TL_ENOMEM, "%s: out of memory", path); goto done; }
    const unsigned char *p = (const unsigned char *)b.data + off + hl;
    for (uint64_t i = 0; i < rows * n; i++) {
      int64_t v = 0;
      if (i8) memcpy(&v, p + i * 8, 8);
      else { int32_t v4; memcpy(&v4, p + i * 4, 4); v = v4; }
      if (v < 0 || v >= (int64_t)n) {
        st = tl_err_set(err, TL_EINPUT, "%s: row %llu has index %lld outside [0, %u)", path,
                        (unsigned long long)(i / n), (long long)v, n);
        goto done;
      }
      m[i] = (uint32_t)v;
    }
  } else {
    /* text: one resample per line, whitespace- or comma-separated integers */
    size_t cap = 0;
    char *save = NULL;
    long line = 0;
    for (char *ln = strtok_r(b.data, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
      line++;
      if (strspn(ln, " \t\r,") == strlen(ln)) continue;
      if ((rows + 1) * n > cap) {
        cap = cap ? cap * 2 : (size_t)n * 64;
        uint32_t *g = realloc(m, cap * sizeof *m);
        if (!g) { st = tl_err_set(err, TL_ENOMEM, "%s: out of memory", path); goto done; }
        m = g;
      }
      uint32_t cnt = 0;
      char *s = ln;
      while (*s) {
        while (*s == ' ' || *s == '\t' || *s == ',' || *s == '\r') s++;
        if (!*s) break;
        char *e;
        errno = 0;
        long long v = strtoll(s, &e, 10);
        if (e == s || errno || v < 0 || v >= (long long)n || cnt >= n) {
          st = tl_err_set(err, TL_EINPUT, "%s:%ld: want %u integer indices in [0, %u)", path, line, n, n);
          goto done;
        }
        m[rows * n + cnt++] = (uint32_t)v;
        s = e;
      }
      if (cnt != n) {
        st = tl_err_set(err, TL_EINPUT, "%s:%ld: %u indices, want %u", path, line, cnt, n);
        goto done;
      }
      rows++;
    }
  }
  if (!rows) st = tl_err_set(err, TL_EINPUT, "%s: no resamples", path);
done:
  tl_buf_release(&b);
  if (st) { free(m); return st; }
  *out = m;
  *B = rows;
  return TL_OK;
}

static int key_cmp(const void *a, const void *b) {
  return strcmp(((const group *)a)->key, ((const group *)b)->key);
}

/* ---- load: rank 0 reads the table and builds the groups ----
 * Each step below prints its own failure on o->log (rank 0's) and returns the status whose
 * exit code (tl_exit_code) the study ends with: TL_EUSAGE 2 (a column or option that does not
 * fit the table), TL_EINPUT 3 (a bad cell, or --strict-input), another status 1 (TL_EIO: the
 * table cannot give a result). */
typedef struct {
  const tl_corr_opts *o;
  tl_inlog *log;
  corr_data *d;
  tl_tabin t;            /* the table; borrowed from o->table when set (not released then) */
  int have_t;            /* t was read here: release it */
  char **gb;             /* [ngb] the --group-by columns */
  int ngb;
  int hcol, *mcol, *gcol;/* column indices: the human score, [M] metrics, [ngb] group-by */
  double *num;           /* [(M + 1) * nrows]: column c (0 = human) at c * nrows */
  unsigned char *ok;     /* [(M + 1) * nrows]: 1 where num holds a number */
  unsigned char *rowok;  /* [nrows]: every cell of the row is a number */
  int ccol, scol;        /* the cluster and system columns, or -1 */
  uint32_t *rowgroup;    /* [nrows]: each row's group (until the groups are sorted) */
} loader;

static void loader_release(loader *L) {
  for (int k = 0; k < L->ngb; k++) free(L->gb[k]);
  free(L->gb);
  free(L->mcol);
  free(L->gcol);
  free(L->num);
  free(L->ok);
  free(L->rowok);
  free(L->rowgroup);
  if (L->have_t) tl_tabin_release(&L->t);
}

/* Step 1: the table (o->table, or o->input read). */
static tl_status load_read(loader *L) {
  const tl_corr_opts *o = L->o;
  tl_err err = {{0}};
  if (o->table) {
    L->t = *o->table;
    return TL_OK;
  }
  tl_status st = tl_tabin_read(o->input, 0, L->log, &L->t, &err);
  if (st == TL_OK) {
    L->have_t = 1;
    return TL_OK;
  }
  if (err.msg[0]) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
  else if (st == TL_EINPUT && L->log->strict) /* the problem itself is already on stderr */
    fprintf(o->log, "%s: stopped at the first input problem (--strict-input)\n", LABEL(o));
  else fprintf(o->log, "%s: cannot use the table '%s': %s\n", LABEL(o), o->input, tl_strerror(st));
  /* 3 is --strict-input's code; a table that cannot be used at all is a failure (1) */
  return st == TL_EINPUT && L->log->strict ? TL_EINPUT : TL_EIO;
}

static tl_status load_oom(const tl_corr_opts *o) {
  fprintf(o->log, "%s: out of memory reading the table\n", LABEL(o));
  return TL_ENOMEM;
}

/* The cluster or system column `name` (NULL: none) into *col (-1 when none): 1 when it is
 * missing and was named (reported), 0 otherwise ("auto": a default that may be absent). */
static int load_id_column(loader *L, const char *name, int is_auto, const char *what, int *col) {
  *col = name ? tl_tabin_col(&L->t, name) : -1;
  if (!name || *col >= 0 || is_auto) return 0;
  fprintf(L->o->log, "%s: %s has no column '%s' (the %s column)\n", LABEL(L->o), L->o->input, name, what);
  return 1;
}

/* Step 2: the named columns (d->names, gb) and their indices; every missing one is reported,
 * with the columns present. */
static tl_status load_columns(loader *L) {
  const tl_corr_opts *o = L->o;
  corr_data *d = L->d;
  const tl_tabin *t = &L->t;
  if (split_list(o->group_by, &L->gb, &L->ngb) || split_list(o->metrics, &d->names, &d->M))
    return load_oom(o);
  L->hcol = tl_tabin_col(t, o->human);
  L->mcol = calloc((size_t)d->M + 1, sizeof *L->mcol);
  L->gcol = calloc((size_t)L->ngb + 1, sizeof *L->gcol);
  if (!L->mcol || !L->gcol) return load_oom(o);
  int missing = L->hcol < 0;
  if (L->hcol < 0) fprintf(o->log, "%s: %s has no column '%s' (the --human score)\n", LABEL(o), o->input, o->human);
  for (int m = 0; m < d->M; m++) {
    L->mcol[m] = tl_tabin_col(t, d->names[m]);
    if (L->mcol[m] < 0) { fprintf(o->log, "%s: %s has no column '%s' (in --metrics)\n", LABEL(o), o->input, d->names[m]); missing = 1; }
  }
  for (int k = 0; k < L->ngb; k++) {
    L->gcol[k] = tl_tabin_col(t, L->gb[k]);
    if (L->gcol[k] < 0) { fprintf(o->log, "%s: %s has no column '%s' (in --group-by)\n", LABEL(o), o->input, L->gb[k]); missing = 1; }
  }
  missing |= load_id_column(L, o->cluster, o->cluster_auto, "--cluster", &L->ccol);
  missing |= load_id_column(L, o->system, o->system_auto, "--system", &L->scol);
  if (!missing) return TL_OK;
  fprintf(o->log, "%s: columns present: ", LABEL(o));
  for (int c = 0; c < t->ncols; c++) fprintf(o->log, "%s%s", c ? ", " : "", t->colnames[c]);
  fprintf(o->log, "\n");
  return TL_EUSAGE;
}

/* Step 3: the numeric columns; a row with any bad cell is reported (per cell) and excluded. */
static tl_status load_numeric(loader *L) {
  const size_t nrows = L->t.nrows, M = (size_t)L->d->M;
  L->num = malloc((M + 1) * (nrows ? nrows : 1) * sizeof *L->num);
  L->ok = malloc((M + 1) * (nrows ? nrows : 1));
  L->rowok = malloc(nrows ? nrows : 1);
  if (!L->num || !L->ok || !L->rowok) return load_oom(L->o);
  memset(L->rowok, 1, nrows);
  for (size_t c = 0; c <= M; c++) {
    if (tl_tabin_numeric(&L->t, c == 0 ? L->hcol : L->mcol[c - 1], L->log, L->num + c * nrows,
                         L->ok + c * nrows))
      return TL_EINPUT;
    for (size_t r = 0; r < nrows; r++) L->rowok[r] &= L->ok[c * nrows + r];
  }
  return TL_OK;
}

/* Step 4a: each row's group (rowgroup[nrows]), groups created in first-seen order with their
 * keys; gcount[k] = usable rows of group k (*gcount malloc'd, the caller frees it). */
static tl_status load_keys(loader *L, uint32_t *rowgroup, size_t **gcount) {
  corr_data *d = L->d;
  const tl_tabin *t = &L->t;
  tl_status st = TL_OK;
  tl_strmap gi;
  tl_strmap_init(&gi);
  tl_buf key;
  tl_buf_init(&key);
  int gcap = 0;
  for (size_t r = 0; r < t->nrows && st == TL_OK; r++) {
    tl_buf_reset(&key);
    if (!L->ngb) st = tl_buf_puts(&key, "all");
    for (int k = 0; k < L->ngb && st == TL_OK; k++)
      st = tl_buf_printf(&key, "%s%s=%s", k ? "," : "", L->gb[k], t->cells[r][L->gcol[k]]);
    size_t gix = 0;
    bool ins = false;
    if (st == TL_OK) st = tl_strmap_put(&gi, key.data, (size_t)d->ngroups, &ins, &gix);
    if (st == TL_OK && ins) {
      if (d->ngroups == gcap) {
        gcap = gcap ? gcap * 2 : 8;
        group *g = realloc(d->g, (size_t)gcap * sizeof *d->g);
        if (g) d->g = g;
        size_t *c = g ? realloc(*gcount, (size_t)gcap * sizeof **gcount) : NULL;
        if (c) *gcount = c;
        if (!g || !c) { st = TL_ENOMEM; break; }
      }
      memset(&d->g[d->ngroups], 0, sizeof *d->g);
      if (!(d->g[d->ngroups].key = tl_strdup(key.data))) { st = TL_ENOMEM; break; }
      (*gcount)[d->ngroups] = 0;
      gix = (size_t)d->ngroups++;
    }
    if (st != TL_OK) break;
    rowgroup[r] = (uint32_t)gix;
    if (L->rowok[r]) (*gcount)[gix]++;
    else d->g[gix].excluded++;
  }
  tl_buf_release(&key);
  tl_strmap_release(&gi);
  return st == TL_OK ? TL_OK : load_oom(L->o);
}

/* Dense ids (first-seen order within group g) of column col's cells of g's usable rows into
 * ids[g->n]; *nid distinct values, their names appended NUL-terminated to names (when not
 * NULL). TL_ENOMEM when out of memory. */
static tl_status group_ids(const loader *L, int gix, int col, uint32_t *ids, uint32_t *nid, tl_buf *names) {
  tl_strmap map;
  tl_strmap_init(&map);
  tl_status st = TL_OK;
  uint32_t pos = 0;
  *nid = 0;
  for (size_t r = 0; r < L->t.nrows && st == TL_OK; r++) {
    if (!L->rowok[r] || L->rowgroup[r] != (uint32_t)gix) continue;
    const char *v = L->t.cells[r][col];
    bool ins = false;
    size_t id = 0;
    st = tl_strmap_put(&map, v, *nid, &ins, &id);
    if (st == TL_OK && ins) {
      id = (*nid)++;
      if (names) st = tl_buf_append(names, v, strlen(v) + 1);
    }
    ids[pos++] = (uint32_t)id;
  }
  tl_strmap_release(&map);
  return st;
}

/* Step 4b: each group's cluster ids (cl, ncl) and system ids (sys, nsys, sysnames), into the
 * tail of the group's metric block (correlate_int.h). With cluster_auto, a group in which no
 * cluster has two rows keeps item resampling (cl NULL). */
static tl_status load_ids(loader *L) {
  corr_data *d = L->d;
  tl_status st = TL_OK;
  for (int k = 0; k < d->ngroups && st == TL_OK && (L->ccol >= 0 || L->scol >= 0); k++) {
    group *g = &d->g[k];
    const size_t n = g->n ? g->n : 1, head = (size_t)d->M * n * sizeof(double);
    tl_buf names;
    tl_buf_init(&names);
    uint32_t *ids = malloc(2 * n * sizeof *ids);
    if (!ids) st = TL_ENOMEM;
    if (st == TL_OK && L->ccol >= 0) st = group_ids(L, k, L->ccol, ids, &g->ncl, NULL);
    if (st == TL_OK && L->scol >= 0) st = group_ids(L, k, L->scol, ids + n, &g->nsys, &names);
    if (st == TL_OK && L->o->cluster_auto && g->ncl == g->n) g->ncl = 0; /* one row per cluster */
    char *blk = st == TL_OK ? realloc(g->metric, head + 2 * n * sizeof *ids + names.len + 1) : NULL;
    if (blk) {
      g->metric = (double *)blk;
      memcpy(blk + head, ids, 2 * n * sizeof *ids);
      memcpy(blk + head + 2 * n * sizeof *ids, names.data ? names.data : "", names.len);
      g->cl = g->ncl ? (uint32_t *)(blk + head) : NULL;
      g->sys = L->scol >= 0 ? (uint32_t *)(blk + head) + n : NULL;
      g->sysnames = blk + head + 2 * n * sizeof *ids;
    } else if (st == TL_OK) {
      st = TL_ENOMEM;
    }
    free(ids);
    tl_buf_release(&names);
  }
  return st == TL_OK ? TL_OK : load_oom(L->o);
}

/* Step 4: the groups: keys, then each group's usable rows in file order (human[n], metric
 * [M][n]); a group whose rows were all excluded is reported and skipped, not fatal for the
 * others. */
static tl_status load_groups(loader *L) {
  corr_data *d = L->d;
  const size_t nrows = L->t.nrows;
  size_t *gcount = NULL;
  uint32_t *rowgroup = L->rowgroup = malloc((nrows ? nrows : 1) * sizeof *rowgroup);
  tl_status st = rowgroup ? load_keys(L, rowgroup, &gcount) : load_oom(L->o);
  for (int k = 0; k < d->ngroups && st == TL_OK; k++) {
    group *g = &d->g[k];
    g->human = malloc((gcount[k] ? gcount[k] : 1) * sizeof *g->human);
    g->metric = malloc((size_t)d->M * (gcount[k] ? gcount[k] : 1) * sizeof *g->metric);
    if (!g->human || !g->metric) st = load_oom(L->o);
  }
  for (size_t r = 0; r < nrows && st == TL_OK; r++) {
    if (!L->rowok[r]) continue;
    group *g = &d->g[rowgroup[r]];
    size_t cap = gcount[rowgroup[r]];
    g->human[g->n] = L->num[r];
    for (int m = 0; m < d->M; m++) g->metric[(size_t)m * cap + g->n] = L->num[(size_t)(m + 1) * nrows + r];
    g->n++;
  }
  free(gcount);
  if (st == TL_OK) st = load_ids(L);
  if (st != TL_OK) return st;
  for (int k = 0; k < d->ngroups;) {
    if (d->g[k].n > 0) { k++; continue; }
    tl_inlog_report(L->log, TL_IN_BAD_FIELD, L->o->input, 0, "group '%s' has no usable row (%lld excluded); skipped",
                    d->g[k].key, (long long)d->g[k].excluded);
    free(d->g[k].key); free(d->g[k].human); free(d->g[k].metric);
    memmove(&d->g[k], &d->g[k + 1], (size_t)(d->ngroups - k - 1) * sizeof *d->g);
    d->ngroups--;
  }
  return TL_OK;
}

/* Step 5: the groups checked (some usable, none too large) and sorted by key; the resampling
 * (B, or the --indices matrix of a single group) and the size limits of the gathers. A later
 * failure's status replaces an earlier one's; every one is reported. */
static tl_status load_resampling(loader *L) {
  const tl_corr_opts *o = L->o;
  corr_data *d = L->d;
  tl_status st = TL_OK;
  if (d->ngroups == 0) {
    fprintf(o->log, "%s: %s: no group has a usable row\n", LABEL(o), o->input);
    st = TL_EIO;
  }
  for (int k = 0; k < d->ngroups; k++) {
    if (d->g[k].n > TL_BOOT_MAX_N) {
      fprintf(o->log, "%s: group '%s' has %u rows, more than %d\n", LABEL(o), d->g[k].key, d->g[k].n, TL_BOOT_MAX_N);
      st = TL_EUSAGE;
    }
  }
  qsort(d->g, (size_t)d->ngroups, sizeof *d->g, key_cmp);
  if (o->indices) {
    tl_err err = {{0}};
    tl_status ist;
    if (d->ngroups != 1) {
      fprintf(o->log, "%s: --indices needs a single group (the matrix is for one n)\n", LABEL(o));
      st = TL_EUSAGE;
    } else if ((ist = read_indices(o->indices, d->g[0].n, &d->indices, &d->B, &err))) {
      fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
      st = ist == TL_EINPUT ? TL_EUSAGE : ist; /* a bad matrix is a usage error (2), a failed read 1 */
    }
    if (d->ngroups > 0) d->idx_n = d->g[0].n;
  } else {
    d->B = o->resamples;
  }
  /* MPI counts are int: every resample block and the index matrix must fit */
  uint64_t K = (uint64_t)d->M * (uint64_t)(d->nstats ? d->nstats : 2);
  if (st == TL_OK && d->B * K > (uint64_t)INT_MAX) {
    fprintf(o->log, "%s: %llu resamples x %llu values is more than this version gathers (2^31 - 1); "
                    "use fewer resamples or metrics per study\n", LABEL(o), (unsigned long long)d->B,
            (unsigned long long)K);
    st = TL_EUSAGE;
  }
  if (st == TL_OK && d->indices && d->B * (uint64_t)d->idx_n > (uint64_t)INT_MAX) {
    fprintf(o->log, "%s: the --indices matrix has more than 2^31 - 1 entries\n", LABEL(o));
    st = TL_EUSAGE;
  }
  return st;
}

/* Rank 0: reads the table and builds the groups (the steps above, in order; the first failing
 * step ends it, its failure already reported). */
tl_status corr_load(const tl_corr_opts *o, tl_inlog *log, corr_data *d) {
  loader L;
  memset(&L, 0, sizeof L);
  L.o = o;
  L.log = log;
  L.d = d;
  tl_status st = load_read(&L);
  if (st == TL_OK) st = load_columns(&L);
  if (st == TL_OK) st = load_numeric(&L);
  if (st == TL_OK) st = load_groups(&L);
  if (st == TL_OK) st = load_resampling(&L);
  loader_release(&L);
  return st;
}
