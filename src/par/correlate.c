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

/* Splits "a,b,c" into a malloc'd array of malloc'd strings. */
static char **split_list(const char *s, int *n) {
  *n = 0;
  if (!s || !*s) return NULL;
  int cap = 1;
  for (const char *c = s; *c; c++) cap += *c == ',';
  char **out = calloc((size_t)cap, sizeof *out);
  const char *p = s;
  for (;;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len) out[(*n)++] = tl_strndup(p, len);
    if (!e) break;
    p = e + 1;
  }
  return out;
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
        m = realloc(m, cap * sizeof *m);
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

/* Rank 0: reads the table and builds the groups. */
static int load(const tl_corr_opts *o, tl_inlog *log, corr_data *d) {
  tl_err err = {{0}};
  tl_tabin t;
  tl_status st = TL_OK;
  if (o->table) t = *o->table; /* borrowed: not released below */
  else st = tl_tabin_read(o->input, 0, log, &t, &err);
  if (st) {
    if (err.msg[0]) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
    else if (st == TL_EINPUT && log->strict) /* the problem itself is already on stderr */
      fprintf(o->log, "%s: stopped at the first input problem (--strict-input)\n", LABEL(o));
    else fprintf(o->log, "%s: cannot use the table '%s': %s\n", LABEL(o), o->input, tl_strerror(st));
    /* 3 is --strict-input's code; a table that cannot be used at all is a failure (1) */
    return st == TL_EINPUT && log->strict ? TL_EXIT_BAD_INPUT : TL_EXIT_FAIL;
  }
  int rc = TL_EXIT_OK, ngb = 0;
  char **gb = split_list(o->group_by, &ngb);
  d->names = split_list(o->metrics, &d->M);
  int hcol = tl_tabin_col(&t, o->human);
  int *mcol = calloc((size_t)d->M + 1, sizeof *mcol), *gcol = calloc((size_t)ngb + 1, sizeof *gcol);
  double *num = malloc((size_t)(d->M + 1) * t.nrows * sizeof *num);
  unsigned char *ok = malloc((size_t)(d->M + 1) * t.nrows), *rowok = malloc(t.nrows);
  tl_strmap gi;
  tl_strmap_init(&gi);
  int missing = hcol < 0;
  if (hcol < 0) fprintf(o->log, "%s: %s has no column '%s' (the --human score)\n", LABEL(o), o->input, o->human);
  for (int m = 0; m < d->M; m++) {
    mcol[m] = tl_tabin_col(&t, d->names[m]);
    if (mcol[m] < 0) { fprintf(o->log, "%s: %s has no column '%s' (in --metrics)\n", LABEL(o), o->input, d->names[m]); missing = 1; }
  }
  for (int k = 0; k < ngb; k++) {
    gcol[k] = tl_tabin_col(&t, gb[k]);
    if (gcol[k] < 0) { fprintf(o->log, "%s: %s has no column '%s' (in --group-by)\n", LABEL(o), o->input, gb[k]); missing = 1; }
  }
  if (missing) {
    fprintf(o->log, "%s: columns present: ", LABEL(o));
    for (int c = 0; c < t.ncols; c++) fprintf(o->log, "%s%s", c ? ", " : "", t.colnames[c]);
    fprintf(o->log, "\n");
    rc = TL_EXIT_USAGE;
    goto done;
  }
  /* numeric columns; a row with any bad cell is reported (per cell) and excluded */
  memset(rowok, 1, t.nrows);
  for (int c = 0; c <= d->M; c++) {
    if (tl_tabin_numeric(&t, c == 0 ? hcol : mcol[c - 1], log, num + (size_t)c * t.nrows,
                         ok + (size_t)c * t.nrows)) {
      rc = TL_EXIT_BAD_INPUT;
      goto done;
    }
    for (size_t r = 0; r < t.nrows; r++) rowok[r] &= ok[(size_t)c * t.nrows + r];
  }
  /* group rows by key (one pass: each row's group index); rows keep file order inside a group */
  tl_buf key;
  tl_buf_init(&key);
  size_t *gcount = NULL;
  uint32_t *rowgroup = malloc((t.nrows ? t.nrows : 1) * sizeof *rowgroup);
  int gcap = 0;
  for (size_t r = 0; r < t.nrows; r++) {
    tl_buf_reset(&key);
    if (!ngb) tl_buf_puts(&key, "all");
    for (int k = 0; k < ngb; k++) tl_buf_printf(&key, "%s%s=%s", k ? "," : "", gb[k], t.cells[r][gcol[k]]);
    size_t gix;
    bool ins;
    tl_strmap_put(&gi, key.data, (size_t)d->ngroups, &ins, &gix);
    if (ins) {
      if (d->ngroups == gcap) {
        gcap = gcap ? gcap * 2 : 8;
        d->g = realloc(d->g, (size_t)gcap * sizeof *d->g);
        gcount = realloc(gcount, (size_t)gcap * sizeof *gcount);
      }
      memset(&d->g[d->ngroups], 0, sizeof *d->g);
      d->g[d->ngroups].key = tl_strdup(key.data);
      gcount[d->ngroups] = 0;
      gix = (size_t)d->ngroups++;
    }
    rowgroup[r] = (uint32_t)gix;
    if (rowok[r]) gcount[gix]++;
    else d->g[gix].excluded++;
  }
  tl_buf_release(&key);
  for (int k = 0; k < d->ngroups; k++) {
    group *g = &d->g[k];
    g->human = malloc((gcount[k] ? gcount[k] : 1) * sizeof *g->human);
    g->metric = malloc((size_t)d->M * (gcount[k] ? gcount[k] : 1) * sizeof *g->metric);
  }
  for (size_t r = 0; r < t.nrows; r++) {
    if (!rowok[r]) continue;
    group *g = &d->g[rowgroup[r]];
    size_t cap = gcount[rowgroup[r]];
    g->human[g->n] = num[r];
    for (int m = 0; m < d->M; m++) g->metric[(size_t)m * cap + g->n] = num[(size_t)(m + 1) * t.nrows + r];
    g->n++;
  }
  /* a group whose rows were all excluded is reported and skipped, not fatal for the others */
  for (int k = 0; k < d->ngroups;) {
    if (d->g[k].n > 0) { k++; continue; }
    tl_inlog_report(log, TL_IN_BAD_FIELD, o->input, 0, "group '%s' has no usable row (%lld excluded); skipped",
                    d->g[k].key, (long long)d->g[k].excluded);
    free(d->g[k].key); free(d->g[k].human); free(d->g[k].metric);
    memmove(&d->g[k], &d->g[k + 1], (size_t)(d->ngroups - k - 1) * sizeof *d->g);
    d->ngroups--;
  }
  if (d->ngroups == 0) {
    fprintf(o->log, "%s: %s: no group has a usable row\n", LABEL(o), o->input);
    rc = TL_EXIT_FAIL;
  }
  for (int k = 0; k < d->ngroups; k++) {
    if (d->g[k].n > TL_BOOT_MAX_N) {
      fprintf(o->log, "%s: group '%s' has %u rows, more than %d\n", LABEL(o), d->g[k].key, d->g[k].n, TL_BOOT_MAX_N);
      rc = TL_EXIT_USAGE;
    }
  }
  free(rowgroup);
  free(gcount);
  qsort(d->g, (size_t)d->ngroups, sizeof *d->g, key_cmp);
  if (o->indices) {
    if (d->ngroups != 1) {
      fprintf(o->log, "%s: --indices needs a single group (the matrix is for one n)\n", LABEL(o));
      rc = TL_EXIT_USAGE;
    } else if ((st = read_indices(o->indices, d->g[0].n, &d->indices, &d->B, &err))) {
      fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
      rc = st == TL_EIO ? TL_EXIT_FAIL : TL_EXIT_USAGE;
    }
    d->idx_n = d->g[0].n;
  } else {
    d->B = o->resamples;
  }
  {
    /* MPI counts are int: every resample block and the index matrix must fit */
    uint64_t K = (uint64_t)d->M * (uint64_t)(d->nstats ? d->nstats : 2);
    if (rc == TL_EXIT_OK && d->B * K > (uint64_t)INT_MAX) {
      fprintf(o->log, "%s: %llu resamples x %llu values is more than this version gathers (2^31 - 1); "
                      "use fewer resamples or metrics per study\n", LABEL(o), (unsigned long long)d->B,
              (unsigned long long)K);
      rc = TL_EXIT_USAGE;
    }
    if (rc == TL_EXIT_OK && d->indices && d->B * (uint64_t)d->idx_n > (uint64_t)INT_MAX) {
      fprintf(o->log, "%s: the --indices matrix has more than 2^31 - 1 entries\n", LABEL(o));
      rc = TL_EXIT_USAGE;
    }
  }
done:
  tl_strmap_release(&gi);
  for (int k = 0; k < ngb; k++) free(gb[k]);
  free(gb);
  free(mcol);
  free(gcol);
  free(num);
  free(ok);
  free(rowok);
  if (!o->table) tl_tabin_release(&t);
  return rc;
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

#define ADDCOL(t, n, ty, doc) if (tl_table_add_col((t), (n), (ty), (doc)) < 0) goto oom
/* Rank 0: writes the study's tables under `prefix` (e.g. "/stats/correlate"): summary, compare,
 * resamples (every resample value) and params (one row: how the study was run). Nothing here
 * depends on the rank count or the device (those go to the log), so the datasets are
 * byte-identical however the study ran. */
static int write_tables(const tl_corr_opts *o, const corr_data *d, tl_writer *w, const char *prefix,
                        int rank) {
  int K = d->M * d->nstats, npairs = d->M * (d->M - 1) / 2;
  tl_err err = {{0}};
  char path[512];
  snprintf(path, sizeof path, "%s/summary", prefix);
  tl_table *sum = tl_table_new(path);
  snprintf(path, sizeof path, "%s/compare", prefix);
  tl_table *cmp = tl_table_new(path);
  snprintf(path, sizeof path, "%s/resamples", prefix);
  tl_table *res = tl_table_new(path);
  snprintf(path, sizeof path, "%s/params", prefix);
  tl_table *par = tl_table_new(path);
  if (!sum || !cmp || !res || !par) goto oom;
  if (rank != 0) goto write; /* the tables come from rank 0; the others take part in the writes */
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
    for (int q = 0; q < K; q++) {
      const tl_boot_summary *p = &g->per[q];
      size_t r = tl_table_add_row(sum);
      if (r == (size_t)-1) goto oom;
      if (tl_table_set_str(sum, r, 0, g->key) || tl_table_set_str(sum, r, 1, d->names[q / d->nstats]) ||
          tl_table_set_str(sum, r, 2, tl_stat_name(d->stats[q % d->nstats])))
        goto oom;
      tl_table_set_i64(sum, r, 3, g->n);
      double v[] = {p->estimate, p->boot_mean, p->se, p->ci_lo, p->ci_hi};
      for (int i = 0; i < 5; i++) tl_table_set_f64(sum, r, 4 + i, v[i]);
      tl_table_set_i64(sum, r, 9, p->n_defined);
      tl_table_set_i64(sum, r, 10, p->n_undefined);
    }
    for (int q = 0; q < d->nstats * npairs; q++) {
      const tl_boot_compare *c = &g->cmp[q];
      size_t r = tl_table_add_row(cmp);
      if (r == (size_t)-1) goto oom;
      if (tl_table_set_str(cmp, r, 0, g->key) || tl_table_set_str(cmp, r, 1, tl_stat_name(d->stats[q / npairs])) ||
          tl_table_set_str(cmp, r, 2, d->names[c->a]) || tl_table_set_str(cmp, r, 3, d->names[c->b]))
        goto oom;
      double v[] = {c->diff.estimate, c->diff.ci_lo, c->diff.ci_hi, c->p_boot, c->p_williams,
                    c->p_permutation, c->p_ttest_compat};
      for (int i = 0; i < 7; i++) tl_table_set_f64(cmp, r, 4 + i, v[i]);
    }
    for (uint64_t b = 0; b < d->B; b++) {
      size_t r = tl_table_add_row(res);
      if (r == (size_t)-1 || tl_table_set_str(res, r, 0, g->key)) goto oom;
      tl_table_set_i64(res, r, 1, (int64_t)b);
      for (int q = 0; q < K; q++) tl_table_set_f64(res, r, 2 + q, g->vals[b * (uint64_t)K + (uint64_t)q]);
    }
  }
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
  {
    size_t r = tl_table_add_row(par);
    if (r == (size_t)-1) goto oom;
    if (tl_table_set_str(par, r, 0, o->input) || tl_table_set_str(par, r, 1, o->human) ||
        tl_table_set_str(par, r, 2, o->metrics) || tl_table_set_str(par, r, 3, o->group_by ? o->group_by : "") ||
        tl_table_set_str(par, r, 7, o->method == TL_CI_BCA ? "bca" : "percentile") ||
        tl_table_set_str(par, r, 9, d->indices ? "explicit index matrix (--indices)"
                                               : "Philox4x32-10 keyed by (seed, resample)"))
      goto oom;
    tl_table_set_i64(par, r, 4, (int64_t)d->B);
    tl_table_set_i64(par, r, 5, (int64_t)o->seed);
    tl_table_set_f64(par, r, 6, o->ci);
    tl_table_set_i64(par, r, 8, o->permutation);
  }
write:
  if (w->vt->write_table(w, rank ? NULL : sum, &err) || w->vt->write_table(w, rank ? NULL : cmp, &err) ||
      w->vt->write_table(w, rank ? NULL : res, &err) || w->vt->write_table(w, rank ? NULL : par, &err))
    goto fail;
  tl_table_free(sum); tl_table_free(cmp); tl_table_free(res); tl_table_free(par);
  return TL_EXIT_OK;
oom:
  snprintf(err.msg, sizeof err.msg, "out of memory building the output tables");
  {
    /* take part in the first collective write, as the other ranks do, with no table: the
     * writer agrees on the failure, so no rank is left waiting */
    tl_err e2;
    w->vt->write_table(w, NULL, &e2);
  }
fail:
  fprintf(o->log, "tally: %s\n", err.msg);
  tl_table_free(sum); tl_table_free(cmp); tl_table_free(res); tl_table_free(par);
  return TL_EXIT_FAIL;
}

int tl_corr_study(const tl_corr_opts *o, MPI_Comm comm, tl_writer *w, const char *prefix) {
  int rank = tl_comm_rank(comm), nranks = tl_comm_size(comm);
  corr_data d;
  memset(&d, 0, sizeof d);
  for (int s = 0; s < TL_STAT__N; s++)
    if (o->stats_mask & (1 << s)) d.stats[d.nstats++] = (tl_stat)s;
  tl_inlog log;
  tl_inlog_init(&log, o->log, o->strict_input);
  int rc = TL_EXIT_OK;
  if (rank == 0) rc = load(o, &log, &d);
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc) {
    corr_release(&d);
    tl_inlog_release(&log);
    return rc;
  }
  /* shape of the study, then each group's columns (collective) */
  uint64_t hdr[4] = {(uint64_t)d.M, (uint64_t)d.ngroups, d.B, d.indices != NULL};
  tl_bcast(hdr, 4, MPI_UINT64_T, 0, comm);
  if (rank) {
    d.M = (int)hdr[0];
    d.ngroups = (int)hdr[1];
    d.B = hdr[2];
    d.g = calloc((size_t)d.ngroups, sizeof *d.g);
    d.names = calloc((size_t)d.M, sizeof *d.names);
  }
  { /* metric names: one "\n"-joined string */
    tl_buf nb;
    tl_buf_init(&nb);
    for (int m = 0; rank == 0 && m < d.M; m++) tl_buf_printf(&nb, "%s\n", d.names[m]);
    uint64_t len = nb.len;
    tl_bcast(&len, 1, MPI_UINT64_T, 0, comm);
    char *all = rank == 0 ? nb.data : calloc(len + 1, 1);
    tl_bcast(all, (int)len, MPI_CHAR, 0, comm);
    if (rank) {
      char *p = all;
      for (int m = 0; m < d.M; m++) {
        char *e = strchr(p, '\n');
        d.names[m] = tl_strndup(p, (size_t)(e - p));
        p = e + 1;
      }
      free(all);
    }
    tl_buf_release(&nb);
  }
  int K = d.M * d.nstats, npairs = d.M * (d.M - 1) / 2;
  double t_res = 0, t_sum = 0, t0;
  int gpu_groups = 0;
  tl_err err = {{0}};
  for (int k = 0; k < d.ngroups && rc == TL_EXIT_OK; k++) {
    group *g = &d.g[k];
    tl_bcast(&g->n, 1, MPI_UINT32_T, 0, comm);
    if (rank) {
      g->human = malloc((g->n ? g->n : 1) * sizeof(double));
      g->metric = malloc((size_t)d.M * (g->n ? g->n : 1) * sizeof(double));
    }
    tl_bcast(g->human, (int)g->n, MPI_DOUBLE, 0, comm);
    tl_bcast(g->metric, (int)((size_t)d.M * g->n), MPI_DOUBLE, 0, comm);
    if (hdr[3]) {
      if (rank) d.indices = malloc(d.B * g->n * sizeof *d.indices);
      tl_bcast(d.indices, (int)(d.B * g->n), MPI_UINT32_T, 0, comm); /* --indices: small studies only */
    }
    const double **mp = malloc((size_t)d.M * sizeof *mp);
    for (int m = 0; m < d.M; m++) mp[m] = g->metric + (size_t)m * g->n;
    tl_study_in in = {g->n, g->human, d.M, mp, (const char *const *)d.names, d.nstats,
                      {d.stats[0], d.nstats > 1 ? d.stats[1] : TL_STAT_SPEARMAN}, o->seed, d.B,
                      hdr[3] ? d.indices : NULL};
    tl_study *s = NULL;
    tl_status st = tl_study_new(&in, &s, &err);
    uint64_t r0 = d.B * (uint64_t)rank / (uint64_t)nranks, r1 = d.B * (uint64_t)(rank + 1) / (uint64_t)nranks;
    double *mine = malloc(((r1 - r0) ? (r1 - r0) : 1) * (size_t)K * sizeof *mine);
    int used_gpu = 0;
    t0 = now_s();
    if (!st) st = compute_block(&in, s, r0, r1, mine, o->device, &used_gpu, o->log, &err);
    t_res += now_s() - t0;
    gpu_groups += used_gpu;
    int bad = st != TL_OK, anybad = 0;
    tl_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
    if (anybad) {
      if (bad) fprintf(o->log, "%s: rank %d, group '%s': %s\n", LABEL(o), rank, rank ? "?" : g->key,
                       err.msg[0] ? err.msg : tl_strerror(st));
      rc = TL_EXIT_FAIL;
    } else {
      /* gather the blocks in resample order (rank order = resample order) */
      int *cnt = NULL, *dsp = NULL;
      if (rank == 0) {
        cnt = malloc((size_t)nranks * sizeof *cnt);
        dsp = malloc((size_t)nranks * sizeof *dsp);
        for (int q = 0; q < nranks; q++) {
          uint64_t a = d.B * (uint64_t)q / (uint64_t)nranks, b = d.B * (uint64_t)(q + 1) / (uint64_t)nranks;
          cnt[q] = (int)((b - a) * (uint64_t)K);
          dsp[q] = (int)(a * (uint64_t)K);
        }
        g->vals = malloc((d.B ? d.B : 1) * (size_t)K * sizeof *g->vals);
      }
      tl_gatherv(mine, (int)((r1 - r0) * (uint64_t)K), MPI_DOUBLE, g->vals, cnt, dsp, 0, comm);
      /* The permutation test and the BCa jackknife are split over ranks the same way: integer
       * permutation counts are summed (MPI_Reduce), jackknife task values gathered in task
       * order, so rank 0 summarizes identical inputs whatever the rank count. */
      t0 = now_s();
      int P = npairs * d.nstats;
      int64_t *pc_mine = calloc((size_t)(P ? P : 1), sizeof *pc_mine);
      int64_t *pc_all = calloc((size_t)(P ? P : 1), sizeof *pc_all);
      tl_status pst = TL_OK;
      if (P && o->permutation) pst = tl_study_perm_counts(s, r0, r1, pc_mine);
      else for (int q = 0; q < P; q++) pc_mine[q] = -1; /* not run: p_permutation is NaN */
      double *jack = NULL, *jmine = NULL;
      size_t T = o->method == TL_CI_BCA ? tl_study_jack_tasks(s) : 0;
      size_t j0 = T * (size_t)rank / (size_t)nranks, j1 = T * (size_t)(rank + 1) / (size_t)nranks;
      if (T) {
        jmine = malloc(((j1 - j0) ? (j1 - j0) : 1) * (size_t)d.nstats * sizeof *jmine);
        if (pst == TL_OK) pst = tl_study_jack_values(s, j0, j1, jmine);
      }
      t_sum += now_s() - t0;
      bad = pst != TL_OK;
      tl_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, comm);
      if (anybad) {
        if (rank == 0) fprintf(o->log, "%s: group '%s': out of memory in the tests\n", LABEL(o), g->key);
        rc = TL_EXIT_FAIL;
      } else {
        if (P) tl_reduce(pc_mine, pc_all, P, MPI_INT64_T, MPI_SUM, 0, comm);
        if (T) {
          if (rank == 0) {
            for (int q = 0; q < nranks; q++) {
              size_t a = T * (size_t)q / (size_t)nranks, b = T * (size_t)(q + 1) / (size_t)nranks;
              cnt[q] = (int)((b - a) * (size_t)d.nstats);
              dsp[q] = (int)(a * (size_t)d.nstats);
            }
            jack = malloc(T * (size_t)d.nstats * sizeof *jack);
          }
          tl_gatherv(jmine, (int)((j1 - j0) * (size_t)d.nstats), MPI_DOUBLE, jack, cnt, dsp, 0, comm);
        }
        if (rank == 0) {
          g->per = calloc((size_t)K, sizeof *g->per);
          g->cmp = calloc((size_t)(d.nstats * npairs + 1), sizeof *g->cmp);
          if (!g->per || !g->cmp || !g->vals ||
              tl_study_summarize_with(s, g->vals, o->ci, (tl_ci_method)o->method, jack,
                                      P ? pc_all : NULL, g->per, g->cmp)) {
            fprintf(o->log, "%s: group '%s': summarizing failed (out of memory?)\n", LABEL(o), g->key);
            rc = TL_EXIT_FAIL;
          }
        }
        tl_bcast(&rc, 1, MPI_INT, 0, comm); /* every rank leaves the group loop together */
      }
      free(pc_mine);
      free(pc_all);
      free(jmine);
      free(jack);
      free(cnt);
      free(dsp);
    }
    free(mine);
    free(mp);
    tl_study_free(s);
    if (hdr[3] && rank) { free(d.indices); d.indices = NULL; }
  }
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  int gpu_ranks = 0, my_gpu = gpu_groups > 0;
  tl_reduce(&my_gpu, &gpu_ranks, 1, MPI_INT, MPI_SUM, 0, comm);
  double t_max = 0, t_sum_max = 0;
  tl_reduce(&t_res, &t_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  tl_reduce(&t_sum, &t_sum_max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  if (rank == 0 && rc == TL_EXIT_OK) {
    char devices[128];
    snprintf(devices, sizeof devices, "%d rank(s), %d using CUDA", nranks, gpu_ranks);
    if (o->json) print_json(o, &d);
    else print_table(o, &d);
    if (!o->quiet)
      fprintf(o->log, "%s: %d group(s), %llu resamples x %d values in %.3f s; "
              "%s%s in %.3f s; on %s\n", LABEL(o), d.ngroups, (unsigned long long)d.B, K, t_max,
              o->permutation ? "permutation test" : "no permutation test",
              o->method == TL_CI_BCA ? ", BCa jackknife" : "", t_sum_max, devices);
    if (log.total) fprintf(o->log, "%s: %ld bad input cell(s) reported; those rows were excluded\n", LABEL(o), log.total);
  }
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc == TL_EXIT_OK && w) rc = write_tables(o, &d, w, prefix, rank); /* collective */
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  corr_release(&d);
  tl_inlog_release(&log);
  return rc;
}

int tl_correlate_run(const tl_corr_opts *o, MPI_Comm comm) {
  int rank = tl_comm_rank(comm), nranks = tl_comm_size(comm);
  tl_writer *w = NULL;
  int rc = TL_EXIT_OK;
  tl_err err = {{0}};
  /* Rank 0, before anything is opened for writing: the output is no input and has a writable
   * place, standard output is no input, and the output lock is held to the end. */
  tl_out_lock lock = {NULL, -1, 0};
  if (rank == 0) {
    tl_path_role in[2] = {{o->input, "the input table"}, {o->indices, "the index file"}};
    tl_status st = tl_stdout_check_inputs(in, 2, &err);
    if (!st && o->out) st = tl_out_check_place(o->out, &err);
    if (!st && o->out) st = tl_out_check_inputs(o->out, "the output", in, 2, &err);
    if (!st && o->out) st = tl_out_check_replace(o->out, o->force, &err);
    if (!st && o->out) st = tl_out_lock_take(&lock, o->out, o->break_lock, o->log, &err);
    if (st) {
      fprintf(o->log, "%s: %s; nothing was run\n", LABEL(o), err.msg);
      rc = st == TL_EUSAGE ? TL_EXIT_USAGE : TL_EXIT_FAIL;
    }
  }
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  if (rc) return rc;
  if (o->out) {
    w = tl_h5_parallel_open(o->out, comm, &err); /* collective */
    if (!w) {
      if (rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
      rc = TL_EXIT_FAIL;
    } else if (w->vt->attr_str(w, "tally_version", TALLY_VERSION, &err) ||
               w->vt->attr_str(w, "command", "correlate", &err) || w->vt->attr_i64(w, "n_ranks", nranks, &err)) {
      if (rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
      rc = TL_EXIT_FAIL;
    }
  }
  if (rc == TL_EXIT_OK) rc = tl_corr_study(o, comm, w, "/stats/correlate");
  if (w) {
    if (rc == TL_EXIT_OK) {
      if (w->vt->close(w, &err)) {
        if (rank == 0) fprintf(o->log, "%s: %s\n", LABEL(o), err.msg);
        rc = TL_EXIT_FAIL;
      }
    } else {
      w->vt->abort(w);
    }
  }
  if (rank == 0 && rc == TL_EXIT_OK && (fflush(o->outf) != 0 || ferror(o->outf))) {
    fprintf(o->log, "%s: cannot write the results to standard output: %s\n", LABEL(o), strerror(errno));
    rc = TL_EXIT_FAIL;
  }
  tl_out_lock_release(&lock);
  tl_bcast(&rc, 1, MPI_INT, 0, comm);
  return rc;
}
