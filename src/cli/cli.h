/* cli.h - subcommands of the `tally` executable. Each returns the process exit code. */
#ifndef TALLY_CLI_H
#define TALLY_CLI_H

int tl_cmd_parse(int argc, char **argv);
int tl_cmd_run(int argc, char **argv);
int tl_cmd_correlate(int argc, char **argv);

#endif
