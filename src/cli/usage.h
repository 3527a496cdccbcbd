/* usage.h - the usage texts of `tally` and of each of its commands, in one place (usage.c), and
 * the long options each command's getopt_long accepts (each table is defined beside its switch,
 * in cmd_X.c).
 *
 * `tally CMD --help` prints CMD's text on standard output and exits 0 (TL_EXIT_OK); a usage error
 * prints its one-line message, then the text on standard error, and exits 2 (TL_EXIT_USAGE).
 * `tally --list-options CMD` (hidden; for tests/e2e/test_cli_usage.sh and shell completion)
 * prints CMD's long options, one "--name" a line: the test checks each is in CMD's text. */
#ifndef TALLY_CLI_USAGE_H
#define TALLY_CLI_USAGE_H

#include <getopt.h>

/* The top-level text (`tally --help`): every command of tl_cli_cmds, one line each. */
extern const char tl_usage_tally[];
extern const char tl_usage_run[];
/* parse's text lists the parsers of the registered modules: built on first use (never NULL). */
const char *tl_usage_parse_text(void);
extern const char tl_usage_correlate[];
extern const char tl_usage_score[];
/* compare's text names the registered modules' compare defaults: built on first use (never NULL). */
const char *tl_usage_compare_text(void);
extern const char tl_usage_slurm[];
extern const char tl_usage_merge[];
extern const char tl_usage_import[];

/* Each command's getopt_long table ({NULL, 0, NULL, 0}-terminated), defined in its cmd_X.c. */
extern const struct option tl_opts_run[];
extern const struct option tl_opts_parse[];
extern const struct option tl_opts_correlate[];
extern const struct option tl_opts_score[];
extern const struct option tl_opts_compare[];
extern const struct option tl_opts_slurm[];
extern const struct option tl_opts_merge[];
extern const struct option tl_opts_report[];
extern const char tl_usage_report[];
extern const struct option tl_opts_export[];
extern const char tl_usage_export[];
extern const struct option tl_opts_import[];

/* One command of `tally`: its name (argv[1]), entry point (argv from the name on; returns the
 * exit code), usage text and long options. */
typedef struct {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *usage; /* NULL for parse and compare: tl_usage_parse_text(), tl_usage_compare_text() */
  const struct option *opts;
} tl_cli_cmd;

/* Every command, in the top-level text's order; tl_n_cli_cmds of them. */
extern const tl_cli_cmd tl_cli_cmds[];
extern const int tl_n_cli_cmds;

/* --help: text on standard output. Returns TL_EXIT_OK, or TL_EXIT_FAIL (with a message naming
 * cmd) when standard output cannot be written. */
int tl_usage_help(const char *cmd, const char *text);
/* A usage error whose message is already printed: text on standard error; returns
 * TL_EXIT_USAGE. */
int tl_usage_error(const char *text);
/* The default case of a getopt_long switch (c is '?': an unknown option, or ':': one without its
 * value): "CMD: unknown option '--x'" (tl_opt_unknown), then text, on standard error; returns
 * TL_EXIT_USAGE. argv is the vector given to getopt_long (it names the option). */
int tl_usage_bad_option(const char *cmd, int c, char **argv, const char *text);

#endif
