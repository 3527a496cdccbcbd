/* cmd_parse.c - `tally parse`: the inspection tool for one parser.
 *
 * Reads JSONL lines {"item": {...}, "response": "...", "model": "...", "prompt": "..."?} and
 * writes, in order, one JSONL line per input line:
 *   {"answer": <string|null>, "correct": 0|1, "status": "...", "rule": "..."}
 * A bad input line gets {"error": "..."} in its place (and a message on stderr), so output line
 * N always answers input line N (blank lines excepted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tally/jsonl.h"
#include "tally/spatialeval.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: tally parse --parser NAME [--input FILE] [--output FILE] [--strict-input]\n"
          "  NAME: spatialeval-strict | spatialeval-pr3 | spatialeval-legacy\n"
          "  input lines:  {\"item\": {...benchmark row...}, \"response\": \"...\", \"model\": \"...\", \"prompt\": \"...\"?}\n"
          "  output lines: {\"answer\": ..., \"correct\": 0|1, \"status\": \"...\", \"rule\": \"...\"}\n"
          "  FILE defaults to stdin/stdout. Exit: 0 ok, 1 failure, 2 usage, 3 bad input with --strict-input.\n");
}

static void emit_error(FILE *out, const char *msg) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "error", msg);
  char *s = cJSON_PrintUnformatted(o);
  fprintf(out, "%s\n", s);
  free(s);
  cJSON_Delete(o);
}

int tl_cmd_parse(int argc, char **argv) {
  const char *parser = NULL, *in = "-", *outp = NULL;
  int strict_input = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--parser") && i + 1 < argc) parser = argv[++i];
    else if (!strcmp(argv[i], "--input") && i + 1 < argc) in = argv[++i];
    else if (!strcmp(argv[i], "--output") && i + 1 < argc) outp = argv[++i];
    else if (!strcmp(argv[i], "--strict-input")) strict_input = 1;
    else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
    else {
      fprintf(stderr, "tally parse: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    }
  }
  if (!parser || strncmp(parser, "spatialeval-", 12) != 0 || tl_se_mode_from_name(parser + 12) < 0) {
    fprintf(stderr, "tally parse: --parser must be one of spatialeval-strict, spatialeval-pr3, spatialeval-legacy\n");
    return 2;
  }
  tl_err err;
  tl_se_parser *p = tl_se_parser_new((tl_se_mode)tl_se_mode_from_name(parser + 12), &err);
  if (!p) {
    fprintf(stderr, "tally parse: %s\n", err.msg);
    return 1;
  }
  FILE *out = stdout;
  if (outp && !(out = fopen(outp, "w"))) {
    fprintf(stderr, "tally parse: cannot open '%s' for writing\n", outp);
    tl_se_parser_free(p);
    return 1;
  }
  tl_jsonl r;
  if (tl_jsonl_open(&r, in, 0, &err) != TL_OK) {
    fprintf(stderr, "tally parse: %s\n", err.msg);
    tl_se_parser_free(p);
    if (out != stdout) fclose(out);
    return 1;
  }
  int rc = 0;
  long nbad = 0;
  cJSON *o;
  tl_jl_result res;
  tl_parsed pr;
  tl_parsed_init(&pr);
  while ((res = tl_jsonl_next(&r, &o, &err)) != TL_JL_EOF) {
    if (res == TL_JL_IOERR) {
      fprintf(stderr, "tally parse: %s\n", err.msg);
      rc = 1;
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
      if (!ji) snprintf(msg, sizeof msg, "%s:%ld: missing field 'item'", r.path, r.line_no);
      else if (!jr) snprintf(msg, sizeof msg, "%s:%ld: missing field 'response'", r.path, r.line_no);
      else if (!cJSON_IsString(jr) && !cJSON_IsNull(jr))
        snprintf(msg, sizeof msg, "%s:%ld: field 'response' is not a string or null", r.path, r.line_no);
      else if (jm && !cJSON_IsString(jm))
        snprintf(msg, sizeof msg, "%s:%ld: field 'model' is not a string", r.path, r.line_no);
      else if (jp && !cJSON_IsString(jp) && !cJSON_IsNull(jp))
        snprintf(msg, sizeof msg, "%s:%ld: field 'prompt' is not a string", r.path, r.line_no);
      else if (tl_se_item_from_json(ji, &it, &err) != TL_OK)
        snprintf(msg, sizeof msg, "%s:%ld: item: %s", r.path, r.line_no, err.msg);
      if (!msg[0]) {
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
          fprintf(out, "%s\n", s);
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
      emit_error(out, msg);
      if (strict_input) {
        rc = 3;
        break;
      }
    }
  }
  tl_parsed_release(&pr);
  tl_jsonl_close(&r);
  tl_se_parser_free(p);
  if (out != stdout && fclose(out) != 0) {
    fprintf(stderr, "tally parse: cannot write '%s'\n", outp);
    rc = 1;
  }
  if (nbad) fprintf(stderr, "tally parse: %ld bad input line%s\n", nbad, nbad == 1 ? "" : "s");
  return rc;
}
