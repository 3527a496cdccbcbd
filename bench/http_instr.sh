#!/usr/bin/env bash
# HTTP engine, counted in instructions: the user-space instructions tally executes per request
# (valgrind's callgrind: every instruction of the process and its libraries, none of the
# kernel's), against the same for the bare libcurl client (bench/http_floor.c). Unlike CPU time,
# the counts do not move with the machine's load, so a change to the engine reads in them even
# on a noisy machine. The kernel's share is left out: tally and the floor make the same system
# calls per request (2 poll, 1 sendto, 1 recvfrom; `strace -c` shows it).
#
# The job: the SpatialEval demo's 36 items x S seeds of one model, one request each, with the
# endpoint's concurrency pinned at IN_FLIGHT, against the test server answering after 50 ms.
# Reported: instructions per request of
#  - tally with the openai engine (the whole process, start-up included),
#  - the same job answered by the replay engine (the same units scored, journaled, written),
#  - their difference: what the HTTP path costs tally;
#  - the floor (bench/http_floor: libcurl and nothing else), less its start-up (a run of one
#    request), as tally's twin cancels tally's,
#  and the difference less the floor: what tally adds above a bare libcurl client.
# Under valgrind tally runs some 50 times slower, so more replies arrive per wake-up than in a
# plain run: the per-wake-up costs (epoll_wait, the journal's write) weigh less here.
# usage: bench/http_instr.sh [SEEDS] [IN_FLIGHT]    (default 56 seeds = 2,016 requests, 64)
set -euo pipefail
cd "$(dirname "$0")/.."
S="${1:-56}"; IN="${2:-64}"
command -v valgrind > /dev/null || { echo "bench/http_instr.sh: valgrind is not installed (apt install valgrind)"; exit 77; }
BUILD="${BUILD:-build}"
. bench/http_common.sh
cmake -S . -B "$BUILD" > /dev/null && cmake --build "$BUILD" -j"$(nproc)" --target tally tally-testserver http_floor > /dev/null
T="$(mktemp -d)"; SRVPID=""
trap '[ -n "$SRVPID" ] && { kill -9 "$SRVPID"; wait "$SRVPID"; } 2>/dev/null; rm -rf "$T"' EXIT
U=$((S * 36))
http_server "$T"
http_jobs "$T" "$IN" "$S"
# instructions of one command under callgrind (its "I refs" line)
irefs() {
  valgrind --tool=callgrind --callgrind-out-file="$T/cg.out" "$@" > /dev/null 2> "$T/vg.err" || { cat "$T/vg.err"; exit 1; }
  sed -n 's/^==[0-9]*== I *refs: *\([0-9,]*\)$/\1/p' "$T/vg.err" | tr -d ,
}
http=$(irefs "$BUILD/tally" run "$T/http.json")
replay=$(irefs "$BUILD/tally" run "$T/replay.json")
floor=$(irefs "$BUILD/bench/http_floor" "http://127.0.0.1:$PORT/v1/chat/completions" "$U" "$IN" "$T/body.json")
# the floor's start-up (tally's cancels against its twin's): a run of one request
floor0=$(irefs "$BUILD/bench/http_floor" "http://127.0.0.1:$PORT/v1/chat/completions" 1 1 "$T/body.json")
echo "user-space instructions per request, $U requests at $IN in flight (callgrind):"
awk -v u="$U" -v h="$http" -v r="$replay" -v f="$floor" -v f0="$floor0" 'BEGIN{
  fr = (f - f0) / (u - 1);
  printf "  tally, openai engine: %.0f; the replay twin: %.0f; the HTTP path: %.0f\n", h / u, r / u, (h - r) / u;
  printf "  the libcurl floor: %.0f (%.0f with its start-up); tally above it: %.0f (%.2f x the floor)\n", fr, f / u, (h - r) / u - fr, (h - r) / u / fr }'
