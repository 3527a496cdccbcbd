/* cmd_parse.c - `tally parse`: the inspection tool for one parser.
 *
 * SpatialEval answer parsers (spatialeval-*): reads JSONL lines {"item": {...}, "response":
 * "...", "model": "...", "prompt": "..."?} and writes, in order, one JSONL line per input line:
 *   {"answer": <string|null>, "correct": 0|1, "status": "...", "rule": "..."}
 * MT-Bench-101 judge-rating parsers (mtbench101-rating = mode "mtbench101", ours;
 * mtbench101-opencompass; fastchat; judgearena: mtb_rating.h): reads {"response": "<judge
 * output>"|null} ("item" is not needed and ignored whatever it holds; "model" and "prompt", when
 * present, are checked as for spatialeval and otherwise ignored) and writes
 *   {"answer": <string|null>, "rating": <number|null>, "status": "...", "rule": "..."}
 * where "rating" is the exact decimal rating (7, 8.5) when the status is ok, else null.
 * LAVE judge-rating parser (lave-rating: lave.h tl_lave_rate; --lave-compat turns on the
 * reference's fallback, where an unparsed reply is rated 2): reads the same input lines and writes
 *   {"answer": "3"|null, "rating": 1|2|3|null, "score": 0|0.5|1|null, "status": "...", "rule": "..."}
 * where "answer" is the rating as read from the reply (null for the compat fallback) and
 * "rating"/"score" are set when the status is ok.
 * A bad input line gets {"error": "..."} in its place (and a message on stderr), so output line
 * N always answers input line N (blank lines excepted). */
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
#include "spatialeval.h"
#include "mtb_rating.h"
#include "lave.h"
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

/* One judge-rating output line; 0 when it cannot be written. The rating is written as exact
 * decimal text from the thousandths (a double would round 16-digit ratings). */
static int emit_rating(FILE *out, const tl_parsed *pr) {
  cJSON *w = cJSON_CreateObject();
  if (!w) return 0;
  if (pr->answer) cJSON_AddStringToObject(w, "answer", pr->answer);
  else cJSON_AddNullToObject(w, "answer");
  if (pr->status == TL_PS_OK) {
    char num[48];
    long long v = (long long)pr->value; /* >= 0: ratings are never negative */
    int k = snprintf(num, sizeof num, "%lld", v / TL_MTB_RATING_SCALE);
    long long f = v % TL_MTB_RATING_SCALE;
    if (f) {
      snprintf(num + k, sizeof num - (size_t)k, ".%03lld", f);
      size_t e = strlen(num);
      while (num[e - 1] == '0') num[--e] = 0;
    }
    cJSON_AddRawToObject(w, "rating", num);
  } else {
    cJSON_AddNullToObject(w, "rating");
  }
  cJSON_AddStringToObject(w, "status", tl_pstatus_name(pr->status));
  cJSON_AddStringToObject(w, "rule", pr->rule);
  char *s = cJSON_PrintUnformatted(w);
  int ok = s && fprintf(out, "%s\n", s) >= 0;
  free(s);
  cJSON_Delete(w);
  return ok;
}

/* One LAVE rating output line; 0 when it cannot be written. */
static int emit_lave(FILE *out, const tl_lave_rating *lr) {
  cJSON *w = cJSON_CreateObject();
  if (!w) return 0;
  if (lr->answer) cJSON_AddStringToObject(w, "answer", lr->answer);
  else cJSON_AddNullToObject(w, "answer");
  if (lr->status == TL_PS_OK) {
    cJSON_AddNumberToObject(w, "rating", lr->rating);
    cJSON_AddNumberToObject(w, "score", lr->score); /* 0, 0.5 or 1: printed exactly */
  } else {
    cJSON_AddNullToObject(w, "rating");
    cJSON_AddNullToObject(w, "score");
  }
  cJSON_AddStringToObject(w, "status", tl_pstatus_name(lr->status));
  cJSON_AddStringToObject(w, "rule", lr->rule);
  char *s = cJSON_PrintUnformatted(w);
  int ok = s && fprintf(out, "%s\n", s) >= 0;
  free(s);
  cJSON_Delete(w);
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

int tl_cmd_parse(int argc, char **argv) {
  static const char *const CMD = "tally parse";
  static const char *const PARSERS[] = {"spatialeval-strict", "spatialeval-pr3", "spatialeval-legacy",
                                        "mtbench101-rating",  "mtbench101-opencompass", "fastchat",
                                        "judgearena", "lave-rating"};
  enum { N_PARSERS = sizeof PARSERS / sizeof PARSERS[0], FIRST_RATER = 3, LAVE = 7 };
  /* the rating modes of PARSERS[FIRST_RATER..] */
  static const tl_mtb_rate_mode RATE_MODES[] = {TL_MTB_RATE_STRICT, TL_MTB_RATE_OPENCOMPASS,
                                                TL_MTB_RATE_FASTCHAT, TL_MTB_RATE_JUDGEARENA};
  const char *in = "-", *outp = NULL;
  int strict_input = 0, pi = -1, lave_compat = 0;
  tl_opt_begin();
  int c;
  while ((c = getopt_long(argc, argv, ":h", tl_opts_parse, NULL)) != -1) {
    switch (c) {
    case O_PARSER:
      if ((pi = tl_opt_choice(CMD, "--parser", optarg, PARSERS, N_PARSERS)) < 0) return TL_EXIT_USAGE;
      break;
    case O_INPUT:
      if (tl_opt_nonempty(CMD, "--input", optarg)) return TL_EXIT_USAGE;
      in = optarg;
      break;
    case O_OUTPUT: outp = optarg; break;
    case O_STRICT: strict_input = 1; break;
    case O_LAVE_COMPAT: lave_compat = 1; break;
    case 'h':
    case O_HELP: return tl_usage_help(CMD, tl_usage_parse);
    default: return tl_usage_bad_option(CMD, c, argv, tl_usage_parse);
    }
  }
  if (optind < argc) {
    fprintf(stderr, "%s: unexpected argument '%s'\n", CMD, argv[optind]);
    return tl_usage_error(tl_usage_parse);
  }
  if (pi < 0) {
    fprintf(stderr,
            "%s: --parser is required: spatialeval-strict, spatialeval-pr3, spatialeval-legacy, "
            "mtbench101-rating, mtbench101-opencompass, fastchat or judgearena (MT-Bench-101), "
            "or lave-rating (LAVE)\n",
            CMD);
    return TL_EXIT_USAGE;
  }
  if (lave_compat && pi != LAVE) {
    fprintf(stderr, "%s: --lave-compat applies to --parser lave-rating only\n", CMD);
    return TL_EXIT_USAGE;
  }
  tl_err err = {{0}};
  /* No output ever replaces the input: checked before anything is opened for writing. */
  tl_path_role roles[1] = {{in, "the input"}};
  if (outp && tl_path_is_std(outp)) outp = NULL; /* "-": standard output */
  tl_status cst = outp ? tl_out_check_stream_place(outp, &err) : TL_OK;
  if (!cst && outp) cst = tl_out_check_inputs(outp, "the output", roles, 1, &err);
  if (!cst && !outp) cst = tl_stdout_check_inputs(roles, 1, &err);
  if (cst) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return tl_exit_code(cst); /* TL_EUSAGE: 2; TL_EIO, TL_ENOMEM: 1 */
  }
  const int rating = pi >= FIRST_RATER, lave = pi == LAVE;
  tl_se_parser *p = NULL;
  tl_mtb_rater *rater = NULL;
  /* lave-rating needs no parser object (tl_lave_rate) */
  if (rating && !lave) rater = tl_mtb_rater_new(RATE_MODES[pi - FIRST_RATER], &err);
  else if (!rating) p = tl_se_parser_new((tl_se_mode)tl_se_mode_from_name(PARSERS[pi] + 12), &err);
  if (!lave && !p && !rater) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    return TL_EXIT_FAIL;
  }
  /* --output: written to a temporary file in the same folder and renamed over the output only
   * when every line is written, so a failure never leaves a half file under the output name (a
   * device or FIFO is written in place) */
  tl_out_stream os;
  if (tl_out_stream_open(&os, outp ? outp : "-", &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    tl_se_parser_free(p);
    tl_mtb_rater_free(rater);
    return TL_EXIT_FAIL;
  }
  FILE *out = os.f;
  tl_jsonl r;
  if (tl_jsonl_open(&r, in, 0, &err) != TL_OK) {
    fprintf(stderr, "%s: %s\n", CMD, err.msg);
    tl_se_parser_free(p);
    tl_mtb_rater_free(rater);
    tl_out_stream_close(&os, 0, &err);
    return TL_EXIT_FAIL;
  }
  int rc = TL_EXIT_OK, wfail = 0, werr = 0;
  long nbad = 0;
  cJSON *o;
  tl_jl_result res;
  tl_parsed pr;
  tl_parsed_init(&pr);
  while ((res = tl_jsonl_next(&r, &o, &err)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) {
      fprintf(stderr, "tally parse: %s\n", err.msg);
      rc = TL_EXIT_FAIL;
      break;
    }
    char msg[1200];
    msg[0] = 0;
    if (res == TL_JL_BAD) {
      snprintf(msg, sizeof msg, "%s", err.msg);
    } else {
      const cJSON *ji = cJSON_GetObjectItemCaseSensitive(o, "item");
      const cJSON *jr = cJSON_GetObjectItemCaseSensitive(o, "response");
      const cJSON *jm = cJSON_GetObjectItemCaseSensitive(o, "model");
      const cJSON *jp = cJSON_GetObjectItemCaseSensitive(o, "prompt");
      tl_se_item it;
      tl_se_item_init(&it);
      if (!ji && !rating) snprintf(msg, sizeof msg, "%s:%ld: missing field 'item'", r.path, r.line_no);
      else if (!jr) snprintf(msg, sizeof msg, "%s:%ld: missing field 'response'", r.path, r.line_no);
      else if (!cJSON_IsString(jr) && !cJSON_IsNull(jr))
        snprintf(msg, sizeof msg, "%s:%ld: field 'response' is not a string or null", r.path, r.line_no);
      else if (jm && !cJSON_IsString(jm))
        snprintf(msg, sizeof msg, "%s:%ld: field 'model' is not a string", r.path, r.line_no);
      else if (jp && !cJSON_IsString(jp) && !cJSON_IsNull(jp))
        snprintf(msg, sizeof msg, "%s:%ld: field 'prompt' is not a string", r.path, r.line_no);
      else if (!rating && tl_se_item_from_json(ji, &it, &err) != TL_OK)
        snprintf(msg, sizeof msg, "%s:%ld: item: %s", r.path, r.line_no, err.msg);
      if (!msg[0] && lave) {
        tl_lave_rating lr;
        tl_status st = tl_lave_rate(cJSON_IsString(jr) ? jr->valuestring : NULL, lave_compat, &lr);
        if (st != TL_OK) {
          snprintf(msg, sizeof msg, "%s:%ld: parser failed: %s", r.path, r.line_no, tl_strerror(st));
        } else if (!emit_lave(out, &lr)) {
          wfail = 1;
        }
      } else if (!msg[0] && rating) {
        tl_status st = tl_mtb_rate(rater, cJSON_IsString(jr) ? jr->valuestring : NULL, &pr);
        if (st != TL_OK) {
          snprintf(msg, sizeof msg, "%s:%ld: parser failed: %s", r.path, r.line_no, tl_strerror(st));
        } else if (!emit_rating(out, &pr)) {
          wfail = 1;
        }
      } else if (!msg[0]) {
        tl_status st = tl_se_parse(p, &it, cJSON_IsString(jp) ? jp->valuestring : NULL,
                                   cJSON_IsString(jr) ? jr->valuestring : NULL,
                                   jm ? jm->valuestring : NULL, &pr);
        if (st != TL_OK) {
          snprintf(msg, sizeof msg, "%s:%ld: parser failed: %s", r.path, r.line_no, tl_strerror(st));
        } else {
          cJSON *w = cJSON_CreateObject();
          if (pr.answer) cJSON_AddStringToObject(w, "answer", pr.answer);
          else cJSON_AddNullToObject(w, "answer");
          cJSON_AddNumberToObject(w, "correct", pr.correct);
          cJSON_AddStringToObject(w, "status", tl_pstatus_name(pr.status));
          cJSON_AddStringToObject(w, "rule", pr.rule);
          char *s = cJSON_PrintUnformatted(w);
          if (!s || fprintf(out, "%s\n", s) < 0) wfail = 1;
          free(s);
          cJSON_Delete(w);
        }
      }
      tl_se_item_release(&it);
      cJSON_Delete(o);
    }
    if (msg[0]) {
      nbad++;
      fprintf(stderr, "tally parse: bad input: %s\n", msg);
      if (!emit_error(out, msg)) wfail = 1;
      if (strict_input) {
        rc = TL_EXIT_BAD_INPUT;
        break;
      }
    }
    if (wfail || ferror(out)) { /* a full disk or a closed pipe: stop at once */
      werr = errno;
      break;
    }
  }
  tl_parsed_release(&pr);
  tl_jsonl_close(&r);
  tl_se_parser_free(p);
  tl_mtb_rater_free(rater);
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
  if (rc && outp) fprintf(stderr, "%s: '%s' was not written\n", CMD, outp);
  if (nbad) fprintf(stderr, "tally parse: %ld bad input line%s\n", nbad, nbad == 1 ? "" : "s");
  return rc;
}
