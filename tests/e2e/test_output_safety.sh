#!/usr/bin/env bash
# No output ever replaces an input, and one run at a time writes an output (issue: nothing lost).
# Every command refuses with exit 2, naming both paths, before it opens anything for writing,
# when its output is one of its inputs (same file: path, symlink or hard link); the inputs are
# byte-identical afterwards. Outputs that are folders, or in missing or read-only folders, fail
# before any work. A second `tally run` on an output that a live run holds exits 2 at once,
# naming the holder, and removes nothing; stale locks are reported and taken over only with
# --break-lock (or by a requeued run of the same SLURM job).
. "$(dirname "$0")/common.sh"
D="$TALLY_SRC/demo/spatialeval"
cp "$D/items.jsonl" "$D/answers.jsonl" "$TALLY_SRC/demo/stats/vqa_judgments.csv" "$WORK/"
cat > "$WORK/job.json" <<JOB
{"name": "safety", "output": "$WORK/out.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$WORK/items.jsonl", "answers": ["$WORK/answers.jsonl"],
   "parsers": ["strict"]}]}
JOB
sums() { (cd "$WORK" && sha256sum items.jsonl answers.jsonl job.json vqa_judgments.csv); }
sums > "$WORK/sums.txt"
same_inputs() { sums | cmp -s - "$WORK/sums.txt" || fail "$1: an input was changed"; }
expect() { # WANT_RC PATTERN WHAT -- command...
  local want="$1" pat="$2" what="$3"; shift 4
  local rc=0; "$@" > "$WORK/o.txt" 2> "$WORK/e.txt" || rc=$?
  [ "$rc" = "$want" ] || { cat "$WORK/e.txt"; fail "$what: exit $rc, want $want"; }
  [ -z "$pat" ] || grep -q -- "$pat" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "$what: message lacks '$pat'"; }
}

# ---- tally parse ----
"$PY" -c 'import json,sys; it=json.loads(open(sys.argv[1]).readline()); print(json.dumps({"item": it, "response": "Answer: B", "model": "m"}))' "$D/items.jsonl" > "$WORK/p.jsonl"
cp "$WORK/p.jsonl" "$WORK/p.orig"
expect 2 "same file" "parse --output = --input" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.jsonl" --output "$WORK/p.jsonl"
cmp -s "$WORK/p.jsonl" "$WORK/p.orig" || fail "parse truncated its input"
grep -q "$WORK/p.jsonl" "$WORK/e.txt" || fail "parse: the path is not named"
ln -s "$WORK/p.jsonl" "$WORK/link.jsonl"
expect 2 "same file" "parse --output = a symlink to --input" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.jsonl" --output "$WORK/link.jsonl"
ln "$WORK/p.jsonl" "$WORK/hard.jsonl"
expect 2 "same file" "parse --output = a hard link to --input" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/hard.jsonl" --output "$WORK/p.jsonl"
rc=0; "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.jsonl" >> "$WORK/p.jsonl" 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] || fail "parse with stdout appended to its input: exit $rc, want 2"
grep -q "standard output" "$WORK/e.txt" || fail "parse: stdout = input not explained"
rc=0; "$TALLY_BIN" parse --parser spatialeval-strict --output "$WORK/p.jsonl" < "$WORK/p.jsonl" 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] || fail "parse --output = its stdin: exit $rc, want 2"
cmp -s "$WORK/p.jsonl" "$WORK/p.orig" || fail "parse changed its input"
# --output goes through a temporary file: a failed run leaves no output and no temporary file
printf 'not json\n' >> "$WORK/p.jsonl"
rc=0; "$TALLY_BIN" parse --parser spatialeval-strict --strict-input --input "$WORK/p.jsonl" --output "$WORK/r.jsonl" 2> /dev/null || rc=$?
[ "$rc" = 3 ] || fail "parse --strict-input on bad input: exit $rc, want 3"
[ ! -e "$WORK/r.jsonl" ] || fail "a failed parse left its output"
ls "$WORK"/r.jsonl.tmp-* > /dev/null 2>&1 && fail "a failed parse left its temporary file"
"$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.jsonl" --output "$WORK/r.jsonl" 2> /dev/null
[ "$(wc -l < "$WORK/r.jsonl")" = 2 ] || fail "parse --output: want 2 lines"
ls "$WORK"/r.jsonl.tmp-* > /dev/null 2>&1 && fail "parse left its temporary file"

# ---- tally run: --out or "output" naming an input ----
for f in items.jsonl answers.jsonl job.json; do
  expect 2 "same file" "run --out $f" -- "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/$f" --quiet
  same_inputs "run --out $f"
  grep -q "$WORK/$f" "$WORK/e.txt" || fail "run --out $f: the path is not named"
done
sed "s#$WORK/out.h5#$WORK/answers.jsonl#" "$WORK/job.json" > "$WORK/job2.json"
expect 2 "an answers file" "job output = answers" -- "$TALLY_BIN" run "$WORK/job2.json" --quiet
same_inputs "job output = answers"
ln -s "$WORK/items.jsonl" "$WORK/items.h5"
expect 2 "same file" "run --out symlink to the items" -- "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/items.h5" --quiet
same_inputs "run --out symlink"
rc=0; "$TALLY_BIN" run "$WORK/job.json" --quiet >> "$WORK/answers.jsonl" 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] || fail "run with stdout appended to an answers file: exit $rc, want 2"
same_inputs "run stdout = answers"
# a study whose input is the run's output
cat > "$WORK/job3.json" <<JOB
{"name": "s", "output": "$WORK/study.h5",
 "studies": [{"name": "st", "input": "$WORK/study.h5", "human": "human", "metrics": ["lave"], "resamples": 10}]}
JOB
: > "$WORK/study.h5"
expect 2 "study 'st'" "study input = run output" -- "$TALLY_BIN" run "$WORK/job3.json" --quiet
[ -e "$WORK/study.h5" ] && [ ! -s "$WORK/study.h5" ] || fail "the study's input was replaced"

# ---- tally correlate --out = --input ----
expect 2 "same file" "correlate --out = --input" -- "$TALLY_BIN" correlate --input "$WORK/vqa_judgments.csv" --human human --metrics lave --resamples 10 --out "$WORK/vqa_judgments.csv"
same_inputs "correlate --out = --input"

# ---- outputs that cannot be written: before any work ----
mkdir "$WORK/adir"
expect 2 "is a directory" "run --out a folder" -- "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/adir" --quiet
[ ! -e "$WORK/adir.journal" ] && [ -z "$(ls "$WORK/adir")" ] || fail "run --out a folder did work"
expect 2 "is a directory" "correlate --out a folder" -- "$TALLY_BIN" correlate --input "$WORK/vqa_judgments.csv" --human human --metrics lave --out "$WORK/adir/"
expect 2 "is a directory" "parse --output a folder" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.orig" --output "$WORK/adir"
expect 2 "does not exist" "run --out in a missing folder" -- "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/nope/o.h5" --quiet
# an input that can be read once (a named pipe, a process substitution): refused before it is
# opened (a run reads its inputs again; the pipes below have no writer, so opening one would hang)
mkfifo "$WORK/ans.fifo"
sed "s#\"$WORK/answers.jsonl\"#\"$WORK/ans.fifo\"#" "$WORK/job.json" > "$WORK/jobfifo.json"
grep -q ans.fifo "$WORK/jobfifo.json" || fail "the FIFO job was not made"
expect 2 "is a pipe or a device" "run with a FIFO answers file" -- timeout -k 5 60 "$TALLY_BIN" run "$WORK/jobfifo.json" --out "$WORK/f.h5" --quiet
grep -q "an answers file '$WORK/ans.fifo'" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the FIFO answers file is not named"; }
expect 2 "is a pipe or a device" "run <(job)" -- timeout -k 5 60 bash -c '"$0" run <(cat "$1") --out "$2" --quiet' "$TALLY_BIN" "$WORK/job.json" "$WORK/f.h5"
[ ! -e "$WORK/f.h5" ] && [ ! -e "$WORK/f.h5.journal" ] || fail "a run with a FIFO input wrote something"
expect 2 "does not exist" "correlate --out in a missing folder" -- "$TALLY_BIN" correlate --input "$WORK/vqa_judgments.csv" --human human --metrics lave --out "$WORK/nope/o.h5"
mkdir "$WORK/ro"
ro_ok=0
if [ "$(id -u)" = 0 ]; then
  mount -t tmpfs -o ro,size=1m tmpfs "$WORK/ro" 2>/dev/null && ro_ok=1
  [ "$ro_ok" = 1 ] && trap 'umount -l "$WORK/ro" 2>/dev/null; rm -rf "$WORK"' EXIT
else
  chmod 555 "$WORK/ro" && ro_ok=1
fi
if [ "$ro_ok" = 1 ]; then
  expect 2 "not writable" "run --out in a read-only folder" -- "$TALLY_BIN" run "$WORK/job.json" --out "$WORK/ro/o.h5" --quiet
else
  SKIPPED_PART="the read-only folder case: cannot make a read-only folder here"
fi

# ---- one run per output ----
sed -e 's#"name": "safety"#"name": "slow", "engine": {"type": "replay", "latency_ms": 500}#' "$WORK/job.json" > "$WORK/slow.json"
"$TALLY_BIN" run "$WORK/slow.json" --quiet > "$WORK/first.txt" 2>&1 &
FIRST=$!
for _ in $(seq 100); do [ -e "$WORK/out.h5.part" ] && break; sleep 0.05; done
[ -e "$WORK/out.h5.lock" ] || fail "the first run holds no lock"
expect 2 "being written by another tally run" "second run on a held output" -- "$TALLY_BIN" run "$WORK/slow.json" --quiet
grep -q "pid $FIRST" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the holder's pid is not named"; }
grep -q "host $(hostname)" "$WORK/e.txt" || fail "the holder's host is not named"
expect 2 "being written by another tally run" "second run with --break-lock on a live lock" -- "$TALLY_BIN" run "$WORK/slow.json" --quiet --break-lock
[ -e "$WORK/out.h5.part" ] || fail "the second run removed the first one's .part file"
ls "$WORK"/out.h5.journal/*.jsonl > /dev/null 2>&1 || fail "the second run removed the first one's journal"
wait "$FIRST" || { cat "$WORK/first.txt"; fail "the first run failed after a second one was refused"; }
[ -s "$WORK/out.h5" ] && [ ! -e "$WORK/out.h5.lock" ] || fail "the first run did not finish cleanly"

# a finished output is replaced only with --force (exit 2 naming it and --force otherwise)
sums > "$WORK/sums.txt"
cp "$WORK/out.h5" "$WORK/out.first"
expect 2 "exists" "rerun over a finished output" -- "$TALLY_BIN" run "$WORK/job.json" --quiet
grep -q -- "--force" "$WORK/e.txt" && grep -q "$WORK/out.h5" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the refusal names neither the output nor --force"; }
cmp -s "$WORK/out.h5" "$WORK/out.first" || fail "a refused rerun changed the finished output"
expect 0 "" "rerun with --force" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --force

# stale locks: a dead pid on this host (taken over with a notice); another host (--break-lock);
# a live pid whose fcntl lock is free (never)
now=$(date +%s)
/bin/true & DEAD=$!; wait $DEAD  # a pid that has just ended
printf 'tally output lock\nhost=%s\npid=%s\nstarted=x\nstarted_epoch=%s\n' "$(hostname)" "$DEAD" "$now" > "$WORK/out.h5.lock"
expect 0 "took over the stale lock" "stale lock (dead pid on this host)" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --force
grep -q "no longer running" "$WORK/e.txt" || { cat "$WORK/e.txt"; fail "the notice does not say why the lock is stale"; }
[ "$(grep -c . "$WORK/e.txt")" = 1 ] || { cat "$WORK/e.txt"; fail "the takeover notice is not one line"; }
[ ! -e "$WORK/out.h5.lock" ] || fail "lock left after the run"
printf 'tally output lock\nhost=elsewhere-node-17\npid=4242\nstarted=x\nstarted_epoch=%s\n' "$now" > "$WORK/out.h5.lock"
expect 2 "another host" "lock from another host" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --force
grep -q -- "--break-lock" "$WORK/e.txt" || fail "no hint to --break-lock"
[ -e "$WORK/out.h5.lock" ] || fail "a lock from another host was removed without --break-lock"
expect 0 "took over" "--break-lock on a lock from another host" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --break-lock --force
sleep 60 & LIVE=$!
printf 'tally output lock\nhost=%s\npid=%s\nstarted=x\nstarted_epoch=%s\n' "$(hostname)" "$LIVE" "$(date +%s)" > "$WORK/out.h5.lock"
expect 2 "still running" "lock of a live process" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --break-lock --force
kill $LIVE; wait $LIVE 2>/dev/null || true
# a requeued SLURM job takes over the lock of its own earlier run
printf 'tally output lock\nhost=elsewhere\npid=4242\nstarted=x\nstarted_epoch=%s\nslurm_job_id=777\nslurm_restart_count=0\n' "$now" > "$WORK/out.h5.lock"
expect 2 "another host" "lock of another SLURM job" -- env SLURM_JOB_ID=778 SLURM_RESTART_COUNT=1 "$TALLY_BIN" run "$WORK/job.json" --quiet --force
expect 0 "earlier run of this SLURM job" "requeued SLURM job" -- env SLURM_JOB_ID=777 SLURM_RESTART_COUNT=1 "$TALLY_BIN" run "$WORK/job.json" --quiet --force
[ ! -e "$WORK/out.h5.lock" ] || fail "lock left after the requeued run"
# a run ended by SIGPIPE (`| head`) or SIGKILL leaves its lock: the next run on this host takes it over
rm -f "$WORK/out.h5"
rc=0; "$TALLY_BIN" run "$WORK/job.json" --quiet | true || rc=$? # the reader is gone before the summary
[ "$rc" = 141 ] || fail "the SIGPIPE case: exit $rc, not 141 (killed by SIGPIPE)"
[ -e "$WORK/out.h5.lock" ] || fail "the SIGPIPE case: no lock was left (the test proves nothing)"
expect 0 "took over the stale lock" "run after a SIGPIPE" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --force
"$TALLY_BIN" run "$WORK/slow.json" --quiet --force --keep-journal > /dev/null 2>&1 &
KILLED=$!
for _ in $(seq 100); do [ -e "$WORK/out.h5.part" ] && break; sleep 0.05; done
sleep 0.3; kill -9 $KILLED; wait $KILLED 2>/dev/null || true
[ -e "$WORK/out.h5.lock" ] || fail "the SIGKILL case: no lock was left"
expect 0 "took over the stale lock" "--resume after kill -9" -- "$TALLY_BIN" run "$WORK/slow.json" --quiet --resume
[ ! -e "$WORK/out.h5.lock" ] || fail "lock left after the resumed run"
# tally correlate --out holds the same lock
printf 'tally output lock\nhost=elsewhere\npid=4242\nstarted=x\nstarted_epoch=%s\n' "$now" > "$WORK/c.h5.lock"
expect 2 "another host" "correlate on a locked output" -- "$TALLY_BIN" correlate --input "$WORK/vqa_judgments.csv" --human human --metrics lave --resamples 10 --out "$WORK/c.h5"
[ ! -e "$WORK/c.h5" ] || fail "correlate wrote a locked output"
# an HDF5 output that is not a regular file (a FIFO, /dev/null, '-') is refused saying why, never
# replaced; a text output there (a FIFO, /dev/null) is written in place, and '-' is standard output
mkfifo "$WORK/fifo"
expect 2 "is not a regular file" "run --out FIFO" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --out "$WORK/fifo"
expect 2 "is not a regular file" "run --out /dev/null" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --out /dev/null
expect 2 "standard output" "run --out -" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --out -
expect 2 "is not a regular file" "correlate --out FIFO" -- "$TALLY_BIN" correlate --input "$WORK/vqa_judgments.csv" --human human --metrics lave --resamples 10 --out "$WORK/fifo"
expect 2 "standard output" "merge -o -" -- "$TALLY_BIN" merge "$WORK/out.h5" -o -
cat "$WORK/fifo" > "$WORK/fifo.got" & READER=$!
expect 0 "" "parse --output FIFO (written in place)" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.orig" --output "$WORK/fifo"
wait $READER
[ "$(wc -l < "$WORK/fifo.got")" = 1 ] || fail "parse --output FIFO: the reader got $(wc -l < "$WORK/fifo.got") lines, not 1"
cat "$WORK/fifo" > /dev/null & READER=$!
expect 0 "" "run --dry-run=FIFO (written in place)" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --dry-run="$WORK/fifo"
wait $READER
[ -p "$WORK/fifo" ] || fail "a FIFO given as the output was replaced"
cd "$WORK"
expect 0 "" "parse --output -" -- "$TALLY_BIN" parse --parser spatialeval-strict --input "$WORK/p.orig" --output -
[ ! -e "$WORK/-" ] || fail "parse --output - wrote a file named '-'"
grep -q '"status"' "$WORK/o.txt" || fail "parse --output -: nothing on standard output"
expect 0 "" "parse --input - --output /dev/null" -- sh -c '"$0" parse --parser spatialeval-strict --input - --output /dev/null < "$1"' "$TALLY_BIN" "$WORK/p.orig"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
expect 0 "standard output" "run --dry-run=-" -- "$TALLY_BIN" run "$WORK/job.json" --quiet --dry-run=-
[ ! -e "$WORK/-" ] || fail "--dry-run=- wrote a file named '-'"
"$PY" - "$TALLY_SRC/demo/vqa/items.jsonl" "$WORK/vqa_res.json" <<'PY'
import json, sys
items = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
json.dump([{"question_id": it.get("question_id", it.get("id")), "answer": it["answers"][0] if it.get("answers") else "x"} for it in items], open(sys.argv[2], "w"))
PY
expect 0 "" "score vqa --output -" -- "$TALLY_BIN" score vqa --items "$TALLY_SRC/demo/vqa/items.jsonl" --results "$WORK/vqa_res.json" --output -
[ ! -e "$WORK/-" ] || fail "score vqa --output - wrote a file named '-'"
grep -q '"overall"' "$WORK/o.txt" || fail "score vqa --output -: nothing on standard output"
cp "$WORK/o.txt" "$WORK/score_file.txt"
expect 0 "" "score vqa --results - (standard input)" -- sh -c '"$0" score vqa --items "$1" --results - --output - < "$2"' "$TALLY_BIN" "$TALLY_SRC/demo/vqa/items.jsonl" "$WORK/vqa_res.json"
cmp -s "$WORK/o.txt" "$WORK/score_file.txt" || fail "score vqa --results - differs from --results FILE"
# a file that can be read once (a named pipe; bash's <(...) is a pipe as /dev/fd/N) is read as
# the file is, though the results are read twice (before: a second open of the pipe waited for
# a writer that had gone, or read nothing: "not valid JSON")
rm -f "$WORK/res.fifo" && mkfifo "$WORK/res.fifo"
(cat "$WORK/vqa_res.json" > "$WORK/res.fifo" &)
expect 0 "" "score vqa --results FIFO" -- timeout -k 5 60 "$TALLY_BIN" score vqa --items "$TALLY_SRC/demo/vqa/items.jsonl" --results "$WORK/res.fifo" --output -
cmp -s "$WORK/o.txt" "$WORK/score_file.txt" || { cat "$WORK/e.txt"; fail "score vqa --results FIFO differs from --results FILE"; }
expect 0 "" "score vqa --items <(...) --results <(...)" -- timeout -k 5 60 bash -c '"$0" score vqa --items <(cat "$1") --results <(cat "$2") --output -' \
  "$TALLY_BIN" "$TALLY_SRC/demo/vqa/items.jsonl" "$WORK/vqa_res.json"
cmp -s "$WORK/o.txt" "$WORK/score_file.txt" || { cat "$WORK/e.txt"; fail "score vqa with process substitutions differs from files"; }
expect 2 "only one input" "score vqa with two inputs on standard input" -- "$TALLY_BIN" score vqa --items - --results -
expect 0 "" "score vqa --output /dev/null" -- "$TALLY_BIN" score vqa --items "$TALLY_SRC/demo/vqa/items.jsonl" --results "$WORK/vqa_res.json" --output /dev/null
[ -c /dev/null ] || fail "/dev/null is no longer a device"
cd - > /dev/null
same_inputs "end"
[ -z "${SKIPPED_PART:-}" ] || { echo "skipped: $SKIPPED_PART (every other part passed)"; exit 77; }
echo "e2e output safety: ok"
