/* job.h - the job file: what to score, with which parsers, where to write.
 *
 * A job is JSON (see docs/JOBS.md). Relative paths inside it are resolved against the folder of
 * the job file. tl_job_load reports EVERY problem it finds (one line each, "JOB:path: message")
 * before returning, so a user fixes them all in one go; nothing runs on an invalid job.
 * Besides the schema, what cJSON would read silently wrong is a problem too: a key given twice
 * in one object, at any depth ("JOB: benchmarks[0]: duplicate key 'items' at line 5 ..."), a
 * \u0000 escape in a string or key, and a NUL byte in the file. */
#ifndef TALLY_JOB_H
#define TALLY_JOB_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "tally/bench_vt.h"
#include "tally/engine.h"
#include "tally/err.h"
#include "tally/str.h"

/* One replay source: a JSONL file of replies. Fields a line lacks come from here. */
typedef struct {
  char *path;      /* resolved */
  char *model;     /* NULL = lines must carry "model" */
  int seed;        /* default seed when a line has none (0 unless given) */
  char *variant;   /* default prompt variant name; NULL = the benchmark's default */
} tl_job_answers;

/* One "benchmarks" entry. The loader reads the keys every benchmark has; the module reads its
 * own (bench.h) into `mod`. */
typedef struct {
  char *benchmark;          /* the module's name */
  const tl_bench_vt *vt;    /* the module (registry) */
  tl_bench *mod;            /* owned; configured, items not loaded yet */
  tl_job_answers *answers;  /* replay files of stage 0 (the model's replies) */
  int n_answers;
  tl_job_answers *judgments;/* replay files of stage 1 (the judge's replies), for a replay judge */
  int n_judgments;
  char **models;            /* expected models (NULL = those found in the answers) */
  int n_models;
  int *seeds;               /* expected seeds (NULL = those found) */
  int n_seeds;
} tl_job_bench;

/* The settings of an "openai" engine (an OpenAI-compatible server; docs/JOBS.md). Unset
 * numbers are NaN / -1. URLs may hold {local_rank} and {port} (= port_base + local rank); the
 * engine fills them in on each rank. */
typedef struct {
  char **urls;           /* base URLs ending in the API root, e.g. "http://127.0.0.1:{port}/v1" */
  int nurls;             /* 1 (a template) or a list spread over the ranks of a node */
  int port_base;         /* {port} = port_base + local rank; default 8000 */
  int completions;       /* "api": 0 = /chat/completions (default), 1 = /completions (base models) */
  char *model;           /* "model": the served name; NULL = the cfg's model name */
  char *api_key_env;     /* "api_key_env": the variable holding the key; NULL = no key. The key
                            itself is read by the engine and never stored */
  /* "sampling": each set field is sent explicitly (servers apply their own defaults otherwise) */
  double temperature, top_p;   /* NaN = unset (temperature then from the benchmark, else 0) */
  int max_tokens, n, logprobs, top_logprobs; /* -1 = unset */
  int send_seed;         /* 1 (default): "seed" = the unit's seed; 0: no seed sent */
  char **stop;           /* up to 4 stop strings */
  int nstop;
  char *extra_json;      /* "extra": an object merged into every request body (top_k, ...), or NULL */
  int conc_initial, conc_min, conc_max; /* "concurrency": requests in flight per endpoint */
  double connect_timeout_s, request_timeout_s; /* "timeouts" */
  int max_retries;       /* "retries".max */
  double backoff_s, backoff_max_s;
  char *health_path;     /* "health".path, against the server root (the URL less its last
                            "/v1"); default "/health" */
  double health_wait_s;  /* "health".wait_s: how long to wait for every endpoint; default 600 */
  int think_keep;        /* "think": 0 = "strip" (default: scoring sees the text after </think>),
                            1 = "keep" */
  int cache_unseeded;    /* "cache_unseeded": serve replies sampled with temperature > 0 and no
                            seed from the cache too (default false) */
  int key_header;        /* "key_header": send each request's unit key as an X-Tally-Key header
                            (default false: servers ignore it, and libcurl formats each header
                            byte by byte; tools/testserver keys its replies, faults and counts
                            on it) */
  double max_reply_bytes; /* "max_reply_bytes": a reply body over it is refused (engine_error,
                            not retried); default 64 MiB */
  char *ca_bundle;       /* "tls".ca_bundle: a PEM file of certificate authorities to trust (a
                            site's private CA), resolved against the job's folder; NULL: libcurl's
                            default, or CURL_CA_BUNDLE / SSL_CERT_FILE when set */
} tl_http_cfg;

/* An engine of a role. */
typedef struct {
  char *type;        /* "replay" | "openai" */
  int latency_ms;    /* replay: simulated per-request latency (tests, scheduling benchmarks) */
  tl_http_cfg http;  /* openai */
  char *json;        /* its settings as JSON (for the output; never API keys) */
} tl_job_engine;

/* An input file of the job, for the output checks and the SHA-256 provenance. */
typedef struct {
  char *path;        /* resolved */
  char *what;        /* "an items file", "the input table of study 'x'" */
} tl_job_input;

/* A correlation study over a data table (the engine of `tally correlate`), run collectively
 * inside `tally run`; its tables go to /stats/<name>/ in the run's output. */
typedef struct {
  char *name;        /* [A-Za-z0-9_.-]+, unique in the job */
  char *input;       /* resolved path of the table (.csv, .tsv, .jsonl); NULL with `from` */
  char *from;        /* or: the benchmark of this run whose item table (/items/<from>) is the
                        study's table, one row per unit */
  char *join;        /* with `from`: a table (.csv, .tsv, .jsonl) joined to it on `on`, e.g. the
                        human scores by item id; NULL = none */
  char *on;          /* the join columns, comma-joined; default "id" */
  char *human;       /* human score column */
  char *metrics;     /* metric columns, comma-joined */
  char *group_by;    /* grouping columns, comma-joined, or NULL */
  uint64_t resamples;/* default 5000 */
  uint64_t seed;     /* default 0 */
  double ci;         /* default 0.95 */
  int method;        /* 0 percentile, 1 bca (default) */
  int permutation;   /* default 0 */
  int stats_mask;    /* bit 0 spearman, bit 1 kendall_b; default both */
  char *cluster;     /* "cluster": the column whose rows are resampled together, "none", or NULL
                        (default: with `from`, the item id when a question has several rows) */
  char *system;      /* "system": the system-level table's column, "none", or NULL (default:
                        with `from`, "model" when the table has it and it is not a group_by) */
  char *agreement;   /* "agreement": column lists, each comma-joined, the lists ';'-joined
                        ("judge,human;h1,h2,h3"); NULL = no agreement table */
  int agreement_scale; /* Krippendorff's alpha metric: 0 nominal (default), 1 ordinal, 2 interval */
  char *agreement_cluster; /* column resampled as clusters in the agreement table, or NULL */
} tl_job_study;

typedef struct {
  char *path;        /* the job file as given */
  char *dir;         /* its folder */
  char *name;
  tl_job_engine engines[TL_ROLE__N]; /* by role; "engine" (the old key) is the model's */
  char *output;      /* resolved output path */
  size_t max_line;   /* per-line byte cap for JSONL inputs */
  double max_rejected; /* limits.max_rejected: the share of an input file's lines that may be
                          rejected before the run stops (default 0.1) */
  tl_job_bench *benches;
  int n_benches;     /* may be 0 when the job has studies */
  tl_job_study *studies;
  int n_studies;
  char *json;        /* the job JSON as read (stored in the output) */
  tl_job_input *inputs; /* every file the job reads except the job file, in job order */
  int n_inputs;
} tl_job;

/* Loads and validates. On TL_EJOB, `problems` holds one line per problem ("\n"-separated) and
 * *n_problems their count. The job is released on failure. */
tl_status tl_job_load(const char *path, tl_job *job, tl_buf *problems, int *n_problems);
/* The same, with relative paths resolved against `dir` instead of the job file's folder (a job
 * written elsewhere for another folder: `tally merge`). dir NULL: as tl_job_load. */
tl_status tl_job_load_in(const char *path, const char *dir, tl_job *job, tl_buf *problems, int *n_problems);
void tl_job_release(tl_job *job);

/* A sweep: every benchmark lists "models" and "seeds", the same lists in every entry. Its cells
 * are their (model, seed) pairs, model-major (cell K: model K / n_seeds, seed K % n_seeds).
 * Returns the number of cells, or 0 when the job is not a sweep. */
long tl_job_sweep_cells(const tl_job *job);

/* Joins dir and a relative path (absolute paths returned as is). malloc'd. */
char *tl_path_resolve(const char *dir, const char *path);

/* ---- What a module needs from the job loader while it reads its keys (tl_bench_vt.create
 * gets the context; tl_job_ctx is declared in tally/bench_vt.h). ---- */
/* One problem at `where` (e.g. "benchmarks[0].items"); every problem is reported, then none runs. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void tl_job_problem(tl_job_ctx *c, const char *where, const char *fmt, ...);
/* Typed keys of a benchmark entry e: when `key` is present and valid its value goes to *out;
 * when it is of the wrong type or range a problem "<where>.<key>: must be ..." is reported
 * (`what` describes the integer wanted, e.g. "an integer >= 0 (0: the engine's default)").
 * Return the number of problems (0 or 1); an absent key leaves *out as it is. */
int tl_job_key_int(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   const char *what, int *out);
int tl_job_key_num(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, double lo, double hi,
                   double *out);
int tl_job_key_bool(tl_job_ctx *c, const cJSON *e, const char *key, const char *where, bool *out);
/* The type of the engine that answers `role` in this job ("replay", "openai"; the job's engines
 * are read before its benchmarks), or "replay" when the job names none. A module uses it where
 * the engine changes what its items need (SpatialEval: a server must get a vision item's image). */
const char *tl_job_engine_type(const tl_job_ctx *c, tl_role role);
/* A path of the job resolved against the job's folder (absolute paths as they are), malloc'd;
 * NULL when out of memory. Not declared an input (for a folder, e.g. SpatialEval's "images"). */
char *tl_job_resolve(const tl_job_ctx *c, const char *path);
/* A path or a list of paths at `v` -> resolved against the job's folder (malloc'd array of
 * malloc'd strings). Each is also declared an input of the job (`what`: "an items file"), so
 * the output is checked against it and its SHA-256 is recorded. Problems are reported.
 * Returns the number of problems it reported (0: every entry is in *out). */
int tl_job_paths(tl_job_ctx *c, const cJSON *v, const char *where, const char *what, char ***out,
                 int *n);


#endif
