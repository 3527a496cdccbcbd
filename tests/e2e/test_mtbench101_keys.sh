#!/usr/bin/env bash
# MT-Bench-101 replay keys as people write them (issue 27), on files generated from demo/mtbench101:
#  1. answers and judgments keyed by "turn_id" (the dialogue's 1-based turn, OpenCompass's name;
#     turn 1 of FR CR AR SA SC CM is context only, so their turn_id starts at 2) give the same
#     summary and tables as the demo's "turn" (judged-turn index, from 0) lines; a file giving both,
#     in agreement, too; on 1 and 2 ranks alike;
#  2. integer "id"s (as the benchmark file writes them) run and judge every turn, same tables;
#  3. a line naming no unit is bad input with file:line, in answers and judgments alike:
#     "turn_id": 99, a context-only turn_id (1 of a CM dialogue), "turn" past the dialogue's
#     judged turns, "turn" and "turn_id" that disagree; the run counts them and goes on, and
#     --strict-input stops it (exit 3, nothing written);
#  4. 1-based numbers written as "turn" are reported at each dialogue's last turn, never dropped
#     silently.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
D="$TALLY_SRC/demo/mtbench101"
"$PY" - "$D" "$WORK" <<'PY' || fail "cannot write the variants"
import json, sys
D, W = sys.argv[1], sys.argv[2]
skip = {"FR", "CR", "AR", "SA", "SC", "CM"}
task = {str(json.loads(l)["id"]): json.loads(l)["task"] for l in open(D + "/dialogues.jsonl")}
for f in ("answers", "judgments"):
    rows = [json.loads(l) for l in open(D + "/%s.jsonl" % f)]
    def out(name, fn):
        with open("%s/%s_%s.jsonl" % (W, f, name), "w") as o:
            for r in rows:
                o.write(json.dumps(fn(dict(r))) + "\n")
    def tid(r):
        r["turn_id"] = r.pop("turn", 0) + 1 + (task[r["id"]] in skip)
        return r
    def both(r):
        r["turn_id"] = r.get("turn", 0) + 1 + (task[r["id"]] in skip)
        return r
    def intid(r):
        r["id"] = int(r["id"])
        return r
    def onebased(r):
        r["turn"] = r.get("turn", 0) + 1
        return r
    out("tid", tid); out("both", both); out("int", intid); out("1b", onebased)
    # bad lines appended to the turn_id file: past the dialogue, context-only, past the judged
    # turns, disagreeing
    r0 = {k: v for k, v in rows[0].items() if k not in ("turn", "id")}
    r0["seed"] = 7  # a cfg of its own, so a wrongly kept line would show in the tables
    bad = [dict(r0, id="1", turn_id=99), dict(r0, id="21", turn_id=1), dict(r0, id="1", turn=5),
           dict(r0, id="21", turn=0, turn_id=3)]
    with open("%s/%s_bad.jsonl" % (W, f), "w") as o:
        for r in rows:
            o.write(json.dumps(tid(dict(r))) + "\n")
        for b in bad:
            o.write(json.dumps(b) + "\n")
PY
job() { # job NAME ANSWERS JUDGMENTS
  sed "s#\"../demo/mtbench101/answers.jsonl\"#\"$2\"#; s#\"../demo/mtbench101/judgments.jsonl\"#\"$3\"#; s#\"\\.\\./demo#\"$TALLY_SRC/demo#" \
    "$TALLY_SRC/jobs/mtbench101-demo.json" > "$WORK/$1.json"
}
job base "$D/answers.jsonl" "$D/judgments.jsonl"
for v in tid both int 1b bad; do job $v "$WORK/answers_$v.jsonl" "$WORK/judgments_$v.jsonl"; done
run() { # run NAME RANKS
  mpirun -n "$2" --oversubscribe "$TALLY_BIN" run "$WORK/$1.json" --out "$WORK/$1.$2.h5" --quiet > "$WORK/$1.$2.txt" \
    2> "$WORK/$1.$2.err"
}
for v in base tid both int; do
  run $v 1 || { cat "$WORK/$v.1.err"; fail "$v: the run failed"; }
  sed -i "s#$WORK/$v.1.h5#OUT#" "$WORK/$v.1.txt"
  [ ! -s "$WORK/$v.1.err" ] || { cat "$WORK/$v.1.err"; fail "$v: problems reported"; }
  grep -q "^bad input lines: 0" "$WORK/$v.1.txt" || fail "$v: bad input lines"
  grep -q "188 judged turns" "$WORK/$v.1.txt" || { cat "$WORK/$v.1.txt"; fail "$v: not every turn judged"; }
done
run tid 2 || { cat "$WORK/tid.2.err"; fail "tid: the 2-rank run failed"; }
sed -i "s#$WORK/tid.2.h5#OUT#" "$WORK/tid.2.txt"
for v in tid both int; do
  cmp -s "$WORK/base.1.txt" "$WORK/$v.1.txt" || { diff "$WORK/base.1.txt" "$WORK/$v.1.txt"; fail "$v: another summary"; }
done
cmp -s "$WORK/tid.1.txt" "$WORK/tid.2.txt" || { diff "$WORK/tid.1.txt" "$WORK/tid.2.txt"; fail "tid: 2 ranks differ"; }
# the tables: every /metrics and /audit table equal; the items' ratings, statuses and responses
"$PY" - "$WORK" <<'PY' || fail "the tables differ"
import sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
W = sys.argv[1]
base = W + "/base.1.h5"
names = [t for t in tally_h5.tables(base) if t.startswith(("/metrics/mtbench101", "/audit/mtbench101"))]
assert len(names) >= 8, names
for v in ("tid.1", "both.1", "int.1", "tid.2"):
    for t in names:
        a, b = tally_h5.read_table(base, t), tally_h5.read_table("%s/%s.h5" % (W, v), t)
        assert a.equals(b), (v, t)
    a, b = tally_h5.read_table(base, "/items/mtbench101"), tally_h5.read_table("%s/%s.h5" % (W, v), "/items/mtbench101")
    for c in ("model", "seed", "id", "turn", "response", "judgment", "rating", "status", "rule"):
        assert a[c].equals(b[c]), (v, c)
print("turn_id, both keys, integer ids and 2 ranks: %d tables equal" % len(names))
# the summary's counts, re-computed from the turns; its CIs hold their estimates
it = tally_h5.read_table(base, "/items/mtbench101")
sm = tally_h5.read_table(base, "/metrics/mtbench101/summary")
for r in sm.itertuples():
    t = it[it.model == r.model]
    miss = int(((t.status == "missing") & (t.rule != "no_judgment")).sum())
    ee = int((t.status == "engine_error").sum())
    ok = int((t.status == "ok").sum())
    want = (len(t), len(t) - miss - ee, miss, len(t) - miss - ee - ok, ee)
    assert (r.n, r.answered, r.missing, r.unparsed, r.engine_error) == want, (r.model, want)
    assert r.ci_lo <= r.Avg <= r.ci_hi and r.ci_hi - r.ci_lo > 0.1, r
    assert r.std == r.std and r.n_seeds == 2, r
seeds = tally_h5.read_table(base, "/metrics/mtbench101/across_seeds")
ex = seeds[seeds.policy == "exclude"]
assert len(ex) > 0 and all(ex.ci_lo <= ex["mean"] + 1e-9) and all(ex["mean"] <= ex.ci_hi + 1e-9), "a CI misses its mean"
print("summary counts re-computed; every exclude CI holds its mean")
PY
# 3. bad lines: reported with file:line, counted, the good lines run
run bad 1 || { cat "$WORK/bad.1.err"; fail "bad: the run failed"; }
n=$(wc -l < "$D/answers.jsonl"); m=$(wc -l < "$D/judgments.jsonl")
for f in "answers_bad.jsonl:$((n + 1)): field 'turn_id' is 99: dialogue 1 (GR) has 2 turns" \
         "answers_bad.jsonl:$((n + 2)): field 'turn_id' is 1: turn 1 of a CM dialogue is context only" \
         "answers_bad.jsonl:$((n + 3)): field 'turn' is 5 but item '1' has 2 judged turns" \
         "answers_bad.jsonl:$((n + 4)): fields 'turn' (0: the judged-turn index, from 0) and 'turn_id' (3" \
         "judgments_bad.jsonl:$((m + 1)): field 'turn_id' is 99" \
         "judgments_bad.jsonl:$((m + 2)): field 'turn_id' is 1: turn 1 of a CM dialogue is context only" \
         "judgments_bad.jsonl:$((m + 3)): field 'turn' is 5 but" \
         "judgments_bad.jsonl:$((m + 4)): fields 'turn' (0"; do
  grep -qF "$WORK/$f" "$WORK/bad.1.err" || { cat "$WORK/bad.1.err"; fail "not reported: $f"; }
done
grep -q "^bad input lines: 8" "$WORK/bad.1.txt" || { cat "$WORK/bad.1.txt"; fail "the bad lines are not counted"; }
grep -q "188 judged turns" "$WORK/bad.1.txt" || { cat "$WORK/bad.1.txt"; fail "bad lines made units"; }
for f in answers judgments; do # --strict-input stops at the first (the good lines are the turn_id file)
  job strict_$f "$WORK/answers_$([ $f = answers ] && echo bad || echo tid).jsonl" \
    "$WORK/judgments_$([ $f = judgments ] && echo bad || echo tid).jsonl"
  rc=0; "$TALLY_BIN" run "$WORK/strict_$f.json" --out "$WORK/strict_$f.h5" --quiet --strict-input > /dev/null \
    2> "$WORK/strict_$f.err" || rc=$?
  [ "$rc" = 3 ] && [ ! -e "$WORK/strict_$f.h5" ] && grep -qF "${f}_bad.jsonl:" "$WORK/strict_$f.err" ||
    { cat "$WORK/strict_$f.err"; fail "--strict-input with a bad $f line: exit $rc"; }
done
# 4. 1-based numbers in "turn": the last turn of each dialogue is out of range, and says so
run 1b 1 || true
grep -qF "answers_1b.jsonl:2: field 'turn' is 2 but item '1' has 2 judged turns" "$WORK/1b.1.err" &&
  grep -q "the dialogue's turn, from 1, is 'turn_id'" "$WORK/1b.1.err" || { head -3 "$WORK/1b.1.err"; fail "1-based turn"; }
echo "e2e mtbench101 keys: ok"
