#!/usr/bin/env bash
# MT-Bench-101 end to end (replay for both stages):
#  1. the demo job (jobs/mtbench101-demo.json: 26 dialogues written for the project, two models,
#     two seeds, judge outputs with the failure cases) prints the same summary and writes the
#     same tables on 1, 2 and 4 ranks; its tables equal an independent re-computation from the
#     turns table (mtbench101_check.py);
#  2. killed (SIGKILL, whole job) while judging, --resume finishes it on 4 ranks with no
#     generation asked again, and its tables equal the uninterrupted run's;
#  3. bad input (an empty history, a non-string turn, an unknown task, a duplicate id, a
#     single-turn dialogue of a skip-first task, a line that is not JSON): each reported with
#     file:line and counted, and the run goes on with the good dialogues;
# The judge prompts against OpenCompass's golden vectors (../shared/data) are
# e2e_test_mtbench101_prompts (tests/e2e/test_mtbench101_prompts.sh), skipped without the data.
. "$(dirname "$0")/common.sh"
need_python
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
JOB="$TALLY_SRC/jobs/mtbench101-demo.json"

# 1. ranks
for n in 1 2 4; do
  mpirun -n $n --oversubscribe "$TALLY_BIN" run "$JOB" --out "$WORK/d$n.h5" --quiet > "$WORK/d$n.txt" 2> "$WORK/d$n.err" ||
    { cat "$WORK/d$n.err"; fail "the demo failed on $n rank(s)"; }
  sed -i "s#$WORK/d$n.h5#OUT#" "$WORK/d$n.txt"
done
# the summary table: model variant policy seeds Avg [95% CI] CM .. PI (13 tasks) std n answered missing unparsed engine_error
grep -Eq "^demo-chat-a +golden +exclude +2 +8\.231 \[[0-9.]+, [0-9.]+\]( +[0-9]\.[0-9]{2}){13} +0\.163 +94 +94 +0 +0 +0$" "$WORK/d1.txt" ||
  { cat "$WORK/d1.txt"; fail "no model table (n answered missing unparsed engine_error seeds Avg std CI) in the summary"; }
grep -Eq "^demo-chat-b +golden +fail +2 +5\.981 \[[0-9.]+, [0-9.]+\]( +[0-9]\.[0-9]{2}){13} +[0-9.]+ +94 +93 +1 +4 +0$" "$WORK/d1.txt" || { cat "$WORK/d1.txt"; fail "demo-chat-b's counts"; }
grep -Eq "^demo-chat-a +golden +exclude +2 +8\.231 \[[0-9.]+, [0-9.]+\] +8\.00 " "$WORK/d1.txt" || { cat "$WORK/d1.txt"; fail "no task table in the summary"; }
grep -q " perceptivity " "$WORK/d1.txt" && grep -q " adaptability " "$WORK/d1.txt" && ! grep -q "percepti " "$WORK/d1.txt" ||
  { cat "$WORK/d1.txt"; fail "group names cut short"; }
grep -q "^model comparison (beyond the original protocol)" "$WORK/d1.txt" || fail "no comparison in the summary"
grep -q "0.904 \[0.808, 0.981\]" "$WORK/d1.txt" || fail "no comparison CI in the summary"
grep -q "turns without a rating: 5 of 188; dialogues without a score under policy fail: 5 of 104" "$WORK/d1.txt" ||
  fail "unrated turns are not counted in the summary"
for n in 2 4; do
  cmp -s "$WORK/d1.txt" "$WORK/d$n.txt" || { diff "$WORK/d1.txt" "$WORK/d$n.txt"; fail "the summary differs on $n ranks"; }
  for obj in /items /metrics /audit; do
    h5diff "$WORK/d1.h5" "$WORK/d$n.h5" "$obj" > /dev/null || fail "$obj differs on $n ranks"
  done
done
"$PY" "$TALLY_SRC/tests/e2e/mtbench101_check.py" "$WORK/d1.h5" || fail "the tables disagree with the re-computation"
# the failure cases of the demo's judge outputs, by status (primary parser)
"$PY" - "$WORK/d1.h5" <<'PY' || fail "the demo's failure cases are not where they should be"
import sys
sys.path.insert(0, __import__("os").environ["TALLY_SRC"] + "/tools")
import tally_h5
t = tally_h5.read_table(sys.argv[1], "/items/mtbench101")
st = {}
for i in range(len(t["id"])):
    st[(t["model"][i], int(t["seed"][i]), t["id"][i], int(t["turn"][i]))] = (t["status"][i], t["rule"][i], float(t["rating"][i]))
want = {("demo-chat-b", 0, "3", 2): "no_answer", ("demo-chat-b", 0, "9", 1): "out_of_range",
        ("demo-chat-b", 1, "5", 2): "unterminated_think", ("demo-chat-b", 0, "24", 1): "missing",
        ("demo-chat-b", 0, "14", 2): "no_answer"}
for k, s in want.items():
    assert st[k][0] == s, (k, st[k], s)
assert st[("demo-chat-a", 0, "1", 2)][2] == 3.0, st[("demo-chat-a", 0, "1", 2)]   # the quoted example is not read
assert st[("demo-chat-a", 1, "12", 1)][2] == 9.0                                  # the judge's reasoning is dropped
assert st[("demo-chat-b", 1, "19", 2)][2] == 7.0                                  # Rating: [[n]] beats a later bare [[n]]
assert st[("demo-chat-a", 0, "22", 2)][2] == 8.0                                  # [[ 8 ]]
s = tally_h5.read_table(sys.argv[1], "/metrics/mtbench101/settings")
kv = dict(zip(s["key"], s["value"]))
assert kv["judge_temperature"] == "0.6" and kv["reference"] == "golden" and kv["system_prompt"] == "", kv
print("demo failure cases: ok")
PY

# 2. killed while judging, resumed on 4 ranks
cat > "$WORK/slow.json" <<JOB
{"name": "mtb-slow", "output": "$WORK/slow.h5",
 "engines": {"model": {"type": "replay"}, "judge": {"type": "replay", "latency_ms": 300}},
 "benchmarks": [{"benchmark": "mtbench101", "items": "$TALLY_SRC/demo/mtbench101/dialogues.jsonl",
   "answers": "$TALLY_SRC/demo/mtbench101/answers.jsonl", "judgments": "$TALLY_SRC/demo/mtbench101/judgments.jsonl",
   "parsers": ["mtbench101", "mtbench101-opencompass", "fastchat", "judgearena"],
   "comparison": {"resamples": 2000, "seed": 0, "level": 0.95}}]}
JOB
stage_lines() { cat "$WORK"/slow.h5.journal/*.jsonl 2>/dev/null | grep -c "\"st\":$1," || true; }
setsid mpirun -n 2 --oversubscribe "$TALLY_BIN" run "$WORK/slow.json" --quiet > /dev/null 2>&1 &
PG=$!
for _ in $(seq 150); do [ "$(stage_lines 1)" -ge 10 ] && break; sleep 0.2; done
kill_session "$PG"
g=$(stage_lines 0); j=$(stage_lines 1)
echo "killed with $g generations and $j judgments journaled"
[ "$j" -ge 10 ] || fail "no judgments were journaled within 30 s"
[ "$g" -gt "$j" ] || fail "not killed while judging (generations $g, judgments $j)"
[ ! -e "$WORK/slow.h5" ] || fail "the killed run left a final output"
mpirun -n 4 --oversubscribe "$TALLY_BIN" run "$WORK/slow.json" --resume --break-lock --quiet > "$WORK/resumed.txt" ||
  fail "resume on 4 ranks failed"
for obj in /items /metrics /audit; do
  h5diff "$WORK/d1.h5" "$WORK/slow.h5" "$obj" > /dev/null || fail "$obj of the resumed run differs"
done
"$PY" - "$WORK/slow.h5" "$g" <<'PY' || fail "a stage was asked twice after the resume"
import sys, h5py
a = h5py.File(sys.argv[1], "r").attrs
u, r0, c0 = int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"])
c1, r1, s1 = int(a["judge_calls"]), int(a["judge_resumed"]), int(a["judge_skipped"])
print("units %d; generate: calls %d, from the journal %d; judge: calls %d, from the journal %d, skipped %d"
      % (u, c0, r0, c1, r1, s1))
assert r0 > 0 and r1 > 0 and c0 + r0 == u and c1 + r1 + s1 == u
assert r0 >= int(sys.argv[2]) - 2, "journaled generations were asked again"
PY

# 3. bad input
cat > "$WORK/bad.jsonl" <<'EOF'
{"task": "GR", "id": 1, "history": [{"user": "Is 7 prime?", "bot": "Yes."}]}
{"task": "GR", "id": 2, "history": []}
{"task": "IC", "id": 3, "history": [{"user": 42, "bot": "ok"}]}
{"task": "XX", "id": 4, "history": [{"user": "hi", "bot": "hello"}]}
{"task": "GR", "id": 1, "history": [{"user": "again", "bot": "again"}]}
{"task": "SA", "id": 5, "history": [{"user": "only one turn", "bot": "so nothing to judge"}]}
not json
{"task": "PI", "id": 6, "history": [{"user": "I like tea.", "bot": "Green or black?"}]}
EOF
cat > "$WORK/bad_ans.jsonl" <<'EOF'
{"id": "1", "model": "m", "turn": 0, "response": "Yes, 7 is prime."}
{"id": "6", "model": "m", "turn": 0, "response": "Which do you prefer?"}
EOF
cat > "$WORK/bad_judg.jsonl" <<'EOF'
{"id": "1", "model": "m", "turn": 0, "response": "Rating: [[11]]"}
{"id": "6", "model": "m", "turn": 0, "response": "Good question, no score."}
EOF
cat > "$WORK/bad.json" <<JOB
{"name": "mtb-bad", "output": "$WORK/bad.h5", "limits": {"max_rejected": 1},
 "benchmarks": [{"benchmark": "mtbench101", "items": "$WORK/bad.jsonl",
                 "answers": "$WORK/bad_ans.jsonl", "judgments": "$WORK/bad_judg.jsonl"}]}
JOB
"$TALLY_BIN" run "$WORK/bad.json" > "$WORK/bad.txt" 2> "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "a run with bad lines stopped"; }
for want in "bad.jsonl:2: .*history" "bad.jsonl:3: .*user" "bad.jsonl:4: .*unknown task" "bad.jsonl:5: duplicate dialogue id 1" \
            "bad.jsonl:6: .*no judged turn" "bad.jsonl:7: "; do
  grep -q "$want" "$WORK/bad.err" || { cat "$WORK/bad.err"; fail "no message '$want'"; }
done
grep -q "bad input lines: 6" "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "the bad lines are not counted"; }
grep -q "mtbench101 parse statuses: no_answer=1 out_of_range=1" "$WORK/bad.txt" || { cat "$WORK/bad.txt"; fail "the unrated judgments are not counted"; }
grep -q "dialogues without a score under policy fail: 2 of 2" "$WORK/bad.txt" || fail "unscored dialogues are not counted"
# a typo in the job is an error, never an empty result
sed 's/"judgments"/"tasks": ["GRR"], "judgments"/' "$WORK/bad.json" > "$WORK/typo.json"
rc=0; "$TALLY_BIN" run "$WORK/typo.json" --force > /dev/null 2> "$WORK/typo.err" || rc=$?
[ "$rc" = 2 ] && grep -q "unknown task 'GRR'" "$WORK/typo.err" || { cat "$WORK/typo.err"; fail "an unknown task code was not refused (exit $rc)"; }
sed 's/"judgments"/"dialogues": [1, 99], "judgments"/' "$WORK/bad.json" > "$WORK/typo2.json"
rc=0; "$TALLY_BIN" run "$WORK/typo2.json" --force > /dev/null 2> "$WORK/typo2.err" || rc=$?
[ "$rc" = 2 ] && grep -q "names dialogue 99" "$WORK/typo2.err" || { cat "$WORK/typo2.err"; fail "an unknown dialogue id was not refused"; }

echo "e2e mtbench101: ok"
