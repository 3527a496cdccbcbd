#!/usr/bin/env bash
# The usage texts say what the commands accept (issue 29, item 4). For every command that
# `tally --list-options` names (usage.c's table of commands):
#  - `tally --help` lists it;
#  - `tally CMD --help` (and -h) prints CMD's usage text on standard output, exit 0, nothing on
#    standard error;
#  - every long option of CMD's getopt_long table (`tally --list-options CMD`) appears in that
#    text as a whole word (an option added without documenting it fails here), and every option
#    the text lists at the start of a line is in the table (a removed option still documented
#    fails here);
#  - an unknown option exits 2 naming it, with the same usage text on standard error, also when
#    it follows an operand.
# Each command that writes an output file takes --output and its alias --out.
. "$(dirname "$0")/common.sh"
T="$TALLY_BIN"

mapfile -t CMDS < <("$T" --list-options)
[ "${#CMDS[@]}" -ge 7 ] || fail "tally --list-options lists ${#CMDS[@]} commands: ${CMDS[*]}"

rc=0; "$T" --help > "$WORK/top.txt" 2> "$WORK/top.err" || rc=$?
[ "$rc" = 0 ] && [ ! -s "$WORK/top.err" ] || fail "tally --help: exit $rc, stderr: $(cat "$WORK/top.err")"
grep -q "^usage: tally <command>" "$WORK/top.txt" || fail "tally --help prints no usage line"
for c in "${CMDS[@]}"; do
  grep -qE "^  $c( |$)" "$WORK/top.txt" || fail "tally --help does not list the command '$c'"
done

# whole-word: "--out" must not be found inside "--output"
has_opt() { grep -qE -- "(^|[^a-z0-9-])$1([^a-z0-9-]|$)" "$2"; }

n_opts=0
for c in "${CMDS[@]}"; do
  rc=0; "$T" "$c" --help > "$WORK/$c.help" 2> "$WORK/$c.err" || rc=$?
  [ "$rc" = 0 ] || fail "tally $c --help: exit $rc"
  [ ! -s "$WORK/$c.err" ] || fail "tally $c --help wrote on standard error: $(cat "$WORK/$c.err")"
  head -n 1 "$WORK/$c.help" | grep -q "^usage: tally $c" || fail "tally $c --help: first line is not 'usage: tally $c ...'"
  "$T" "$c" -h > "$WORK/$c.h" 2>&1 || fail "tally $c -h failed"
  cmp -s "$WORK/$c.help" "$WORK/$c.h" || fail "tally $c -h differs from --help"

  "$T" --list-options "$c" > "$WORK/$c.opts" || fail "tally --list-options $c failed"
  [ -s "$WORK/$c.opts" ] || fail "tally --list-options $c lists nothing"
  while read -r o; do
    [[ "$o" == --?* ]] || fail "tally --list-options $c: '$o' is not a long option"
    has_opt "$o" "$WORK/$c.help" || fail "tally $c accepts $o, but its usage text does not mention it"
    n_opts=$((n_opts + 1))
  done < "$WORK/$c.opts"
  # the options the text lists, one per line ("  --name ...", "  -o, --name ..."): each accepted
  while read -r o; do
    grep -qxF -- "$o" "$WORK/$c.opts" || fail "tally $c's usage text lists $o, which tally $c does not accept"
  done < <(sed -nE 's/^ +(-[a-zA-Z], )?(--[a-z0-9][a-z0-9-]*).*/\2/p' "$WORK/$c.help")

  rc=0; "$T" "$c" --no-such-option > "$WORK/$c.out" 2> "$WORK/$c.bad" || rc=$?
  [ "$rc" = 2 ] || fail "tally $c --no-such-option: exit $rc, want 2"
  head -n 1 "$WORK/$c.bad" | grep -qF "unknown option '--no-such-option'" ||
    fail "tally $c --no-such-option: the message does not name it: $(head -n 1 "$WORK/$c.bad")"
  [ ! -s "$WORK/$c.out" ] || fail "tally $c --no-such-option wrote on standard output"
  tail -n +2 "$WORK/$c.bad" | cmp -s - "$WORK/$c.help" ||
    fail "tally $c --no-such-option: standard error is not the message and then the usage text of --help"
  # after an operand too: options and operands mix (getopt_long's reordering, reset per command)
  rc=0; "$T" "$c" x.json --no-such-option > /dev/null 2> "$WORK/$c.bad" || rc=$?
  [ "$rc" = 2 ] && head -n 1 "$WORK/$c.bad" | grep -qF "unknown option '--no-such-option'" ||
    fail "tally $c x.json --no-such-option: exit $rc: $(head -n 1 "$WORK/$c.bad")"
done

# the output file: --output everywhere, --out its alias
for c in run parse correlate score merge; do
  for o in --output --out; do
    grep -qxF -- "$o" "$WORK/$c.opts" || fail "tally $c does not take $o"
  done
done
grep -qxF -- "-o" <(sed -nE 's/^ +(-o), --output.*/\1/p' "$WORK/merge.help") || fail "tally merge's -o is not documented"

# tally itself: an unknown option or command is exit 2, naming it
rc=0; "$T" --no-such-option > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -qF "unknown option '--no-such-option'" "$WORK/e.txt" || fail "tally --no-such-option: exit $rc"
rc=0; "$T" frobnicate > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -qF "unknown command 'frobnicate'" "$WORK/e.txt" || fail "tally frobnicate: exit $rc"
rc=0; "$T" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "^usage: tally <command>" "$WORK/e.txt" || fail "tally with no command: exit $rc"
"$T" --version | grep -q "^tally " || fail "tally --version"
echo "e2e cli usage: ${#CMDS[@]} commands, $n_opts long options, each in its usage text; unknown options exit 2"
