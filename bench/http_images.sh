#!/usr/bin/env bash
# HTTP engine, memory with images: a VQA job whose every request carries an image (a base64 data
# URL in the body), through the openai engine at 64 in flight against the test server (50 ms).
# tally builds a unit's request body when it starts the unit; the driver starts units in step
# with the replies (at most the endpoints' limits, a quarter more and 16), so the bodies built and
# waiting, and the peak RSS, stay bounded whatever the job's size or chunk size.
#
# The job: N items (default 8,000: chunks of 1,000 units on one rank) over 30 files of
# IMG_KB KiB of random bytes each (default 256: 342 KiB of base64 per request), one model.
# Reported: requests/s, tally's CPU (user+sys) and peak RSS (GNU time), and the most requests
# it had built and waiting at once (the output's model_http attribute, max_waiting).
# TALLY_BIN=path runs another build of tally (e.g. an older commit's, for a before/after).
# usage: bench/http_images.sh [N [IMG_KB]]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-8000}"; KB="${2:-256}"
BUILD="${BUILD:-build}"
. bench/http_common.sh
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally tally-testserver > /dev/null
TALLY_BIN="${TALLY_BIN:-$BUILD/tally}"
T="$(mktemp -d)"; SRVPID=""
trap '[ -n "$SRVPID" ] && kill -9 "$SRVPID" 2>/dev/null; rm -rf "$T"' EXIT
/usr/bin/python3 - "$T" "$N" "$KB" <<'PY'
import json, os, sys
t, n, kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.mkdir(t + "/images")
for i in range(30):
    with open("%s/images/%d.jpg" % (t, i), "wb") as f:
        f.write(os.urandom(kb * 1024))
with open(t + "/items.jsonl", "w") as f:
    for i in range(n):
        f.write(json.dumps({"question_id": 1000 + i, "question": "What color is the bus?", "answers": ["yellow"] * 10,
                            "image": "images/%d.jpg" % (i % 30), "question_type": "what color is the",
                            "answer_type": "other"}) + "\n")
PY
http_server "$T"
cat > "$T/job.json" <<JOB
{"name": "images", "output": "$T/out.h5",
 "engines": {"model": {"type": "openai", "url": "http://127.0.0.1:$PORT/v1", "model": "m",
   "concurrency": {"initial": 64, "min": 64, "max": 64}, "timeouts": {"request_s": 60}}},
 "benchmarks": [{"benchmark": "vqa", "dataset": "bench", "items": "$T/items.jsonl", "models": ["m"]}]}
JOB
/usr/bin/time -f "%U %S %M" -o "$T/time" "$TALLY_BIN" run "$T/job.json" > /dev/null 2> "$T/err" || { cat "$T/err"; exit 1; }
kill -TERM "$SRVPID"; wait "$SRVPID" 2>/dev/null || true; SRVPID=""
read -r u s rss < "$T/time"
score=$(sed -n 's/.*score \([0-9.]*\) s.*/\1/p' "$T/err")
maxw=$(/usr/bin/python3 -c 'import h5py, json, sys; a = h5py.File(sys.argv[1], "r").attrs["model_http"]; print(json.loads(a).get("max_waiting", "-"))' "$T/out.h5")
awk -v n="$N" -v kb="$KB" -v sc="$score" -v u="$u" -v s="$s" -v rss="$rss" -v w="$maxw" 'BEGIN{
  printf "%d requests with a %d KiB image each, 64 in flight: %.0f req/s; tally CPU %.2f s (%.0f us a request), peak RSS %.0f MiB; at most %s requests built and waiting\n",
    n, kb, n / sc, u + s, 1e6 * (u + s) / n, rss / 1024, w }'
