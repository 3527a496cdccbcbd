/* correlate.c - `tally correlate` (see correlate.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "comm.h"
#include "correlate.h"
#include "driver.h"
#include "outsafe.h"
#include "tally/boot.h"
#include "tally/str.h"
#include "tally/strmap.h"
#include "tally/tabin.h"
#include "writer.h"
#ifdef TALLY_HAVE_CUDA
#include "tally/cuda_boot.h"
#endif

/* The prefix of this study's messages: "tally correlate", or the job's study label. */
#define LABEL(o) ((o)->label ? (o)->label : "tally correlate")

/* One group of rows, as rank 0 prepared it and every rank received it. */
typedef struct {
  char *key;       /* "col=value,..." or "all" */
  uint32_t n;
  double *human;   /* [n] */
  double *metric;  /* [M][n] */
  /* results (rank 0) */
  double *full;    /* [K] */
  tl_boot_summary *per;  /* [K] */
  tl_boot_compare *cmp;  /* [ncmp] */
  double *vals;    /* [B][K] */
  int64_t excluded;/* rows dropped for non-numeric cells */
} group;

typedef struct {
  int M;
  char **names;     /* [M] */
  int ngroups;
  group *g;
  uint64_t B;
  uint32_t *indices;/* [B][n] or NULL */
  uint32_t idx_n;
  int nstats;
  tl_stat stats[TL_STAT__N];
} corr_data;

static void corr_release(corr_data *d) {
  for (int i = 0; i < d->M; i++) free(d->names ? d->names[i] : NULL);
  free(d->names);
  for (int k = 0; k < d->ngroups; k++) {
    group *g = &d->g[k];
    free(g->key); free(g->human); free(g->metric); free(g->full); free(g->per); free(g->cmp);
    free(g->vals);
  }
  free(d->g);
  free(d->indices);
  memset(d, 0, sizeof *d);
}

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
} loader;

static void loader_release(loader *L) {
  for (int k = 0; k < L->ngb; k++) free(L->gb[k]);
  free(L->gb);
  free(L->mcol);
  free(L->gcol);
  free(L->num);
  free(L->ok);
  free(L->rowok);
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

/* Step 4: the groups: keys, then each group's usable rows in file order (human[n], metric
 * [M][n]); a group whose rows were all excluded is reported and skipped, not fatal for the
 * others. */
static tl_status load_groups(loader *L) {
  corr_data *d = L->d;
  const size_t nrows = L->t.nrows;
  size_t *gcount = NULL;
  uint32_t *rowgroup = malloc((nrows ? nrows : 1) * sizeof *rowgroup);
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
  free(rowgroup);
  free(gcount);
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
static tl_status load(const tl_corr_opts *o, tl_inlog *log, corr_data *d) {
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

/* Computes resamples [r0, r1) of one group on this rank: CUDA when asked/available, else CPU. */
static tl_status compute_block(const tl_study_in *in, const tl_study *s, uint64_t r0, uint64_t r1,
                               double *out, int device, int *used_gpu, FILE *log, tl_err *err) {
  *used_gpu = 0;
#ifdef TALLY_HAVE_CUDA
  if (device != 1 && !in->indices && tl_cuda_devices() > 0) {
    tl_dense hy, *hx = calloc((size_t)in->nmetrics, sizeof *hx);
    tl_pair *pr = calloc((size_t)in->nmetrics, sizeof *pr);
    const uint32_t **xl = calloc((size_t)in->nmetrics, sizeof *xl), **ord = calloc((size_t)in->nmetrics, sizeof *ord);
    tl_status st = tl_dense_init(&hy, in->human, in->n);
    for (int m = 0; m < in->nmetrics && !st; m++) {
      st = tl_dense_init(&hx[m], in->metric[m], in->n);
      if (!st) st = tl_pair_init(&pr[m], &hx[m], &hy);
      xl[m] = hx[m].level;
      ord[m] = pr[m].order;
    }
    if (!st) {
      tl_cuda_study cs = {in->n, hy.nlevels, hy.level, in->nmetrics, xl, ord, in->nstats,
                          {in->stats[0], in->nstats > 1 ? in->stats[1] : 0}, in->seed};
      st = tl_cuda_resamples(&cs, r0, r1, out, err);
      if (!st) *used_gpu = 1;
      else if (device == 2) { /* required */ }
      else { fprintf(log, "tally correlate: %s; using the CPU\n", err->msg); }
    }
    for (int m = 0; m < in->nmetrics; m++) { tl_pair_release(&pr[m]); tl_dense_release(&hx[m]); }
    tl_dense_release(&hy);
    free(hx); free(pr); free(xl); free(ord);
    if (*used_gpu) return TL_OK;
    if (device == 2) return TL_ENGINE;
  }
#endif
  if (device == 2) return tl_err_set(err, TL_ENGINE, "--device cuda: no usable CUDA device in this build/machine");
  (void)log;
  return tl_study_resamples(s, r0, r1, out);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A resampling p-value: "<1/B" when none of the B draws was as extreme ("-" when not run). */
static void fmt_p(char *buf, size_t n, double p, uint64_t B) {
  if (isnan(p)) snprintf(buf, n, "-");
  else if (p == 0 && B > 0) snprintf(buf, n, "<%.4f", 1.0 / (double)B);
  else snprintf(buf, n, "%.4f", p);
}

static void print_table(const tl_corr_opts *o, const corr_data *d) {
  FILE *f = o->outf;
  int K = d->M * d->nstats, npairs = d->M * (d->M - 1) / 2;
  const char *meth = o->method == TL_CI_BCA ? "BCa" : "percentile";
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    fprintf(f, "%s%s: n = %u items", k ? "\n" : "", g->key, g->n);
    if (g->excluded) fprintf(f, " (%lld rows excluded: non-numeric or undefined cells)", (long long)g->excluded);
    fprintf(f, ", B = %llu resamples%s, seed %llu, %.0f%% %s CIs\n", (unsigned long long)d->B,
            d->indices ? " (--indices)" : "", (unsigned long long)o->seed, 100 * o->ci, meth);
    fprintf(f, "  %-18s %-10s %9s  %-21s %8s %9s\n", "metric", "statistic", "estimate", "CI", "SE", "undefined");
    for (int q = 0; q < K; q++) {
      const tl_boot_summary *p = &g->per[q];
      char ci[64];
      snprintf(ci, sizeof ci, "[%.4f, %.4f]", p->ci_lo, p->ci_hi);
      fprintf(f, "  %-18s %-10s %9.4f  %-21s %8.4f %9lld\n", d->names[q / d->nstats],
              tl_stat_name(d->stats[q % d->nstats]), p->estimate, ci, p->se, (long long)p->n_undefined);
    }
    if (npairs) {
      fprintf(f, "  comparisons (paired bootstrap of the difference a - b; p_boot is the recommended test)\n");
      fprintf(f, "  %-14s %-14s %-10s %8s  %-21s %8s %8s %8s%s\n", "a", "b", "statistic", "delta", "CI",
              "p_boot", "p_willi", "p_perm", o->ttest_compat ? "  p_ttest(COMPAT)" : "");
      for (int q = 0; q < d->nstats * npairs; q++) {
        const tl_boot_compare *c = &g->cmp[q];
        char ci[64];
        snprintf(ci, sizeof ci, "[%.4f, %.4f]", c->diff.ci_lo, c->diff.ci_hi);
        char pb[32], pw[32], pp[32];
        fmt_p(pb, sizeof pb, c->p_boot, d->B);
        fmt_p(pw, sizeof pw, c->p_williams, 0);
        fmt_p(pp, sizeof pp, c->p_permutation, d->B);
        fprintf(f, "  %-14s %-14s %-10s %8.4f  %-21s %8s %8s %8s", d->names[c->a], d->names[c->b],
                tl_stat_name(d->stats[q / npairs]), c->diff.estimate, ci, pb, pw, pp);
        if (o->ttest_compat) fprintf(f, "  %.3g", c->p_ttest_compat);
        fprintf(f, "\n");
      }
      if (o->ttest_compat)
        fprintf(f, "  COMPAT p_ttest: paper-style t-test on the two bootstrap vectors; its p-value shrinks as B grows\n"
                   "  (it tests the resampling, not the metrics): do not use it as evidence.\n");
    }
  }
  /* the layout of the LAVE paper's table: one row per metric, one column per group, each
   * statistic x 100 (the estimates above) */
  int wd = 8;
  for (int k = 0; k < d->ngroups; k++)
    if ((int)strlen(d->g[k].key) > wd) wd = (int)strlen(d->g[k].key) > 40 ? 40 : (int)strlen(d->g[k].key);
  if (d->ngroups > 1)
    for (int st = 0; st < d->nstats; st++) {
      fprintf(f, "\n%s x 100, by group:\n  %-18s", tl_stat_name(d->stats[st]), "metric");
      for (int k = 0; k < d->ngroups; k++) fprintf(f, " %*.*s", wd, wd, d->g[k].key);
      fprintf(f, "\n");
      for (int m = 0; m < d->M; m++) {
        fprintf(f, "  %-18s", d->names[m]);
        for (int k = 0; k < d->ngroups; k++) {
          double v = d->g[k].per ? d->g[k].per[m * d->nstats + st].estimate : NAN;
          if (isnan(v)) fprintf(f, " %*s", wd, "-");
          else fprintf(f, " %*.2f", wd, 100 * v);
        }
        fprintf(f, "\n");
      }
    }
}

static void print_json(const tl_corr_opts *o, const corr_data *d) {
  int K = d->M * d->nstats, npairs = d->M * (d->M - 1) / 2;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "resamples", (double)d->B);
  cJSON_AddNumberToObject(root, "seed", (double)o->seed);
  cJSON_AddNumberToObject(root, "ci", o->ci);
  cJSON_AddStringToObject(root, "method", o->method == TL_CI_BCA ? "bca" : "percentile");
  cJSON_AddBoolToObject(root, "indices", d->indices != NULL);
  cJSON *gs = cJSON_AddArrayToObject(root, "groups");
#define NUM(obj, name, v) (isfinite(v) ? cJSON_AddNumberToObject(obj, name, v) : cJSON_AddNullToObject(obj, name))
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    cJSON *jg = cJSON_CreateObject();
    cJSON_AddStringToObject(jg, "group", g->key);
    cJSON_AddNumberToObject(jg, "n", g->n);
    cJSON_AddNumberToObject(jg, "excluded_rows", (double)g->excluded);
    cJSON *ms = cJSON_AddArrayToObject(jg, "metrics");
    for (int q = 0; q < K; q++) {
      const tl_boot_summary *p = &g->per[q];
      cJSON *m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "metric", d->names[q / d->nstats]);
      cJSON_AddStringToObject(m, "statistic", tl_stat_name(d->stats[q % d->nstats]));
      NUM(m, "estimate", p->estimate); NUM(m, "boot_mean", p->boot_mean); NUM(m, "se", p->se);
      NUM(m, "ci_lo", p->ci_lo); NUM(m, "ci_hi", p->ci_hi);
      cJSON_AddNumberToObject(m, "n_defined", (double)p->n_defined);
      cJSON_AddNumberToObject(m, "n_undefined", (double)p->n_undefined);
      cJSON_AddItemToArray(ms, m);
    }
    cJSON *cs = cJSON_AddArrayToObject(jg, "comparisons");
    for (int q = 0; q < d->nstats * npairs; q++) {
      const tl_boot_compare *c = &g->cmp[q];
      cJSON *m = cJSON_CreateObject();
      cJSON_AddStringToObject(m, "a", d->names[c->a]);
      cJSON_AddStringToObject(m, "b", d->names[c->b]);
      cJSON_AddStringToObject(m, "statistic", tl_stat_name(d->stats[q / npairs]));
      NUM(m, "delta", c->diff.estimate); NUM(m, "ci_lo", c->diff.ci_lo); NUM(m, "ci_hi", c->diff.ci_hi);
      NUM(m, "p_boot", c->p_boot); NUM(m, "p_williams", c->p_williams); NUM(m, "p_permutation", c->p_permutation);
      if (o->ttest_compat) { NUM(m, "p_ttest_compat", c->p_ttest_compat); NUM(m, "t_ttest_compat", c->t_ttest_compat); }
      cJSON_AddItemToArray(cs, m);
    }
    cJSON_AddItemToArray(gs, jg);
  }
#undef NUM
  char *s = cJSON_Print(root);
  fprintf(o->outf, "%s\n", s);
  free(s);
  cJSON_Delete(root);
}

/* ---- the output tables (rank 0 builds them; every rank takes part in the writes) ---- */

#define ADDCOL(t, n, ty, doc) if (tl_table_add_col((t), (n), (ty), (doc)) < 0) return TL_ENOMEM
/* Rank 0: the summary table, one row per (group, metric, statistic). TL_ENOMEM when out of
 * memory. */
static tl_status build_summary(const corr_data *d, tl_table *sum) {
  const int K = d->M * d->nstats;
  ADDCOL(sum, "group", TL_COL_STR, "group key (col=value,...) or all");
  ADDCOL(sum, "metric", TL_COL_STR, "metric column");
  ADDCOL(sum, "statistic", TL_COL_STR, "spearman | kendall_b");
  ADDCOL(sum, "n", TL_COL_I64, "items in the group");
  ADDCOL(sum, "estimate", TL_COL_F64, "statistic on the full data");
  ADDCOL(sum, "boot_mean", TL_COL_F64, "mean of the defined resample values");
  ADDCOL(sum, "se", TL_COL_F64, "bootstrap standard error (ddof=1)");
  ADDCOL(sum, "ci_lo", TL_COL_F64, "lower CI bound");
  ADDCOL(sum, "ci_hi", TL_COL_F64, "upper CI bound");
  ADDCOL(sum, "n_defined", TL_COL_I64, "resamples with a defined value");
  ADDCOL(sum, "n_undefined", TL_COL_I64, "resamples excluded (undefined statistic)");
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    for (int q = 0; q < K; q++) {
      const tl_boot_summary *p = &g->per[q];
      size_t r = tl_table_add_row(sum);
      if (r == (size_t)-1) return TL_ENOMEM;
      if (tl_table_set_str(sum, r, 0, g->key) || tl_table_set_str(sum, r, 1, d->names[q / d->nstats]) ||
          tl_table_set_str(sum, r, 2, tl_stat_name(d->stats[q % d->nstats])))
        return TL_ENOMEM;
      tl_table_set_i64(sum, r, 3, g->n);
      double v[] = {p->estimate, p->boot_mean, p->se, p->ci_lo, p->ci_hi};
      for (int i = 0; i < 5; i++) tl_table_set_f64(sum, r, 4 + i, v[i]);
      tl_table_set_i64(sum, r, 9, p->n_defined);
      tl_table_set_i64(sum, r, 10, p->n_undefined);
    }
  }
  return TL_OK;
}

/* Rank 0: the compare table, one row per (group, statistic, metric pair). */
static tl_status build_compare(const corr_data *d, tl_table *cmp) {
  const int npairs = d->M * (d->M - 1) / 2;
  ADDCOL(cmp, "group", TL_COL_STR, "group key");
  ADDCOL(cmp, "statistic", TL_COL_STR, "spearman | kendall_b");
  ADDCOL(cmp, "a", TL_COL_STR, "first metric");
  ADDCOL(cmp, "b", TL_COL_STR, "second metric");
  ADDCOL(cmp, "delta", TL_COL_F64, "stat(a) - stat(b) on the full data");
  ADDCOL(cmp, "ci_lo", TL_COL_F64, "lower CI bound of the paired difference");
  ADDCOL(cmp, "ci_hi", TL_COL_F64, "upper CI bound of the paired difference");
  ADDCOL(cmp, "p_boot", TL_COL_F64, "paired bootstrap p-value (recommended)");
  ADDCOL(cmp, "p_williams", TL_COL_F64, "Williams' test (spearman only)");
  ADDCOL(cmp, "p_permutation", TL_COL_F64, "paired permutation test");
  ADDCOL(cmp, "p_ttest_compat", TL_COL_F64, "COMPAT: t-test on bootstrap vectors; shrinks with B, not evidence");
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    for (int q = 0; q < d->nstats * npairs; q++) {
      const tl_boot_compare *c = &g->cmp[q];
      size_t r = tl_table_add_row(cmp);
      if (r == (size_t)-1) return TL_ENOMEM;
      if (tl_table_set_str(cmp, r, 0, g->key) || tl_table_set_str(cmp, r, 1, tl_stat_name(d->stats[q / npairs])) ||
          tl_table_set_str(cmp, r, 2, d->names[c->a]) || tl_table_set_str(cmp, r, 3, d->names[c->b]))
        return TL_ENOMEM;
      double v[] = {c->diff.estimate, c->diff.ci_lo, c->diff.ci_hi, c->p_boot, c->p_williams,
                    c->p_permutation, c->p_ttest_compat};
      for (int i = 0; i < 7; i++) tl_table_set_f64(cmp, r, 4 + i, v[i]);
    }
  }
  return TL_OK;
}

/* Rank 0: the resamples table, one row per (group, resample), one column per value. */
static tl_status build_resamples(const corr_data *d, tl_table *res) {
  const int K = d->M * d->nstats;
  ADDCOL(res, "group", TL_COL_STR, "group key");
  ADDCOL(res, "resample", TL_COL_I64, "resample index r");
  for (int q = 0; q < K; q++) {
    char nm[256];
    snprintf(nm, sizeof nm, "%s/%s", d->names[q / d->nstats], tl_stat_name(d->stats[q % d->nstats]));
    for (char *c = nm; *c; c++) if (*c == '/') *c = ':';
    ADDCOL(res, nm, TL_COL_F64, "value on the resample (NaN = undefined)");
  }
  for (int k = 0; k < d->ngroups; k++) {
    const group *g = &d->g[k];
    for (uint64_t b = 0; b < d->B; b++) {
      size_t r = tl_table_add_row(res);
      if (r == (size_t)-1 || tl_table_set_str(res, r, 0, g->key)) return TL_ENOMEM;
      tl_table_set_i64(res, r, 1, (int64_t)b);
      for (int q = 0; q < K; q++) tl_table_set_f64(res, r, 2 + q, g->vals[b * (uint64_t)K + (uint64_t)q]);
    }
  }
  return TL_OK;
}

/* Rank 0: the params table, one row: how the study was run. */
static tl_status build_params(const tl_corr_opts *o, const corr_data *d, tl_table *par) {
  ADDCOL(par, "input", TL_COL_STR, "the data table");
  ADDCOL(par, "human", TL_COL_STR, "human score column");
  ADDCOL(par, "metrics", TL_COL_STR, "metric columns, comma-separated");
  ADDCOL(par, "group_by", TL_COL_STR, "grouping columns, comma-separated");
  ADDCOL(par, "resamples", TL_COL_I64, "B");
  ADDCOL(par, "seed", TL_COL_I64, "Philox key");
  ADDCOL(par, "ci_level", TL_COL_F64, "confidence level");
  ADDCOL(par, "ci_method", TL_COL_STR, "percentile | bca");
  ADDCOL(par, "permutation", TL_COL_I64, "1 when the permutation test ran (B permutations)");
  ADDCOL(par, "resampling", TL_COL_STR, "how resamples were drawn");
  size_t r = tl_table_add_row(par);
  if (r == (size_t)-1) return TL_ENOMEM;
  if (tl_table_set_str(par, r, 0, o->input) || tl_table_set_str(par, r, 1, o->human) ||
      tl_table_set_str(par, r, 2, o->metrics) || tl_table_set_str(par, r, 3, o->group_by ? o->group_by : "") ||
      tl_table_set_str(par, r, 7, o->method == TL_CI_BCA ? "bca" : "percentile") ||
      tl_table_set_str(par, r, 9, d->indices ? "explicit index matrix (--indices)"
                                             : "Philox4x32-10 keyed by (seed, resample)"))
    return TL_ENOMEM;
  tl_table_set_i64(par, r, 4, (int64_t)d->B);
  tl_table_set_i64(par, r, 5, (int64_t)o->seed);
  tl_table_set_f64(par, r, 6, o->ci);
  tl_table_set_i64(par, r, 8, o->permutation);
  return TL_OK;
}
#undef ADDCOL

/* Collective over c and w's communicator. Writes the study's tables under `prefix` (e.g.
 * "/stats/correlate"): summary, compare, resamples (every resample value) and params (one row:
 * how the study was run). Rank 0 builds them; the ranks agree on that (over c) before the
 * first write, then every rank takes part in each write (the writer agrees on its failures).
 * Nothing here depends on the rank count or the device (those go to the log), so the datasets
 * are byte-identical however the study ran. Returns the agreed status, its message in err. */
static tl_status write_tables(const tl_corr_opts *o, const corr_data *d, tl_writer *w,
                              const char *prefix, int rank, MPI_Comm c, tl_err *err) {
  static const char *const NAME[4] = {"summary", "compare", "resamples", "params"};
  tl_table *t[4] = {NULL, NULL, NULL, NULL};
  tl_status st = TL_OK;
  if (rank == 0) {
    for (int i = 0; i < 4 && st == TL_OK; i++) {
      char path[512];
      snprintf(path, sizeof path, "%s/%s", prefix, NAME[i]);
      if (!(t[i] = tl_table_new(path))) st = TL_ENOMEM;
    }
    if (st == TL_OK) st = build_summary(d, t[0]);
    if (st == TL_OK) st = build_compare(d, t[1]);
    if (st == TL_OK) st = build_resamples(d, t[2]);
    if (st == TL_OK) st = build_params(o, d, t[3]);
    if (st != TL_OK) tl_err_set(err, st, "out of memory building the output tables");
  }
  st = tl_agree(st, err, c);
  for (int i = 0; i < 4 && st == TL_OK; i++) st = w->vt->write_table(w, rank ? NULL : t[i], err);
  for (int i = 0; i < 4; i++) tl_table_free(t[i]);
  return st;
}

/* ---- the study: collective steps over the study's own communicator ----
 * Every step below is collective over s->c and ends in one agreement (tl_agree: the status and
 * message of the lowest failing rank, on every rank); a rank whose local part failed (an
 * allocation, a computation) still joins the agreement, so all ranks leave together. After a
 * failed step rank 0 reports the agreed message once on o->log (load reports its own). */
typedef struct {
  const tl_corr_opts *o;
  MPI_Comm c;          /* the study's duplicate (MPI_ERRORS_RETURN), or TL_SOLO */
  int rank, nranks;
  corr_data d;         /* rank 0: loaded; the others: received (group results on rank 0 only) */
  int has_indices;     /* the --indices matrix goes with the (single) group */
  int K, npairs;       /* values per resample (metrics x statistics); metric pairs */
  double t_res, t_sum; /* this rank's seconds computing resamples; the tests */
  int gpu_groups;      /* groups whose resamples this rank computed with CUDA */
} study;

/* One group's temporaries on this rank (group_free releases them). */
typedef struct {
  const double **mp;   /* [M]: the metric columns, into g->metric */
  tl_study_in in;
  tl_study *s;
  uint64_t r0, r1;     /* this rank's resamples [r0, r1) (and permutations) */
  double *mine;        /* [(r1 - r0) K]: their values */
  int *cnt, *dsp;      /* rank 0: [nranks] gatherv counts and displacements */
  int P;               /* permutation counts: pairs x statistics */
  int64_t *pc_mine, *pc_all; /* [P]: this rank's counts; rank 0: their sum */
  size_t T, j0, j1;    /* BCa jackknife tasks; this rank's [j0, j1) */
  double *jmine, *jack;/* [(j1 - j0) nstats]; rank 0: [T nstats] */
} group_work;

static void group_free(group_work *gw) {
  free(gw->mp);
  tl_study_free(gw->s);
  free(gw->mine);
  free(gw->cnt);
  free(gw->dsp);
  free(gw->pc_mine);
  free(gw->pc_all);
  free(gw->jmine);
  free(gw->jack);
}

/* Keeps the first failure: *st becomes next when it is still TL_OK. */
static void keep(tl_status *st, tl_status next) {
  if (*st == TL_OK) *st = next;
}

/* Test hook (tests/e2e/test_correlate_fail_rank.sh) and nothing else: with TALLY_TEST_CORR_FAIL=R
 * in the environment, rank R acts as if the allocation of its block of resample values failed,
 * in every group. Unset: no effect. */
static int test_alloc_fails(int rank) {
  const char *v = getenv("TALLY_TEST_CORR_FAIL");
  return v && *v && atoi(v) == rank;
}

/* The failing rank's message for group g: "rank R, group 'KEY': what" ('?' for the key off
 * rank 0, which alone holds the keys), so that rank 0 can print the agreed one as it is. */
static tl_status group_fail(const study *s, const group *g, tl_status st, tl_err *err) {
  char what[TL_ERR_MSG_MAX];
  snprintf(what, sizeof what, "%s", err->msg[0] ? err->msg : tl_strerror(st));
  err->msg[0] = '\0';
  return tl_err_set(err, st, "rank %d, group '%s': %s", s->rank, s->rank ? "?" : g->key, what);
}

/* Step: the study's own communicator, a duplicate of comm whose MPI calls return their errors
 * (TL_SOLO stays TL_SOLO). Collective over comm, agreed. */
static tl_status study_comm(study *s, MPI_Comm comm, tl_err *err) {
  s->c = TL_SOLO;
  tl_status st = comm == TL_SOLO ? TL_OK : tl_comm_dup(comm, &s->c, err);
  st = tl_agree(st, err, comm);
  if (st != TL_OK && s->c != TL_SOLO) {
    (void)TL_MPI(NULL, MPI_Comm_free(&s->c)); /* failing already: its result adds nothing */
    s->c = TL_SOLO;
  }
  return st;
}

/* Step: rank 0 loads the table (load reports its failures), then the study's shape (metrics,
 * groups, B, --indices) and the metric names ("\n"-joined) go to every rank. Agreed after the
 * load, after the buffers, after the names. */
static tl_status study_names(study *s, tl_err *err);
static tl_status study_share(study *s, tl_inlog *log, tl_err *err) {
  tl_status st = s->rank == 0 ? load(s->o, log, &s->d) : TL_OK;
  if ((st = tl_agree(st, err, s->c)) != TL_OK) return st; /* reported by load */
  if ((st = study_names(s, err)) != TL_OK && s->rank == 0) fprintf(s->o->log, "%s: %s\n", LABEL(s->o), err->msg);
  return st;
}

/* study_share's part after the load: the shape and the names. */
static tl_status study_names(study *s, tl_err *err) {
  corr_data *d = &s->d;
  const int rank = s->rank;
  tl_status st = TL_OK;
  tl_buf nb;
  tl_buf_init(&nb);
  for (int m = 0; rank == 0 && m < d->M && st == TL_OK; m++) st = tl_buf_printf(&nb, "%s\n", d->names[m]);
  uint64_t hdr[5] = {(uint64_t)d->M, (uint64_t)d->ngroups, d->B, d->indices != NULL, nb.len};
  keep(&st, tl_bcast(hdr, 5, MPI_UINT64_T, 0, s->c, err));
  char *all = rank == 0 ? nb.data : NULL;
  if (st == TL_OK && rank) {
    d->M = (int)hdr[0];
    d->B = hdr[2];
    d->g = calloc((size_t)hdr[1] + 1, sizeof *d->g);
    d->names = calloc((size_t)d->M + 1, sizeof *d->names);
    all = calloc(hdr[4] + 1, 1);
    if (!d->g || !d->names || !all) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    else d->ngroups = (int)hdr[1]; /* corr_release walks d->g only when it is there */
  }
  s->has_indices = hdr[3] != 0;
  if ((st = tl_agree(st, err, s->c)) == TL_OK) st = tl_bcast(all, (int)hdr[4], MPI_CHAR, 0, s->c, err);
  char *p = all;
  for (int m = 0; rank && st == TL_OK && m < d->M; m++) {
    char *e = strchr(p, '\n');
    if (!(d->names[m] = tl_strndup(p, (size_t)(e - p)))) st = tl_err_set(err, TL_ENOMEM, "out of memory");
    p = e + 1;
  }
  if (rank) free(all);
  tl_buf_release(&nb);
  s->K = d->M * d->nstats;
  s->npairs = d->M * (d->M - 1) / 2;
  return tl_agree(st, err, s->c);
}

/* Step: group k's rows (n, human[n], metric[M][n], and the --indices matrix) from rank 0 to
 * every rank. Two agreements: after the sizes and the buffers, after the data. */
static tl_status group_receive(study *s, group *g, tl_err *err) {
  corr_data *d = &s->d;
  tl_status st = tl_bcast(&g->n, 1, MPI_UINT32_T, 0, s->c, err);
  if (st == TL_OK && s->rank) {
    g->human = malloc((g->n ? g->n : 1) * sizeof(double));
    g->metric = malloc((size_t)d->M * (g->n ? g->n : 1) * sizeof(double));
    if (s->has_indices) d->indices = malloc((d->B * g->n > 0 ? d->B * g->n : 1) * sizeof *d->indices);
    if (!g->human || !g->metric || (s->has_indices && !d->indices))
      st = group_fail(s, g, tl_err_set(err, TL_ENOMEM, "out of memory"), err);
  }
  if ((st = tl_agree(st, err, s->c)) != TL_OK) return st;
  st = tl_bcast(g->human, (int)g->n, MPI_DOUBLE, 0, s->c, err);
  keep(&st, tl_bcast(g->metric, (int)((size_t)d->M * g->n), MPI_DOUBLE, 0, s->c, err));
  if (s->has_indices) /* --indices: small studies only */
    keep(&st, tl_bcast(d->indices, (int)(d->B * g->n), MPI_UINT32_T, 0, s->c, err));
  return tl_agree(st, err, s->c);
}

/* Step: this rank's block of resamples of group g (and rank 0's gather buffers). Agreed; the
 * failing rank's message names it and the group (group_fail). */
static tl_status group_compute(study *s, group *g, group_work *gw, tl_err *err) {
  corr_data *d = &s->d;
  const uint64_t B = d->B, nr = (uint64_t)s->nranks;
  tl_status st = TL_OK;
  gw->mp = malloc((size_t)(d->M ? d->M : 1) * sizeof *gw->mp);
  if (!gw->mp) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  for (int m = 0; m < d->M && st == TL_OK; m++) gw->mp[m] = g->metric + (size_t)m * g->n;
  gw->in = (tl_study_in){g->n, g->human, d->M, gw->mp, (const char *const *)d->names, d->nstats,
                         {d->stats[0], d->nstats > 1 ? d->stats[1] : TL_STAT_SPEARMAN}, s->o->seed, B,
                         s->has_indices ? d->indices : NULL};
  if (st == TL_OK) st = tl_study_new(&gw->in, &gw->s, err);
  gw->r0 = B * (uint64_t)s->rank / nr;
  gw->r1 = B * (uint64_t)(s->rank + 1) / nr;
  gw->mine = test_alloc_fails(s->rank) ? NULL
             : malloc(((gw->r1 - gw->r0) ? (gw->r1 - gw->r0) : 1) * (size_t)s->K * sizeof *gw->mine);
  if (st == TL_OK && !gw->mine) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  if (st == TL_OK && s->rank == 0) {
    gw->cnt = malloc((size_t)s->nranks * sizeof *gw->cnt);
    gw->dsp = malloc((size_t)s->nranks * sizeof *gw->dsp);
    g->vals = malloc((B ? B : 1) * (size_t)s->K * sizeof *g->vals);
    if (!gw->cnt || !gw->dsp || !g->vals) st = tl_err_set(err, TL_ENOMEM, "out of memory");
  }
  int used_gpu = 0;
  double t0 = now_s();
  if (st == TL_OK) st = compute_block(&gw->in, gw->s, gw->r0, gw->r1, gw->mine, s->o->device, &used_gpu, s->o->log, err);
  s->t_res += now_s() - t0;
  s->gpu_groups += used_gpu;
  if (st != TL_OK) group_fail(s, g, st, err);
  return tl_agree(st, err, s->c);
}

/* Step: the blocks gathered to rank 0 in resample order (rank order = resample order); then the
 * permutation test and the BCa jackknife, split over ranks the same way: integer permutation
 * counts are summed later (MPI_Reduce), jackknife task values gathered in task order, so rank 0
 * summarizes identical inputs whatever the rank count. Agreed. */
static tl_status group_tests(study *s, group *g, group_work *gw, tl_err *err) {
  const corr_data *d = &s->d;
  const tl_corr_opts *o = s->o;
  const int nranks = s->nranks, K = s->K;
  for (int q = 0; s->rank == 0 && q < nranks; q++) {
    uint64_t a = d->B * (uint64_t)q / (uint64_t)nranks, b = d->B * (uint64_t)(q + 1) / (uint64_t)nranks;
    gw->cnt[q] = (int)((b - a) * (uint64_t)K);
    gw->dsp[q] = (int)(a * (uint64_t)K);
  }
  tl_status st = tl_gatherv(gw->mine, (int)((gw->r1 - gw->r0) * (uint64_t)K), MPI_DOUBLE, g->vals,
                            gw->cnt, gw->dsp, 0, s->c, err);
  double t0 = now_s();
  gw->P = s->npairs * d->nstats;
  gw->pc_mine = calloc((size_t)(gw->P ? gw->P : 1), sizeof *gw->pc_mine);
  gw->pc_all = calloc((size_t)(gw->P ? gw->P : 1), sizeof *gw->pc_all);
  tl_status pst = gw->pc_mine && gw->pc_all ? TL_OK : TL_ENOMEM;
  if (pst == TL_OK && gw->P && o->permutation) pst = tl_study_perm_counts(gw->s, gw->r0, gw->r1, gw->pc_mine);
  else for (int q = 0; pst == TL_OK && q < gw->P; q++) gw->pc_mine[q] = -1; /* not run: p_permutation is NaN */
  gw->T = o->method == TL_CI_BCA ? tl_study_jack_tasks(gw->s) : 0;
  gw->j0 = gw->T * (size_t)s->rank / (size_t)nranks;
  gw->j1 = gw->T * (size_t)(s->rank + 1) / (size_t)nranks;
  if (gw->T) {
    gw->jmine = malloc(((gw->j1 - gw->j0) ? (gw->j1 - gw->j0) : 1) * (size_t)d->nstats * sizeof *gw->jmine);
    if (s->rank == 0) gw->jack = malloc(gw->T * (size_t)d->nstats * sizeof *gw->jack);
    if (!gw->jmine || (s->rank == 0 && !gw->jack)) pst = TL_ENOMEM;
    if (pst == TL_OK) pst = tl_study_jack_values(gw->s, gw->j0, gw->j1, gw->jmine);
  }
  s->t_sum += now_s() - t0;
  if (st == TL_OK && pst != TL_OK) st = tl_err_set(err, pst, "out of memory in the tests");
  st = tl_agree(st, err, s->c);
  if (st != TL_OK && s->rank == 0) fprintf(o->log, "%s: group '%s': %s\n", LABEL(o), g->key, err->msg);
  return st;
}

/* Step: the permutation counts summed and the jackknife values gathered to rank 0, which
 * summarizes the group (g->per, g->cmp). Agreed. */
static tl_status group_summarize(study *s, group *g, group_work *gw, tl_err *err) {
  const corr_data *d = &s->d;
  const tl_corr_opts *o = s->o;
  const int nranks = s->nranks;
  tl_status st = TL_OK;
  if (gw->P) st = tl_reduce(gw->pc_mine, gw->pc_all, gw->P, MPI_INT64_T, MPI_SUM, 0, s->c, err);
  if (gw->T) {
    for (int q = 0; s->rank == 0 && q < nranks; q++) {
      size_t a = gw->T * (size_t)q / (size_t)nranks, b = gw->T * (size_t)(q + 1) / (size_t)nranks;
      gw->cnt[q] = (int)((b - a) * (size_t)d->nstats);
      gw->dsp[q] = (int)(a * (size_t)d->nstats);
    }
    keep(&st, tl_gatherv(gw->jmine, (int)((gw->j1 - gw->j0) * (size_t)d->nstats), MPI_DOUBLE, gw->jack,
                         gw->cnt, gw->dsp, 0, s->c, err));
  }
  if (st == TL_OK && s->rank == 0) {
    g->per = calloc((size_t)s->K, sizeof *g->per);
    g->cmp = calloc((size_t)(d->nstats * s->npairs + 1), sizeof *g->cmp);
    if (!g->per || !g->cmp || !g->vals ||
        tl_study_summarize_with(gw->s, g->vals, o->ci, (tl_ci_method)o->method, gw->jack,
                                gw->P ? gw->pc_all : NULL, g->per, g->cmp))
      st = tl_err_set(err, TL_ENOMEM, "summarizing failed (out of memory?)");
  }
  st = tl_agree(st, err, s->c);
  if (st != TL_OK && s->rank == 0) fprintf(o->log, "%s: group '%s': %s\n", LABEL(o), g->key, err->msg);
  return st;
}

/* One group, start to end (the steps above); its temporaries freed, rank 0 keeps its results. */
static tl_status study_group(study *s, int k, tl_err *err) {
  group *g = &s->d.g[k];
  group_work gw;
  memset(&gw, 0, sizeof gw);
  tl_status st = group_receive(s, g, err);
  if (st == TL_OK) st = group_compute(s, g, &gw, err);
  if (st != TL_OK && s->rank == 0) fprintf(s->o->log, "%s: %s\n", LABEL(s->o), err->msg);
  if (st == TL_OK) st = group_tests(s, g, &gw, err);
  if (st == TL_OK) st = group_summarize(s, g, &gw, err);
  group_free(&gw);
  if (s->has_indices && s->rank) {
    free(s->d.indices);
    s->d.indices = NULL;
  }
  return st;
}

/* Step: how the study ran (CUDA ranks, the slowest rank's seconds) reduced to rank 0, which
 * prints the study (table or JSON) and its log lines. Agreed. */
static tl_status study_report(study *s, const tl_inlog *log, tl_err *err) {
  const tl_corr_opts *o = s->o;
  const corr_data *d = &s->d;
  int gpu_ranks = 0, my_gpu = s->gpu_groups > 0;
  double t_max = 0, t_sum_max = 0;
  tl_status st = tl_reduce(&my_gpu, &gpu_ranks, 1, MPI_INT, MPI_SUM, 0, s->c, err);
  keep(&st, tl_reduce(&s->t_res, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, s->c, err));
  keep(&st, tl_reduce(&s->t_sum, &t_sum_max, 1, MPI_DOUBLE, MPI_MAX, 0, s->c, err));
  if ((st = tl_agree(st, err, s->c)) != TL_OK) {
    if (s->rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err->msg);
    return st;
  }
  if (s->rank == 0) {
    char devices[128];
    snprintf(devices, sizeof devices, "%d rank(s), %d using CUDA", s->nranks, gpu_ranks);
    if (o->json) print_json(o, d);
    else print_table(o, d);
    if (!o->quiet)
      fprintf(o->log, "%s: %d group(s), %llu resamples x %d values in %.3f s; "
              "%s%s in %.3f s; on %s\n", LABEL(o), d->ngroups, (unsigned long long)d->B, s->K, t_max,
              o->permutation ? "permutation test" : "no permutation test",
              o->method == TL_CI_BCA ? ", BCa jackknife" : "", t_sum_max, devices);
    if (log->total) fprintf(o->log, "%s: %ld bad input cell(s) reported; those rows were excluded\n", LABEL(o), log->total);
  }
  return TL_OK;
}

/* The study (tl_corr_study) as a status, the same on every rank; every failure is reported
 * once, on rank 0's log. */
static tl_status corr_study(const tl_corr_opts *o, MPI_Comm comm, tl_writer *w, const char *prefix) {
  study s;
  memset(&s, 0, sizeof s);
  s.o = o;
  s.rank = tl_comm_rank(comm);
  s.nranks = tl_comm_size(comm);
  for (int q = 0; q < TL_STAT__N; q++)
    if (o->stats_mask & (1 << q)) s.d.stats[s.d.nstats++] = (tl_stat)q;
  tl_inlog log;
  tl_inlog_init(&log, o->log, o->strict_input);
  tl_err err = {{0}};
  tl_status st = study_comm(&s, comm, &err);
  if (st != TL_OK && s.rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
  if (st == TL_OK) st = study_share(&s, &log, &err);
  for (int k = 0; st == TL_OK && k < s.d.ngroups; k++) st = study_group(&s, k, &err);
  if (st == TL_OK) st = study_report(&s, &log, &err);
  if (st == TL_OK && w) {
    st = write_tables(o, &s.d, w, prefix, s.rank, s.c, &err);
    if (st != TL_OK && s.rank == 0) fprintf(o->log, "tally: %s\n", err.msg);
  }
  if (s.c != TL_SOLO && TL_MPI(&err, MPI_Comm_free(&s.c)) != TL_OK && st == TL_OK) {
    st = TL_EMPI; /* this rank's only: nothing collective follows in the study */
    fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
  }
  corr_release(&s.d);
  tl_inlog_release(&log);
  return st;
}

int tl_corr_study(const tl_corr_opts *o, MPI_Comm comm, tl_writer *w, const char *prefix) {
  return tl_exit_code(corr_study(o, comm, w, prefix));
}

/* Rank 0, before anything is opened for writing: the output is no input and has a writable
 * place, standard output is no input, and the output lock is held to the end (lock). Reports
 * its failure ("nothing was run"). */
static tl_status corr_checks(const tl_corr_opts *o, tl_out_lock *lock, tl_err *err) {
  tl_path_role in[2] = {{o->input, "the input table"}, {o->indices, "the index file"}};
  tl_status st = tl_stdout_check_inputs(in, 2, err);
  if (!st && o->out) st = tl_out_check_place(o->out, err);
  if (!st && o->out) st = tl_out_check_inputs(o->out, "the output", in, 2, err);
  if (!st && o->out) st = tl_out_check_replace(o->out, o->force, err);
  if (!st && o->out) st = tl_out_lock_take(lock, o->out, o->break_lock, o->log, err);
  if (st) fprintf(o->log, "%s: %s; nothing was run\n", LABEL(o), err->msg);
  return st;
}

/* Collective. The output file of `tally correlate` opened with its root attributes; *w NULL
 * when it failed (rank 0 reports it). The writer agrees on its failures. */
static tl_status corr_open(const tl_corr_opts *o, MPI_Comm comm, tl_writer **w, tl_err *err) {
  int rank = tl_comm_rank(comm), nranks = tl_comm_size(comm);
  tl_status st = TL_OK;
  *w = tl_h5_parallel_open(o->out, comm, err); /* collective */
  if (!*w) st = TL_EHDF5;
  else if ((st = (*w)->vt->attr_str(*w, "tally_version", TALLY_VERSION, err)) == TL_OK &&
           (st = (*w)->vt->attr_str(*w, "command", "correlate", err)) == TL_OK)
    st = (*w)->vt->attr_i64(*w, "n_ranks", nranks, err);
  if (st != TL_OK && rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err->msg);
  return st;
}

int tl_correlate_run(const tl_corr_opts *o, MPI_Comm comm) {
  int rank = tl_comm_rank(comm);
  tl_writer *w = NULL;
  tl_err err = {{0}};
  tl_out_lock lock = {NULL, -1, 0};
  tl_status st = rank == 0 ? corr_checks(o, &lock, &err) : TL_OK;
  if ((st = tl_agree(st, &err, comm)) != TL_OK) return tl_exit_code(st);
  if (o->out) st = corr_open(o, comm, &w, &err);
  if (st == TL_OK) st = corr_study(o, comm, w, "/stats/correlate");
  if (w) {
    if (st == TL_OK) {
      if ((st = w->vt->close(w, &err)) != TL_OK && rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
    } else {
      w->vt->abort(w);
    }
  }
  if (rank == 0 && st == TL_OK && (fflush(o->outf) != 0 || ferror(o->outf))) {
    fprintf(o->log, "%s: cannot write the results to standard output: %s\n", LABEL(o), strerror(errno));
    st = TL_EIO;
  }
  tl_out_lock_release(&lock);
  err.msg[0] = '\0';
  return tl_exit_code(tl_agree(st, &err, comm));
}
