/* usage.c - every usage text of `tally`, and the table of its commands (usage.h).
 *
 * Each text lists every long option of its command's getopt_long table (tests/e2e/
 * test_cli_usage.sh checks it with `tally --list-options CMD`, and that each option a text lists
 * on a line of its own is one the command accepts). docs/CLI.md describes the same options. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "usage.h"
#include "tally/registry.h"
#include "tally/str.h"

const char tl_usage_tally[] =
    "tally " TALLY_VERSION " - evaluation studies for LLMs and VLMs on HPC clusters\n"
    "usage: tally <command> [options]\n"
    "  run JOB.json    score a job (answers replayed from files, or asked of an OpenAI-compatible\n"
    "                  server), write HDF5, print the summary; under mpirun/srun on any rank count\n"
    "  parse           run one answer or judge-rating parser over JSONL lines (inspection)\n"
    "  correlate       bootstrap Spearman/Kendall studies of metrics vs a human score\n"
    "  score vqa       official VQA accuracy of a results file (drop-in for vqaEval.py)\n"
    "  compare RUN.h5  paired comparison of two models on the units they share (--models A,B)\n"
    "  slurm JOB.json  print (or --submit) a preemption-safe sbatch script for the job (--array: a sweep)\n"
    "  merge A.h5 B.h5 ... -o M.h5  one file from the runs of a sweep, re-scored from their journals\n"
    "  import FILE     another harness's saved outputs (lm-eval, ...) as tally's answer lines (--list: the formats)\n"
    "  export RUN.h5   a run's per-item results as Every Eval Ever instance lines (--format eee)\n"
    "  report RUN.h5   the run's tables from its file: text, Markdown, LaTeX, CSV, JSON or HTML (--format)\n"
    "  version         print the version (also --version)\n"
    "  help            this text (also --help, -h)\n"
    "`tally <command> --help` for a command's options. A command's output file is given with\n"
    "--output FILE (--out is the same). Exit codes: 0 ok, 1 runtime failure, 2 usage or invalid job,\n"
    "3 bad input (with --strict-input, or too many rejected lines), 4 interrupted (run again with --resume).\n";

const char tl_usage_run[] =
    "usage: tally run JOB.json [--output FILE.h5] [--resume] [--strict-input] [--quiet] [--keep-journal]\n"
    "                          [--break-lock] [--force] [--cache DIR] [--dry-run[=FILE]] [--cell K] [--json]\n"
    "  --output FILE   write here instead of the job's \"output\" (an HDF5 file: a regular file, never '-');\n"
    "                  --out FILE is the same\n"
    "  --force         replace the output when it exists (a finished run's; --resume needs no --force)\n"
    "  --strict-input  stop at the first bad input line (exit 3, nothing written)\n"
    "  --quiet         no progress messages\n"
    "  --resume        continue an interrupted run from its journal (FILE.h5.journal/): finished\n"
    "                  units are not asked again; any rank count\n"
    "  --keep-journal  keep the journal after a successful run\n"
    "  --break-lock    take over the lock (FILE.h5.lock) of an earlier run on another host (a run\n"
    "                  that ended on this host is taken over without it)\n"
    "  --cache DIR     keep every reply of an HTTP engine (openai) in DIR, shared by ranks and jobs;\n"
    "                  a request whose reply is there is not sent again\n"
    "  --dry-run[=FILE]  write every request the job would send (to the model, and to the judge\n"
    "                  where the answers are known) as JSONL to FILE (default OUTPUT.requests.jsonl;\n"
    "                  '-' is standard output), send none, write no output\n"
    "  --cell K        run only cell K of the job's sweep (every benchmark lists the same models and\n"
    "                  seeds; cell K = model K / n_seeds, seed K % n_seeds): one array task of\n"
    "                  `tally slurm --array`; `tally merge` joins the cells' outputs\n"
    "  --json          instead of the text summary, the report of the output as JSON on stdout (the\n"
    "                  document `tally report --format json` gives: docs/REPORT.md)\n"
    "  -h, --help      this text\n"
    "exit codes: 0 ok (bad input lines, if any, were reported and counted), 1 runtime failure,\n"
    "            2 usage or invalid job (nothing run), 3 bad input with --strict-input,\n"
    "            4 interrupted by SIGTERM/SIGUSR1/SIGINT (run again with --resume)\n";

/* parse's text names the registered modules' parsers: generated once (tl_bench_parser_usage). */
const char *tl_usage_parse_text(void) {
  static char *text;
  if (text) return text;
  tl_buf t;
  tl_buf_init(&t);
  tl_buf_puts(&t, "usage: tally parse --parser NAME [--input FILE] [--output FILE] [--strict-input]\n"
                  "                   [--lave-compat]\n"
                  "  --output FILE: written whole or not at all (--out FILE is the same); -h, --help: this text\n");
  tl_bench_parser_usage(&t);
  tl_buf_puts(&t, "  FILE defaults to stdin/stdout. Exit: 0 ok, 1 failure, 2 usage, 3 bad input with --strict-input.\n");
  text = tl_buf_detach(&t);
  return text ? text : "usage: tally parse --parser NAME [--input FILE] [--output FILE] [--strict-input]\n";
}

const char tl_usage_correlate[] =
    "usage: tally correlate --input TABLE --human COL --metrics A,B,... [options]\n"
    "  --input FILE        .csv, .tsv or .jsonl (one object per line)\n"
    "  --human COL         the human judgment column\n"
    "  --metrics A,B,...   metric columns to correlate with the human score\n"
    "  --group-by C,D      one study per distinct value combination\n"
    "  --resamples B       paired bootstrap resamples (default 5000)\n"
    "  --seed S            resample r draws from Philox keyed by (S, r) (default 0)\n"
    "  --ci LEVEL          confidence level (default 0.95)\n"
    "  --method percentile|bca   CI method (default bca)\n"
    "  --stats spearman,kendall  statistics, comma-separated (default both; kendall = tau-b)\n"
    "  --indices FILE      explicit resample index matrix (.npy int32/int64 [B, n], or text:\n"
    "                      one resample per line) instead of Philox, for cross-checks\n"
    "  --cluster COL|none  resample clusters: rows with the same COL value (a question with one\n"
    "                      row per model) are drawn together (default none: rows resampled)\n"
    "  --system COL        also the system-level table: per-COL (model) means of each metric vs\n"
    "                      the human means, Spearman/Kendall over the systems\n"
    "  --output FILE.h5    write summary, comparisons and every resample value (--out FILE.h5 is the same)\n"
    "  --json              print JSON instead of the table\n"
    "  --ttest-compat      also print the paper-style t-test on bootstrap vectors (COMPAT:\n"
    "                      its p-value shrinks as B grows; not evidence)\n"
    "  --permutation       also run the paired permutation test (B permutations, split over\n"
    "                      ranks; about as costly as the bootstrap itself per metric pair)\n"
    "  --device auto|cpu|cuda   where resamples run (default auto: CUDA when present)\n"
    "  --agreement A,B[,C...]  also the agreement table of these rating columns (repeatable): each\n"
    "                      pair's raw agreement (with and without ties for A/tie/B preferences),\n"
    "                      Cohen's kappa (unweighted, linear, quadratic), Scott's pi, Krippendorff's\n"
    "                      alpha, with percentile bootstrap CIs (the same B and seed), Wilson and\n"
    "                      Jeffreys intervals, and the confusion matrix; alpha over all of 3+ columns\n"
    "  --agreement-scale nominal|ordinal|interval   alpha's metric (default nominal)\n"
    "  --agreement-cluster COL  resample the values of COL (e.g. a question id) instead of rows\n"
    "  --break-lock        take over the lock (FILE.h5.lock) of an earlier run on another host\n"
    "  --force             replace the --output file when it exists\n"
    "  --strict-input --quiet\n"
    "  -h, --help          this text\n"
    "exit codes: 0 ok, 1 runtime failure, 2 usage, 3 bad input with --strict-input\n";

const char tl_usage_score[] =
    "usage: tally score vqa --annotations A [--questions Q] --results R [options]\n"
    "       tally score vqa --items ITEMS.jsonl --results R [options]\n"
    "  --annotations A    official VQA annotations JSON ({\"annotations\": [...]})\n"
    "  --questions Q      official VQA questions JSON (optional: cross-checked, texts kept)\n"
    "  --items F          tally's JSONL items instead: {\"id\", \"question\", \"answers\": [...],\n"
    "                     \"image\"?, \"question_type\"?, \"answer_type\"?} per line\n"
    "  --results R        [{\"question_id\": ..., \"answer\": \"...\"}, ...] (or JSONL of the same);\n"
    "                     '-' (here or for one other input): standard input\n"
    "  --version V        official (vqaEval.py @ a013f00, default) | 2017 (@ c4e6a0e) |\n"
    "                     normalized (always normalize, as lmms-eval PR #794)\n"
    "  --output F         write the JSON to F (never an input; '-': standard output; a device or FIFO is\n"
    "                     written in place) instead of standard output; --out F is the same\n"
    "  --strict-input     stop at the first input problem (exit 3)\n"
    "  -h, --help         this text\n"
    "Prints {\"overall\", \"perQuestionType\", \"perAnswerType\", \"perQuestion\"} as vqaEval.py\n"
    "computes them. Questions without a result are reported and left out of the accuracy.\n"
    "An input that is not valid JSON (cut short, a broken line) is an error: nothing is scored.\n"
    "Exit: 0 ok, 1 failure, 2 usage, 3 bad input with --strict-input.\n";

/* compare's text names each registered module's defaults (its tl_bench_vt's `compare` hook): a
 * line per module that has them, in registry order, generated once. */
const char *tl_usage_compare_text(void) {
  static char *text;
  if (text) return text;
  tl_buf t;
  tl_buf_init(&t);
  tl_buf_puts(&t, "usage: tally compare RUN.h5 --models A,B [options]\n"
                  "  --benchmark NAME    the item table /items/NAME (default: the only benchmark in the file)\n"
                  "  --metric COL        the per-unit score (default: the benchmark's, below)\n"
                  "  --by COL            also per value of COL (default: the benchmark's, below); --by '' for none\n"
                  "  --status COL        units whose COL is not ok have no score (default: the benchmark's, below);\n"
                  "                      for an accuracy they count 0, else they are left out\n"
                  "  --resamples B       paired bootstrap resamples over items, at least 2 (default 2000)\n"
                  "  --seed S            resample r draws from Philox keyed by (S, r) (default 0)\n"
                  "  --ci LEVEL          confidence level (default 0.95)\n"
                  "  --examples K        items listed for each flip direction (default 3)\n"
                  "  --json              the result as JSON on stdout (the report's schema, tally-report/1:\n"
                  "                      docs/REPORT.md) instead of the text\n"
                  "  -h, --help          this text\n"
                  "defaults of each benchmark: metric, by, status\n");
  int w = 0; /* the name column: the longest name */
  for (size_t i = 0; i < tl_bench_count(); i++)
    if (tl_bench_at(i)->compare && (int)strlen(tl_bench_at(i)->name) > w) w = (int)strlen(tl_bench_at(i)->name);
  for (size_t i = 0; i < tl_bench_count(); i++) {
    const tl_compare_defaults *d = tl_bench_at(i)->compare;
    if (!d) continue;
    tl_buf_printf(&t, "  %-*s  %s%s, %s, %s\n", w, tl_bench_at(i)->name, d->metric ? d->metric : "none (give --metric)",
                  d->dialogue ? " (dialogues: the least over their turns)" : "", d->by && d->by[0] ? d->by : "none",
                  d->status && d->status[0] ? d->status : "none");
  }
  tl_buf_puts(&t, "exit codes: 0 ok, 1 runtime failure, 2 usage (a model or column not in the file)\n");
  text = tl_buf_detach(&t);
  return text ? text : "usage: tally compare RUN.h5 --models A,B [options]\n";
}

const char tl_usage_slurm[] =
    "usage: tally slurm JOB.json [options]\n"
    "  --ntasks N          MPI ranks (default 4)\n"
    "  --time T            time limit, SLURM's format (default 02:00:00)\n"
    "  --partition P       partition (default: the cluster's)\n"
    "  --account A         account to charge (most clusters require one)\n"
    "  --qos Q             quality of service\n"
    "  --mem M             memory per node, SLURM's format (e.g. 64G)\n"
    "  --cpus-per-task N   CPUs per rank\n"
    "  --constraint C      node features (e.g. a100)\n"
    "  --sbatch-arg ARG    any other sbatch option, as --opt=value or --flag (repeatable)\n"
    "  --prologue FILE     shell lines run before tally (module loads, environment)\n"
    "  --mpi pmix|pmi2|none  how the ranks start: srun --mpi=pmix (default), srun --mpi=pmi2, or\n"
    "                      none: mpirun inside the allocation\n"
    "  --gpus-per-task G   GPUs per rank (default none)\n"
    "  --name NAME         job name (default: the job's \"name\")\n"
    "  --max-requeue N     requeues after a time-limit stop before giving up (default 3)\n"
    "  --array             a sweep: one array task per cell (model x seed; with --serve, per model, its\n"
    "                      seeds run one after the other on the cell's server) and a merge job after\n"
    "                      it, written as OUTPUT.array.sbatch and OUTPUT.merge.sbatch beside the output\n"
    "  --array-throttle N  at most N array tasks at once (default: no limit)\n"
    "  --merge-after ok|any  the merge job's dependency on the array (default ok: every cell\n"
    "                      finished; any: merge what finished, name what did not, exit 1)\n"
    "  --serve KIND        start one inference server per GPU with slurm/serve.sh first (vllm,\n"
    "                      llamacpp, or test); the job's model engine is openai at\n"
    "                      http://127.0.0.1:{port}/v1\n"
    "  --serve-model M     the model to serve (default: the job's one model; with --array, each cell's)\n"
    "  --serve-gpus N      servers per node (default: serve.sh finds the node's GPUs)\n"
    "  --serve-args \"...\"  more arguments for every server\n"
    "  --serve-wait S      seconds to wait for the servers' health (default 900)\n"
    "  --serve-script P    serve.sh to use (default: the install's share/tally/slurm/serve.sh, else\n"
    "                      this build's source tree's)\n"
    "  --force             the job's output exists (a finished run's): the script replaces it (tally run\n"
    "                      --force); without it that is refused, as tally run refuses it\n"
    "  --submit            submit it with sbatch (prints the job id) instead of printing it\n"
    "  --wait              with --submit: sbatch --wait (returns when the job ends, with its exit code)\n"
    "  -h, --help          this text\n"
    "exit codes: 0 ok, 1 failure (sbatch failed), 2 usage or an invalid job\n";

const char tl_usage_merge[] =
    "usage: tally merge A.h5 B.h5 ... -o MERGED.h5 [--overlap error|first|last|identical] [--name NAME]\n"
    "                  [--partial] [--force] [--break-lock] [--quiet]\n"
    "  -o, --output FILE  the merged output (written as FILE.part, then renamed); --out FILE is the same\n"
    "  --partial        merge some cells of a sweep (tally run --cell K) although others are missing:\n"
    "                   the output says so (root attributes partial = 1, cells_merged, cells_missing,\n"
    "                   and its summary); without it such a merge is refused, naming the missing cells\n"
    "  --force          replace the output when it exists\n"
    "  --break-lock     take over the output's lock (FILE.lock) left by a run on another host\n"
    "  --overlap P      a unit that two inputs hold: error (the default: refused, naming it),\n"
    "                   first / last (keep the one of the first / last input given), identical\n"
    "                   (keep one copy when the replies agree, refuse when they differ)\n"
    "  --name NAME      the merged job's name (default: the first input's)\n"
    "  --quiet          no progress messages\n"
    "  -h, --help       this text\n"
    "Every input must be the finished output of `tally run --keep-journal` (its journal\n"
    "FILE.h5.journal/ beside it): units are re-scored from those records, never averaged from\n"
    "the inputs' tables. Runs under mpirun/srun like `tally run`; same result on any rank count.\n"
    "exit codes: 0 ok, 1 runtime failure, 2 usage, or inputs that cannot be merged (nothing written)\n";

const char tl_usage_export[] =
    "usage: tally export RUN.h5 --format eee [--benchmark NAME] [--mode MODE] [--output FILE]\n"
    "  --format eee       Every Eval Ever instance lines (schema 0.3.0), one per unit of the item table\n"
    "  --benchmark NAME   the benchmark (default: the file's only one)\n"
    "  --mode MODE        the scoring mode whose verdict is exported (default: the primary)\n"
    "  -o, --output F     the lines (default: standard output); --out F is the same\n"
    "  -h, --help         this text\n"
    "The rule that fired is the extraction method (\"tally/MODE/RULE\"). Dialogue benchmarks (turns) are not\n"
    "exported. exit codes: 0 ok, 1 failure, 2 usage\n";

const char tl_usage_report[] =
    "usage: tally report RUN.h5 [--format text|md|latex|csv|json|html] [--output FILE]\n"
    "  --format F       text (default: aligned columns, nothing cut), md (GitHub pipe tables), latex\n"
    "                   (a standalone article of booktabs tables), csv (one long table of every cell:\n"
    "                   section,table,row,column,kind,value,lo,hi), json (schema tally-report/1),\n"
    "                   html (one self-contained page: charts drawn as SVG, sortable tables, no network)\n"
    "  -o, --output F   write here (default: standard output), whole or not at all, never over the\n"
    "                   run file; --out F is the same\n"
    "  -h, --help       this text\n"
    "The report holds the run's provenance (job, commit, engines, inputs and their SHA-256, seeds), each\n"
    "benchmark's metric and audit tables (the module's layout where it has one), and each study's\n"
    "parameters, estimates and comparisons (docs/REPORT.md).\n"
    "exit codes: 0 ok, 1 failure, 2 usage, 3 not a run file of tally (or one that cannot be read)\n";

const char tl_usage_import[] =
    "usage: tally import FILE [--format NAME] [--model NAME] [--output ANSWERS.jsonl] [--judgments FILE]\n"
    "                    [--items FILE] [--id-prefix P] [--strict-input]\n"
    "       tally import --list\n"
    "  --format NAME    the harness's format (default: detected from the file; --list names them)\n"
    "  --model NAME     the model when the file names none (default: the file's, else \"unknown\")\n"
    "  -o, --output F   the answer lines (default: standard output); --out F is the same\n"
    "  --judgments F    the judge's replies the file holds (a file holding some needs it)\n"
    "  --items F        each distinct item the file holds, once (the schema the modules read)\n"
    "  --id-prefix P    put P in front of every answer's id (VQA's items are \"<dataset>:<question id>\")\n"
    "  --list           every format known, with the files it reads\n"
    "  --strict-input   stop at the first record that cannot be mapped (exit 3, nothing written)\n"
    "  -h, --help       this text\n"
    "An answer line is tally's own ({\"id\", \"model\", \"seed\", \"response\", ...}) plus \"harness\":\n"
    "{\"format\", \"task\", \"verdict\", \"metric\", \"extracted\", \"where\", \"extra\"?}. Outputs are\n"
    "written whole or not at all, never over the input. A job's answers given as {\"format\", \"path\"}\n"
    "are converted by `tally run` itself (docs/IMPORT.md).\n"
    "exit codes: 0 ok (records not mapped, if any, were reported), 1 failure, 2 usage, 3 bad input\n"
    "            (an unknown or unreadable file, --strict-input and a bad record)\n";

const tl_cli_cmd tl_cli_cmds[] = {
    {"run", tl_cmd_run, tl_usage_run, tl_opts_run},
    {"parse", tl_cmd_parse, NULL /* generated: tl_usage_parse_text() */, tl_opts_parse},
    {"correlate", tl_cmd_correlate, tl_usage_correlate, tl_opts_correlate},
    {"score", tl_cmd_score, tl_usage_score, tl_opts_score},
    {"compare", tl_cmd_compare, NULL /* generated: tl_usage_compare_text() */, tl_opts_compare},
    {"slurm", tl_cmd_slurm, tl_usage_slurm, tl_opts_slurm},
    {"merge", tl_cmd_merge, tl_usage_merge, tl_opts_merge},
    {"import", tl_cmd_import, tl_usage_import, tl_opts_import},
    {"export", tl_cmd_export, tl_usage_export, tl_opts_export},
    {"report", tl_cmd_report, tl_usage_report, tl_opts_report},
};
const int tl_n_cli_cmds = (int)(sizeof tl_cli_cmds / sizeof tl_cli_cmds[0]);

int tl_usage_help(const char *cmd, const char *text) {
  if (fputs(text, stdout) < 0 || fflush(stdout) != 0) {
    fprintf(stderr, "%s: cannot write standard output\n", cmd);
    return TL_EXIT_FAIL;
  }
  return TL_EXIT_OK;
}

int tl_usage_error(const char *text) {
  fputs(text, stderr);
  return TL_EXIT_USAGE;
}

int tl_usage_bad_option(const char *cmd, int c, char **argv, const char *text) {
  tl_opt_unknown(cmd, c, optopt, argv[optind - 1]);
  return tl_usage_error(text);
}
