/* cmd_import.c - `tally import FILE`: what a reader of another harness's saved outputs makes of a
 * file (tally/import.h): tally's own answer lines (each with "harness": the harness's verdict),
 * and on request the judgments and the items. Says on stderr what it read. --list: the formats. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "outsafe.h"
#include "tally/import.h"
#include "tally/inlog.h"
#include "usage.h"

enum { O_FORMAT = 1, O_MODEL, O_OUTPUT, O_JUDG, O_ITEMS, O_LIST, O_STRICT, O_HELP, O_PREFIX };
const struct option tl_opts_import[] = {{"format", required_argument, NULL, O_FORMAT},
                                        {"model", required_argument, NULL, O_MODEL},
                                        {"id-prefix", required_argument, NULL, O_PREFIX},
                                        {"output", required_argument, NULL, O_OUTPUT},
                                        {"out", required_argument, NULL, O_OUTPUT},
                                        {"judgments", required_argument, NULL, O_JUDG},
                                        {"items", required_argument, NULL, O_ITEMS},
                                        {"list", no_argument, NULL, O_LIST},
                                        {"strict-input", no_argument, NULL, O_STRICT},
                                        {"help", no_argument, NULL, O_HELP},
                                        {NULL, 0, NULL, 0}};

static const char *const CMD = "tally import";

static int list_formats(void) {
  int n = 0;
  const tl_importer *const *all = tl_importers(&n);
  for (int i = 0; i < n; i++) printf("%-12s %s\n", all[i]->name, all[i]->describe);
  return fflush(stdout) == 0 && !ferror(stdout) ? TL_EXIT_OK : TL_EXIT_FAIL;
}

/* The command line, read. */
typedef struct {
  const char *fmt, *model, *outp, *jp, *ip, *id_prefix, *path;
  int strict, list;
} import_opts;

/* Reads argv into x. Returns -1 to go on, or an exit code (its message printed). */
static int import_options(int argc, char **argv, import_opts *x) {
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":ho:", tl_opts_import, NULL)) != -1) {
    const char *name = c == O_MODEL ? "--model" : c == O_JUDG ? "--judgments" : c == O_ITEMS ? "--items" : "--output";
    if ((c == O_MODEL || c == O_JUDG || c == O_ITEMS || c == O_OUTPUT || c == 'o') && tl_opt_nonempty(CMD, name, optarg))
      return TL_EXIT_USAGE;
    switch (c) {
    case O_FORMAT: x->fmt = optarg; break;
    case O_MODEL: x->model = optarg; break;
    case O_PREFIX: x->id_prefix = optarg; break;
    case 'o':
    case O_OUTPUT: x->outp = optarg; break;
    case O_JUDG: x->jp = optarg; break;
    case O_ITEMS: x->ip = optarg; break;
    case O_LIST: x->list = 1; break;
    case O_STRICT: x->strict = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_import);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_import);
    }
  }
  if (x->list && optind < argc) {
    fprintf(stderr, "%s: --list takes no file; unexpected argument '%s'\n", CMD, argv[optind]);
    return tl_usage_error(tl_usage_import);
  }
  if (!x->list && optind != argc - 1) {
    if (optind >= argc) fprintf(stderr, "%s: the file to read is missing\n", CMD);
    else fprintf(stderr, "%s: one file, please; unexpected argument '%s'\n", CMD, argv[optind + 1]);
    return tl_usage_error(tl_usage_import);
  }
  x->path = x->list ? NULL : argv[optind];
  return -1;
}

/* The reader: --format's (which must claim the file when another does), else the detected one.
 * NULL with the message printed and *rc set. */
static const tl_importer *import_reader(const import_opts *x, int *rc) {
  tl_err err = {{0}};
  const tl_importer *imp = NULL;
  if (x->fmt) {
    if (!(imp = tl_importer_find(x->fmt))) {
      int n = 0;
      const tl_importer *const *all = tl_importers(&n);
      fprintf(stderr, "%s: unknown format '%s' (known:", CMD, x->fmt);
      for (int i = 0; i < n; i++) fprintf(stderr, "%s %s", i ? "," : "", all[i]->name);
      fprintf(stderr, ")\n");
      *rc = TL_EXIT_USAGE;
      return NULL;
    }
    tl_err e2 = {{0}};
    const tl_importer *seen = tl_importer_detect(x->path, &e2);
    if (seen && seen != imp) {
      fprintf(stderr, "%s: '%s' is a file of format '%s', not '%s'\n", CMD, x->path, seen->name, imp->name);
      *rc = TL_EXIT_BAD_INPUT;
      return NULL;
    }
  } else if (!(imp = tl_importer_detect(x->path, &err))) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    *rc = tl_exit_code(strncmp(err.msg, "cannot open", 11) == 0 ? TL_EIO : TL_EINPUT);
  }
  return imp;
}

/* The outputs (outs[3]: answers, judgments, items; NULL: standard output / not written) are
 * never over the input nor over each other. Returns -1 to go on, or an exit code. */
static int import_places(const import_opts *x, const char *outs[3]) {
  tl_err err = {{0}};
  const char *what[3] = {"the answers (--output)", "the judgments (--judgments)", "the items (--items)"};
  tl_path_role roles[4] = {{x->path, "the input"}};
  int nr = 1;
  tl_status cst = TL_OK;
  for (int k = 0; k < 3 && !cst; k++) {
    if (!outs[k]) continue;
    if (k > 0 && tl_path_is_std(outs[k])) {
      cst = tl_err_set(&err, TL_EUSAGE, "%s cannot be standard output: give a file", what[k]);
      break;
    }
    cst = tl_out_check_stream_place(outs[k], &err);
    if (!cst) cst = tl_out_check_inputs(outs[k], what[k], roles, nr, &err);
    roles[nr++] = (tl_path_role){outs[k], what[k]};
  }
  if (!cst && !outs[0]) cst = tl_stdout_check_inputs(roles, 1, &err);
  if (!cst) return -1;
  fprintf(stderr, "%s: %s\n", CMD, err.msg);
  return tl_exit_code(cst);
}

/* The conversion into the open streams os[3]; says what it read. Returns an exit code. */
static int import_convert(const import_opts *x, const tl_importer *imp, tl_out_stream os[3]) {
  tl_err err = {{0}};
  tl_inlog log;
  if (tl_inlog_init(&log, stderr, x->strict) != TL_OK) return fprintf(stderr, "%s: out of memory\n", CMD), TL_EXIT_FAIL;
  tl_import_counts n = {0};
  errno = 0;
  int rc = TL_EXIT_OK;
  tl_status st = tl_import_convert(imp, x->path, x->model, x->id_prefix, os[0].f, os[1].f, os[2].f, &log, &n, &err);
  tl_inlog_flush(&log);
  if (st) {
    if (st == TL_EINPUT && x->strict && !err.msg[0]) snprintf(err.msg, sizeof err.msg, "a bad record (strict input)");
    fprintf(stderr, "%s: %s\n", CMD, err.msg[0] ? err.msg : tl_strerror(st));
    rc = tl_exit_code(st);
  } else {
    fprintf(stderr, "%s: %s (%s): %ld answers, ", CMD, x->path, imp->name, n.answers);
    if (n.judgments) fprintf(stderr, "%ld judgments, ", n.judgments);
    fprintf(stderr, "%ld items, %ld harness verdicts; %ld records not mapped\n", n.items, n.verdicts, log.total);
    if (n.records == 0) { /* a conversion of nothing is no success */
      fprintf(stderr, "%s: nothing in '%s' could be converted: nothing written\n", CMD, x->path);
      rc = TL_EXIT_BAD_INPUT;
    }
  }
  tl_inlog_release(&log);
  return rc;
}

int tl_cmd_import(int argc, char **argv) {
  import_opts x;
  memset(&x, 0, sizeof x);
  int rc = import_options(argc, argv, &x);
  if (rc >= 0) return rc;
  if (x.list) return list_formats();
  rc = TL_EXIT_OK;
  const tl_importer *imp = import_reader(&x, &rc);
  if (!imp) return rc;
  /* outputs: never over the input (nor over each other), each written whole or not at all */
  const char *outs[3] = {x.outp && !tl_path_is_std(x.outp) ? x.outp : NULL, x.jp, x.ip};
  if ((rc = import_places(&x, outs)) >= 0) return rc;
  tl_err err = {{0}};
  tl_out_stream os[3];
  memset(os, 0, sizeof os);
  rc = TL_EXIT_OK;
  for (int k = 0; k < 3 && !rc; k++)
    if ((k == 0 || outs[k]) && tl_out_stream_open(&os[k], k == 0 ? (outs[0] ? outs[0] : "-") : outs[k], &err)) {
      fprintf(stderr, "%s: %s\n", CMD, err.msg);
      rc = TL_EXIT_FAIL;
    }
  if (!rc) rc = import_convert(&x, imp, os);
  for (int k = 0; k < 3; k++) {
    if (!os[k].f) continue;
    if (tl_out_stream_close(&os[k], !rc, &err) != TL_OK) {
      fprintf(stderr, "%s: %s\n", CMD, err.msg);
      rc = TL_EXIT_FAIL;
    }
  }
  if (rc)
    for (int k = 0; k < 3; k++)
      if (outs[k]) fprintf(stderr, "%s: '%s' was not written\n", CMD, outs[k]);
  return rc;
}
