#!/usr/bin/env bash
# The real lm-evaluation-harness MATH file (../shared/data/harness-outputs/lm-eval/
# samples_math_perturbed_full_*.jsonl: a generate_until task scored by exact_match; lm-eval's
# results say 0.0) re-scored by the gen module in one `tally run`, the job naming the file for
# both answers and items: 10 items scored; the audit /audit/harness/gen sets lm-eval's
# exact_match beside tally's exact mode item by item: 0.000 reproduced, 0 disagreements; on 2
# ranks the audit is the same. Exit 77 without ../shared/data.
. "$(dirname "$0")/common.sh"
T="$TALLY_BIN"
W="$WORK"
D="$TALLY_SHARED_DATA/harness-outputs/lm-eval"
F=$(ls "$D"/samples_math_perturbed_full_*.jsonl 2> /dev/null | head -1) || true
[ -n "$F" ] || { echo "skipped: no $D/samples_math_perturbed_full_*.jsonl"; exit 77; }
grep -q '"exact_match,none": 0.0,' "$D"/results_*.json || fail "the real results no longer say exact_match 0.0"
cat > "$W/j.json" <<JOB
{"output": "$W/o.h5", "benchmarks": [{"benchmark": "gen",
  "answers": {"format": "lm-eval", "path": "$F"}, "items": {"format": "lm-eval", "path": "$F"}}]}
JOB
"$T" run "$W/j.json" > "$W/o.out" 2> "$W/o.err" || { cat "$W/o.err"; fail "the run failed"; }
grep -q "(items): 10 lines, 0 rejected" "$W/o.err" || { cat "$W/o.err"; fail "want 10 items"; }
grep -q "(answers): 10 lines, 10 matched, 0 rejected" "$W/o.err" || { cat "$W/o.err"; fail "want 10 answers matched"; }
grep -q "^gen: 10 items in 1 task x 1 model/seed configs = 10 units" "$W/o.out" || { cat "$W/o.out"; fail "want 10 units"; }
want="lm-eval exact_match 0.000, tally exact 0.000 over 10 units: 0 flips up, 0 down; agree 1.000"
grep -qF "$want" "$W/o.out" || { cat "$W/o.out"; fail "no audit line '$want'"; }
if "$PY" -c "import h5py" 2> /dev/null; then
  "$PY" - "$W/o.h5" <<'PY' || fail "/audit/harness/gen"
import h5py, sys
f = h5py.File(sys.argv[1], "r")
col = lambda t, c: [x.decode() if isinstance(x, bytes) else x for x in f[t][c][()]]
h = "/audit/harness/gen"
assert col(h, "harness") == ["lm-eval"] and col(h, "tally_mode") == ["exact"], (col(h, "harness"), col(h, "tally_mode"))
assert list(col(h, "n")) == [10] and col(h, "agree") == [1.0], (col(h, "n"), col(h, "agree"))
assert col(h, "harness_accuracy") == [0.0] and col(h, "tally_accuracy") == [0.0]
it = "/items/gen"
assert len(col(it, "id")) == 10 and sum(col(it, "correct_exact")) == 0
PY
fi
if command -v mpirun > /dev/null; then
  sed "s#$W/o.h5#$W/o2.h5#" "$W/j.json" > "$W/j2.json"
  mpirun --allow-run-as-root --oversubscribe -np 2 "$T" run "$W/j2.json" --quiet > "$W/o2.out" 2> "$W/o2.err" ||
    { cat "$W/o2.err"; fail "the run on 2 ranks failed"; }
  grep -qF "$want" "$W/o2.out" || { cat "$W/o2.out"; fail "2 ranks: no audit line '$want'"; }
  if command -v h5diff > /dev/null; then h5diff "$W/o.h5" "$W/o2.h5" /audit > /dev/null || fail "/audit differs on 2 ranks"; fi
fi
echo "gen: the real MATH file re-scored; lm-eval's 0.0 reproduced by exact, 0 disagreements"
