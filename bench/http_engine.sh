#!/usr/bin/env bash
# HTTP engine benchmark: `tally run` with the openai engine on one rank against the project's test
# server (tools/testserver) answering every request after a fixed latency (50 ms), with the
# endpoint's concurrency pinned at IN_FLIGHT (64, then 256). The job is the SpatialEval demo's 36
# items x S seeds of one model: S x 36 units, one request each, all scored.
#
# Reported per IN_FLIGHT:
#  - requests/s over tally's score phase (its own log line) and that as a fraction of the ideal,
#    IN_FLIGHT / latency: a client that always has IN_FLIGHT requests outstanding;
#  - tally's CPU time per request: the process's user+sys (GNU time) minus that of the same job
#    answered by the replay engine (the same units scored, written and summarised, no HTTP), over
#    the requests; and the whole process's CPU per request, an upper bound;
#  - the server's CPU per request (from /proc/PID/stat) and the most requests it held at once (its
#    stats): it was not the limit when it held IN_FLIGHT requests and its CPU is a small part of
#    its wall time;
#  - the floor: bench/http_floor.c, a bare libcurl client with tally's event loop, POSTing the
#    same request body (the job's first, from --dry-run) the same number of times at the same
#    IN_FLIGHT against a fresh server, its CPU per request (libcurl + the kernel's loopback TCP,
#    nothing else), and tally's CPU over the replay twin as a multiple of it.
# CPU time on a shared machine moves with its load, run to run, so each point is measured REPS
# times in rounds (tally, its twin, the floor; then again), each round printed, and the medians
# of the CPU figures and of the per-round ratio to the floor printed after them.
# Where the cores allow (2 or more, and taskset), the server runs on the last core and the clients
# (tally, its twin, the floor) on core 0, as on a cluster node, where the inference server has
# cores of its own: sharing one, the server's wake-ups preempt the client about once a request
# (involuntary context switches) and what it leaves in that core's caches is charged to the
# client. PIN=0 leaves both to the scheduler.
# usage: [PIN=0|1] bench/http_engine.sh [SECONDS_PER_POINT [REPS]]    (default 12: units = 1.2 x
#        in_flight/latency x s; 3 rounds; PIN=1)
set -euo pipefail
cd "$(dirname "$0")/.."
SECS="${1:-12}"
REPS="${2:-3}"
LAT_MS=50 # bench/http_common.sh's server
BUILD="${BUILD:-build}"
. bench/http_common.sh
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally tally-testserver http_floor > /dev/null
T="$(mktemp -d)"; SRVPID=""
trap '[ -n "$SRVPID" ] && kill -9 "$SRVPID" 2>/dev/null; rm -rf "$T"' EXIT
SRV_PIN=""; CLI_PIN=""; placement="server and client where the scheduler puts them"
if [ "${PIN:-1}" = 1 ] && [ "$(nproc)" -ge 2 ] && command -v taskset > /dev/null; then
  SRV_PIN="taskset -c $(($(nproc) - 1))"; CLI_PIN="taskset -c 0"
  placement="server on core $(($(nproc) - 1)), clients on core 0"
fi
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); latency ${LAT_MS} ms; $placement"
TCK=$(getconf CLK_TCK)
cpu_of() { awk -v t="$TCK" '{printf "%.3f", ($14 + $15) / t}' "/proc/$1/stat"; }
med() { sort -g | awk '{v[NR] = $1} END {printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for IN in 64 256; do
  S=$(awk -v i="$IN" -v l="$LAT_MS" -v s="$SECS" 'BEGIN{printf "%d", i / (l / 1000) * s / 36 + 1}')
  U=$((S * 36))
  : > "$T/rounds"
  for R in $(seq "$REPS"); do
    http_server "$T" --stats "$T/stats.json"
    http_jobs "$T" "$IN" "$S"
    rm -f "$T/http.h5" "$T/replay.h5"
    c0=$(cpu_of "$SRVPID")
    $CLI_PIN /usr/bin/time -f "%U %S %c" -o "$T/time.http" "$BUILD/tally" run "$T/http.json" > /dev/null 2> "$T/http.err" ||
      { cat "$T/http.err"; exit 1; }
    c1=$(cpu_of "$SRVPID")
    kill -TERM "$SRVPID"; wait "$SRVPID" 2>/dev/null || true; SRVPID=""
    $CLI_PIN /usr/bin/time -f "%U %S" -o "$T/time.replay" "$BUILD/tally" run "$T/replay.json" > /dev/null 2> "$T/replay.err" ||
      { cat "$T/replay.err"; exit 1; }
    http_server "$T"
    floor=$($CLI_PIN "$BUILD/bench/http_floor" "http://127.0.0.1:$PORT/v1/chat/completions" "$U" "$IN" "$T/body.json" |
            sed -n 's/.*CPU \([0-9.]*\) us per request/\1/p')
    kill -TERM "$SRVPID"; wait "$SRVPID" 2>/dev/null || true; SRVPID=""
    score=$(sed -n 's/.*score \([0-9.]*\) s.*/\1/p' "$T/http.err")
    maxin=$(/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["max_in_flight"], s["requests"])' "$T/stats.json")
    read -r hu hs hc < "$T/time.http"; read -r ru rs < "$T/time.replay"
    awk -v u="$U" -v sc="$score" -v in_="$IN" -v l="$LAT_MS" -v hu="$hu" -v hs="$hs" -v hc="$hc" -v ru="$ru" -v rs="$rs" \
        -v c0="$c0" -v c1="$c1" -v mx="$maxin" -v fl="$floor" -v r="$R" -v rf="$T/rounds" 'BEGIN{
      rps = u / sc; ideal = in_ / (l / 1000.0); split(mx, m, " ");
      over = 1e6 * ((hu + hs) - (ru + rs)) / u;
      printf "in flight %d, round %d: %d requests in %.2f s = %.0f req/s, %.1f%% of the ideal %.0f req/s\n", in_, r, u, sc, rps, 100 * rps / ideal, ideal;
      printf "  tally CPU per request: %.1f us over the replay twin (%.1f us for the whole process); %.2f involuntary context switches per request\n", over, 1e6 * (hu + hs) / u, hc / u;
      printf "  libcurl floor (bench/http_floor, same body, same in flight): %.1f us CPU per request; tally over its replay twin = %.2f x the floor, %.1f us above it\n", fl, over / fl, over - fl;
      printf "  test server: %.1f us CPU per request (%.1f%% of the score phase), at most %d requests held at once (%d received)\n", 1e6 * (c1 - c0) / m[2], 100 * (c1 - c0) / sc, m[1], m[2];
      printf "%.3f %.3f %.4f %.2f\n", over, fl, over / fl, 100 * rps / ideal >> rf }'
  done
  echo "in flight $IN, medians of $REPS rounds: tally $(cut -d' ' -f1 "$T/rounds" | med) us over its replay twin," \
       "floor $(cut -d' ' -f2 "$T/rounds" | med) us, tally / floor $(cut -d' ' -f3 "$T/rounds" | awk '{printf "%.4f\n", $1 * 100}' | med | awk '{printf "%.2f", $1 / 100}'), $(cut -d' ' -f4 "$T/rounds" | med)% of the ideal"
done
