#!/usr/bin/env bash
# Two stages, killed while judging: the test-only module test_judged (generate, then judge; both
# stages from replay files; TALLY_TEST_MODULES=1) on a small fixture made here. A 2-rank run whose
# judge engine has 200 ms of simulated latency is killed with SIGKILL (whole job) once judgments
# are being journaled and generations are ahead of them; --resume on 4 ranks finishes it. The
# datasets equal an uninterrupted 1-rank run's, and per stage engine calls + stages taken from
# the journal (+ judge stages skipped: nothing to judge) == units: no generation is asked again.
# Then one job with two benchmarks (SpatialEval's demo and test_judged) writes both, and its
# SpatialEval tables equal the single-benchmark reference.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
export TALLY_TEST_MODULES=1
"$PY" - "$WORK" <<'PY'
import json, random, sys
w = sys.argv[1]
rnd = random.Random(3)
items = [{"id": "d%02d" % i, "question": "question %d" % i, "turns": 1 + i % 3} for i in range(40)]
with open(w + "/items.jsonl", "w") as f:
    for it in items: f.write(json.dumps(it) + "\n")
with open(w + "/answers.jsonl", "w") as a, open(w + "/judgments.jsonl", "w") as j:
    for m in ("model-a", "model-b"):
        for s in (0, 1):
            for it in items:
                for t in range(it["turns"]):
                    k = {"id": it["id"], "model": m, "seed": s, "turn": t}
                    r = rnd.random()
                    resp = None if r < 0.05 else "answer %s/%s/%d/%d" % (m, it["id"], s, t)
                    a.write(json.dumps(dict(k, response=resp)) + "\n")
                    if resp is None or r > 0.97: continue  # nothing to judge / a judgment never made
                    n = rnd.randint(1, 10)
                    txt = "Quoting the rubric: Rating: [[10]]. My verdict: Rating: [[%d]]" % n if r > 0.9 else "Rating: [[%d]]" % n
                    j.write(json.dumps(dict(k, response=txt)) + "\n")
PY
job() { # OUT JUDGE_LATENCY
  cat <<JOB
{"name": "judged", "output": "$1",
 "engines": {"model": {"type": "replay"}, "judge": {"type": "replay", "latency_ms": $2}},
 "benchmarks": [{"benchmark": "test_judged", "items": "$WORK/items.jsonl",
                 "answers": "$WORK/answers.jsonl", "judgments": "$WORK/judgments.jsonl"}]}
JOB
}
job "$WORK/ref.h5" 0 > "$WORK/ref.json"
job "$WORK/out.h5" 200 > "$WORK/job.json"
"$TALLY_BIN" run "$WORK/ref.json" --quiet > "$WORK/ref.txt" || fail "reference run failed"
grep -q "test_judged: model-a" "$WORK/ref.txt" || fail "no test_judged summary"

stage_lines() { cat "$WORK"/out.h5.journal/*.jsonl 2>/dev/null | grep -c "\"st\":$1," || true; }
setsid mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --quiet > /dev/null 2>&1 &
PG=$!
for _ in $(seq 100); do [ "$(stage_lines 1)" -ge 10 ] && break; sleep 0.2; done
kill_session "$PG"
g=$(stage_lines 0); j=$(stage_lines 1)
echo "killed with $g generations and $j judgments journaled"
[ "$j" -ge 10 ] || fail "no judgments were journaled within 20 s"
[ "$g" -gt "$j" ] || fail "not killed while judging (generations $g, judgments $j)"
[ ! -e "$WORK/out.h5" ] || fail "the killed run left a final output"
# distinct units whose generation is journaled: none of them may be asked again
gen_done=$(cat "$WORK"/out.h5.journal/*.jsonl | "$PY" -c '
import json, sys
k = set()
for l in sys.stdin:
    try: r = json.loads(l)
    except ValueError: continue
    if r.get("st") == 0 and "id" in r: k.add((r["m"], r["v"], r["s"], r["id"], r["t"]))
print(len(k))')
mpirun -n 4 --oversubscribe "$TALLY_BIN" run "$WORK/job.json" --resume --break-lock --quiet > /dev/null ||
  fail "resume on 4 ranks failed"
for obj in /items /metrics; do
  h5diff "$WORK/ref.h5" "$WORK/out.h5" "$obj" > /dev/null || fail "$obj differs from the uninterrupted run"
done
"$PY" - "$WORK/out.h5" "$gen_done" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1], "r"); a = f.attrs
u, r0, c0 = int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"])
c1, r1, s1 = int(a["judge_calls"]), int(a["judge_resumed"]), int(a["judge_skipped"])
print("units %d; generate: calls %d, from the journal %d; judge: calls %d, from the journal %d, skipped %d"
      % (u, c0, r0, c1, r1, s1))
assert r0 > 0 and r1 > 0, "nothing came from the journal"
assert c0 + r0 == u, "a generation was asked twice (or one was lost)"
assert c1 + r1 + s1 == u, "a judgment was asked twice (or one was lost)"
assert r0 == int(sys.argv[2]), "a journaled generation was asked again"
g = f["metrics/test_judged/dialogue_min"]
assert len(g["min_rating"]) > 0
PY

# two benchmarks in one job: one schedule, one file
D="$TALLY_SRC/demo/spatialeval"
cat > "$WORK/two.json" <<JOB
{"name": "two", "output": "$WORK/two.h5",
 "benchmarks": [{"benchmark": "spatialeval", "items": "$D/items.jsonl",
                 "answers": ["$D/answers.jsonl", {"path": "$D/reference_eval_output.jsonl", "model": "toy-vlm-c",
                             "seed": 0, "prompt_variant": "reason"}],
                 "parsers": ["strict", "pr3", "legacy"]},
                {"benchmark": "test_judged", "items": "$WORK/items.jsonl",
                 "answers": "$WORK/answers.jsonl", "judgments": "$WORK/judgments.jsonl"}]}
JOB
for n in 1 2; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$WORK/two.json" --out "$WORK/two$n.h5" --quiet > "$WORK/two.txt" ||
    fail "the two-benchmark job failed on $n rank(s)"
  for obj in /items/test_judged /metrics/test_judged; do
    h5diff "$WORK/ref.h5" "$WORK/two$n.h5" "$obj" > /dev/null || fail "$obj of the two-benchmark job differs ($n ranks)"
  done
done
grep -q "^spatialeval: 36 items" "$WORK/two.txt" || fail "no spatialeval summary"
grep -q "^test_judged: " "$WORK/two.txt" || fail "no test_judged summary"
"$TALLY_BIN" run "$TALLY_SRC/jobs/demo.json" --out "$WORK/demo.h5" --quiet > /dev/null
for obj in /items/spatialeval /metrics/spatialeval; do
  h5diff "$WORK/demo.h5" "$WORK/two1.h5" "$obj" > /dev/null || fail "$obj of the two-benchmark job differs from the demo's"
done
# the test module is unknown without TALLY_TEST_MODULES=1
rc=0; TALLY_TEST_MODULES= "$TALLY_BIN" run "$WORK/ref.json" --out "$WORK/x.h5" > /dev/null 2> "$WORK/e.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown benchmark 'test_judged' (known: spatialeval, mtbench101, vqa, mcq, gen)" "$WORK/e.txt" ||
  { cat "$WORK/e.txt"; fail "the test module was known without TALLY_TEST_MODULES=1 (exit $rc)"; }
echo "e2e judged: ok"
