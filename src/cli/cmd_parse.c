/* cmd_parse.c - `tally parse`: the inspection tool for one parser.
 *
 * The parsers are the benchmark modules' named parsers (tally/bench_vt.h tl_parser_set), found
 * through the registry: `tally parse --help` lists them with each module's description of its
 * input and output lines. This file checks the fields every parser shares ("item" when the
 * parser needs one, "response" a string or null, "model" a string, "prompt" a string or null),
 * hands each line to the parser and writes its output object as one JSONL line, in order: a bad
 * input line gets {"error": "..."} in its place (and a message on stderr), so output line N
 * always answers input line N (blank lines excepted). A parser's one boolean option (LAVE's
 * --lave-compat) is refused with any other parser. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "outsafe.h"
#include "tally/jsonl.h"
#include "tally/registry.h"
#include "usage.h"

/* Cuts msg to at most `max` bytes at a UTF-8 boundary (the JSONL written stays valid). */
static void cut_utf8(char *msg, size_t max) {
  size_t n = strlen(msg);
  if (n > max) n = max;
  msg[tl_utf8_floor(msg, n)] = 0;
}

static int emit_error(FILE *out, char *msg) {
  cut_utf8(msg, 1000);
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  char *s = cJSON_PrintUnformatted(o);
  int ok = s && fprintf(out, "%s\n", s) >= 0;
  free(s);
  cJSON_Delete(o);
  return ok;
}

enum { O_PARSER = 1, O_INPUT, O_OUTPUT, O_STRICT, O_LAVE_COMPAT, O_HELP };
const struct option tl_opts_parse[] = {{"parser", required_argument, NULL, O_PARSER},
                                       {"input", required_argument, NULL, O_INPUT},
                                       {"output", required_argument, NULL, O_OUTPUT},
                                       {"out", required_argument, NULL, O_OUTPUT},
                                       {"strict-input", no_argument, NULL, O_STRICT},
                                       {"lave-compat", no_argument, NULL, O_LAVE_COMPAT},
                                       {"help", no_argument, NULL, O_HELP},
                                       {NULL, 0, NULL, 0}};

static const char *const CMD = "tally parse";

/* Steps return this to go on; any other value is the command's exit code. */
enum { GO_ON = -1 };

/* The command line, as parse_options fills it. */
enum { MAX_PARSERS = 64 };
typedef struct {
  const char *parsers[MAX_PARSERS]; /* the registered modules' parsers (registry order) */
  int nparsers;
  const char *in;     /* --input ("-": standard input) */
  const char *outp;   /* --output; NULL: standard output ("-" too, once parse_places ran) */
  int strict_input, lave_compat;
  const tl_named_parser *np; /* --parser's */
} parse_opts;

/* --lave-compat given: np must take it, else "--lave-compat applies to --parser A or B only".
 * Returns GO_ON or TL_EXIT_USAGE. */
static int check_flag(const parse_opts *o) {
  if (!o->lave_compat || (o->np->flag && !strcmp(o->np->flag, "lave-compat"))) return GO_ON;
  fprintf(stderr, "%s: --lave-compat applies to --parser", CMD);
  for (int i = 0, k = 0; i < o->nparsers; i++) {
    const tl_named_parser *p = tl_bench_parser(o->parsers[i], NULL);
    if (p->flag && !strcmp(p->flag, "lave-compat")) fprintf(stderr, "%s %s", k++ ? " or" : "", p->name);
  }
  fprintf(stderr, " only\n");
  return TL_EXIT_USAGE;
}

/* The registry's parsers, the getopt_long loop (no operand), --parser required, and
 * --lave-compat only with a parser that takes it. Fills o. Returns GO_ON, or the exit code of
 * --help, a registry that fails its check, or a usage error (its message printed). */
static int parse_options(int argc, char **argv, parse_opts *o) {
  *o = (parse_opts){.in = "-"};
  tl_err err = {{0}};
  if (tl_bench_registry_check(&err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return TL_EXIT_FAIL;
  }
  o->nparsers = tl_bench_parser_names(o->parsers, MAX_PARSERS);
  if (o->nparsers > MAX_PARSERS) o->nparsers = MAX_PARSERS;
  int pi = -1;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_parse, NULL)) != -1) {
    switch (c) {
    case O_PARSER:
      if ((pi = tl_opt_choice(CMD, "--parser", optarg, o->parsers, o->nparsers)) < 0) return TL_EXIT_USAGE;
      break;
    case O_INPUT:
      if (tl_opt_nonempty(CMD, "--input", optarg)) return TL_EXIT_USAGE;
      o->in = optarg;
      break;
    case O_OUTPUT: o->outp = optarg; break;
    case O_STRICT: o->strict_input = 1; break;
    case O_LAVE_COMPAT: o->lave_compat = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_parse_text());
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_parse_text());
    }
  }
  if (optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", CMD, argv[optind]);
    return tl_usage_error(tl_usage_parse_text());
  }
  if (pi < 0) {
    tl_buf names;
    tl_buf_init(&names);
    tl_bench_parser_list(&names);
    fprintf(stderr, "%s: --parser is required: %s\n", CMD, names.data ? names.data : "");
    tl_buf_release(&names);
    return TL_EXIT_USAGE;
  }
  o->np = tl_bench_parser(o->parsers[pi], NULL);
  return check_flag(o);
}

/* No output ever replaces the input: checked before anything is opened for writing ("-" as
 * --output becomes NULL, standard output). Returns GO_ON, or tl_exit_code of the failure
 * (TL_EUSAGE: 2; TL_EIO, TL_ENOMEM: 1) with its message. */
static int parse_places(parse_opts *o) {
  tl_err err = {{0}};
  tl_path_role roles[1] = {{o->in, "the input"}};
  if (o->outp && tl_path_is_std(o->outp)) o->outp = NULL; /* "-": standard output */
  tl_status cst = o->outp ? tl_out_check_stream_place(o->outp, &err) : TL_OK;
  if (!cst && o->outp) cst = tl_out_check_inputs(o->outp, "the output", roles, 1, &err);
  if (!cst && !o->outp) cst = tl_stdout_check_inputs(roles, 1, &err);
  if (cst) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return tl_exit_code(cst);
  }
  return GO_ON;
}

/* One parsed input line o (owned by the caller) of r: the shared fields checked, then the
 * parser's output object written to out as one JSONL line. A bad line leaves its message
 * ("FILE:LINE: ...") in msg[0..n) and writes nothing; *wfail = 1 when out cannot be written. */
static void parse_line(const parse_opts *po, void *pstate, const tl_jsonl *r, const cJSON *o, FILE *out, char *msg,
                       size_t n, int *wfail) {
  const tl_named_parser *np = po->np;
  const cJSON *ji = cJSON_GetObjectItemCaseSensitive(o, "item");
  const cJSON *jr = cJSON_GetObjectItemCaseSensitive(o, "response");
  const cJSON *jm = cJSON_GetObjectItemCaseSensitive(o, "model");
  const cJSON *jp = cJSON_GetObjectItemCaseSensitive(o, "prompt");
  if (!ji && np->needs_item) snprintf(msg, n, "%s:%ld: missing field 'item'", r->path, r->line_no);
  else if (!jr) snprintf(msg, n, "%s:%ld: missing field 'response'", r->path, r->line_no);
  else if (!cJSON_IsString(jr) && !cJSON_IsNull(jr))
    snprintf(msg, n, "%s:%ld: field 'response' is not a string or null", r->path, r->line_no);
  else if (jm && !cJSON_IsString(jm)) snprintf(msg, n, "%s:%ld: field 'model' is not a string", r->path, r->line_no);
  else if (jp && !cJSON_IsString(jp) && !cJSON_IsNull(jp))
    snprintf(msg, n, "%s:%ld: field 'prompt' is not a string", r->path, r->line_no);
  if (msg[0]) return;
  const tl_parse_line line = {np->needs_item ? ji : NULL, cJSON_IsString(jp) ? jp->valuestring : NULL,
                              cJSON_IsString(jr) ? jr->valuestring : NULL, jm ? jm->valuestring : NULL};
  tl_err err = {{0}};
  cJSON *w = cJSON_CreateObject();
  tl_status st = w ? np->run(np, pstate, po->lave_compat, &line, w, &err) : TL_ENOMEM;
  if (st == TL_EINPUT) {
    snprintf(msg, n, "%s:%ld: item: %s", r->path, r->line_no, err.msg);
  } else if (st != TL_OK) {
    snprintf(msg, n, "%s:%ld: parser failed: %s", r->path, r->line_no, tl_strerror(st));
  } else {
    char *s = cJSON_PrintUnformatted(w);
    if (!s || fprintf(out, "%s\n", s) < 0) *wfail = 1;
    free(s);
  }
  cJSON_Delete(w);
}

/* Every line of r through the parser, in order: its output, or {"error": ...} (and the message
 * on stderr, counted in *nbad). Stops at a read error (TL_EXIT_FAIL), at the first bad line
 * with --strict-input (TL_EXIT_BAD_INPUT), or when out cannot be written (*wfail = 1, *werr its
 * errno). Returns the exit code so far. */
static int parse_lines(const parse_opts *po, void *pstate, tl_jsonl *r, FILE *out, long *nbad, int *wfail, int *werr) {
  tl_err err = {{0}};
  cJSON *o;
  tl_jl_result res;
  while ((res = tl_jsonl_next(r, &o, &err)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) {
      fprintf(stderr, "tally parse: %s\n", err.msg);
      return TL_EXIT_FAIL;
    }
    char msg[1200];
    msg[0] = 0;
    if (res == TL_JL_BAD) {
      snprintf(msg, sizeof msg, "%s", err.msg);
    } else {
      parse_line(po, pstate, r, o, out, msg, sizeof msg, wfail);
      cJSON_Delete(o);
    }
    if (msg[0]) {
      (*nbad)++;
      fprintf(stderr, "tally parse: bad input: %s\n", msg);
      if (!emit_error(out, msg)) *wfail = 1;
      if (po->strict_input) return TL_EXIT_BAD_INPUT;
    }
    if (*wfail || ferror(out)) { /* a full disk or a closed pipe: stop at once */
      *werr = errno;
      return TL_EXIT_OK;
    }
  }
  return TL_EXIT_OK;
}

/* `tally parse --parser NAME [options]`: the options and places (parse_options, parse_places),
 * then the parser, the output stream and the input opened, every line parsed (parse_lines),
 * and the output kept only when all went well. Returns the exit code. */
int tl_cmd_parse(int argc, char **argv) {
  parse_opts po;
  int rc = parse_options(argc, argv, &po);
  if (rc == GO_ON) rc = parse_places(&po);
  if (rc != GO_ON) return rc;
  const tl_named_parser *np = po.np;
  tl_err err = {{0}};
  void *pstate = NULL;
  if (np->open(np, po.lave_compat, &pstate, &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return TL_EXIT_FAIL;
  }
  /* --output: written to a temporary file in the same folder and renamed over the output only
   * when every line is written, so a failure never leaves a half file under the output name (a
   * device or FIFO is written in place) */
  tl_out_stream os;
  if (tl_out_stream_open(&os, po.outp ? po.outp : "-", &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    if (np->close) np->close(pstate);
    return TL_EXIT_FAIL;
  }
  FILE *out = os.f;
  tl_jsonl r;
  if (tl_jsonl_open(&r, po.in, 0, &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    if (np->close) np->close(pstate);
    tl_out_stream_close(&os, 0, &err);
    return TL_EXIT_FAIL;
  }
  int wfail = 0, werr = 0;
  long nbad = 0;
  rc = parse_lines(&po, pstate, &r, out, &nbad, &wfail, &werr);
  tl_jsonl_close(&r);
  if (np->close) np->close(pstate);
  if (!wfail && (fflush(out) != 0 || ferror(out))) {
    wfail = 1;
    werr = errno;
  }
  if (wfail) {
    fprintf(stderr, "%s: cannot write %s%s%s: %s\n", CMD, os.std ? "" : "'", os.name, os.std ? "" : "'",
            strerror(werr ? werr : EIO));
    rc = TL_EXIT_FAIL;
  }
  if (tl_out_stream_close(&os, !rc, &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    rc = TL_EXIT_FAIL;
  }
  if (rc && po.outp) fprintf(stderr, "%s: '%s' was not written\n", CMD, po.outp);
  if (nbad) fprintf(stderr, "tally parse: %ld bad input line%s\n", nbad, nbad == 1 ? "" : "s");
  return rc;
}
