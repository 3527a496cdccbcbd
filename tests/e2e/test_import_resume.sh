#!/usr/bin/env bash
# --resume of a job whose answers are another harness's file ({"format", "path"}, issue 31): the
# run converts the file into a fresh folder each time, so the journal must name the job as the
# user wrote it (driver.h job_as_written), not the converted copy. A 1-rank run (300 ms of
# simulated engine latency per answer) is stopped by SIGTERM midway (exit 4, journal kept);
# --resume finishes it taking the journaled units (engine calls + resumed = units), on 2 ranks
# when mpirun is present; /items equal an uninterrupted run's; the root attribute
# job_as_written holds the job file's own text; the bad record of the foreign file (a line cut
# short) is in /input_problems, naming the file and line, like a bad line of tally's own inputs.
. "$(dirname "$0")/common.sh"
need_python
T="$TALLY_BIN"
W="$WORK"
"$PY" - "$TALLY_SRC/demo/vqa/answers.jsonl" "$W" <<'PY'
import json, sys
src, w = sys.argv[1], sys.argv[2]
ans = [json.loads(l) for l in open(src) if l.strip()]
ans = [a for a in ans if a["model"] == "demo-vlm-a" and a["seed"] == 0]
with open(w + "/20250801_101010_samples_vqav2_demo.jsonl", "w") as f:
    for i, a in enumerate(ans):
        qid = int(a["id"].split(":")[1])
        f.write(json.dumps({"doc_id": i, "target": "x", "filtered_resps": a["response"], "input": "Q?",
                            "doc_hash": "0" * 64, "exact_match": 1.0,
                            "submission": {"question_id": qid, "answer": a["response"]}}) + "\n")
    f.write('{"doc_id": 99, "target": "cut short\n')  # a bad record: reported, counted, kept
json.dump({"results": {}, "model_name": "demo-vlm-a", "config": {"model_args": "pretrained=demo-vlm-a"}},
          open(w + "/20250801_101010_results.json", "w"))
PY
job() { # OUTPUT LATENCY_MS
  cat <<JOB
{"name": "lmms-resume", "output": "$1", "engines": {"model": {"type": "replay", "latency_ms": $2}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "demo", "items": "$TALLY_SRC/demo/vqa/items.jsonl",
   "answers": {"format": "lmms-eval", "path": "$W/20250801_101010_samples_vqav2_demo.jsonl", "id_prefix": "demo:"}}]}
JOB
}
job "$W/ref.h5" 0 > "$W/ref.json"
"$T" run "$W/ref.json" --quiet > /dev/null 2> "$W/ref.err" || { cat "$W/ref.err"; fail "the reference run failed"; }
job "$W/out.h5" 300 > "$W/job.json"
"$T" run "$W/job.json" --quiet > /dev/null 2> "$W/first.err" &
pid=$!
journaled() { cat "$W"/out.h5.journal/*.jsonl 2>/dev/null | grep -c '"id"' || true; }
for _ in $(seq 100); do [ "$(journaled)" -ge 5 ] && break; sleep 0.2; done
[ "$(journaled)" -ge 5 ] || fail "nothing was journaled within 20 s"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 4 ] || { cat "$W/first.err"; fail "the stopped run exited $rc, not 4"; }
[ -d "$W/out.h5.journal" ] || fail "the stopped run left no journal"
if command -v mpirun > /dev/null; then
  mpirun -n 2 --oversubscribe "$T" run "$W/job.json" --resume --quiet > /dev/null 2> "$W/resume.err"
else
  "$T" run "$W/job.json" --resume --quiet > /dev/null 2> "$W/resume.err"
fi || { cat "$W/resume.err"; fail "--resume of the importing job failed"; }
"$PY" - "$W/out.h5" "$W/job.json" <<'PY' || fail "the resumed run"
import h5py, json, sys
f = h5py.File(sys.argv[1], "r")
a = f.attrs
units, resumed, calls = int(a["units"]), int(a["units_resumed"]), int(a["engine_calls"])
print("units %d, from the journal %d, engine calls %d" % (units, resumed, calls))
assert resumed > 0, "nothing came from the journal"
assert calls + resumed == units, "a finished unit was asked again (or one was lost)"
w = a["job_as_written"]
w = w.decode() if isinstance(w, bytes) else w
assert json.loads(w) == json.load(open(sys.argv[2])), "job_as_written is not the job file"
p = f["/input_problems"]
files = [x.decode() for x in p["file"][()]]
lines = list(p["line"][()])
print("input problems:", list(zip(files, lines)))
assert len(files) == 1 and files[0].endswith("samples_vqav2_demo.jsonl") and lines[0] == 31, (files, lines)
PY
h5diff "$W/ref.h5" "$W/out.h5" /items > /dev/null || fail "/items differ from the uninterrupted run's"
echo "ok: an importing job stopped midway resumes from its journal"
