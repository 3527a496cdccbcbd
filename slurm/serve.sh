#!/usr/bin/env bash
# serve.sh - one OpenAI-compatible inference server per GPU of this node, for tally's openai
# engine, inside a SLURM allocation (or on any machine).
#
#   slurm/serve.sh [options] -- COMMAND [ARGS...]   start the servers, wait until each is
#                                                   healthy, run COMMAND, stop the servers
#   slurm/serve.sh [options] --hold                 start, wait, then stay until signalled (one
#                                                   per node with srun, for multi-node jobs)
# Options:
#   --kind vllm|llamacpp|test   the server (default vllm): `vllm serve MODEL`, llama.cpp's
#                               `llama-server -m MODEL`, or tally-testserver (tests, no GPU)
#   --model M                   the model (a name or path; vllm and llamacpp need it)
#   --name N                    the served model name (vllm --served-model-name; default M)
#   --gpus N                    servers to start (default: the GPUs of CUDA_VISIBLE_DEVICES, else
#                               SLURM_GPUS_ON_NODE, else `nvidia-smi -L`)
#   --port-base P|auto          server i listens on 127.0.0.1:P+i; tally's "url":
#                               "http://127.0.0.1:{port}/v1" gives the rank of local rank i the
#                               server of GPU i. auto (the default): a block of ports derived
#                               from the SLURM job and step ids (20000-59999), moved on while any
#                               port of it is taken, so two jobs on one node never share a port.
#                               COMMAND gets TALLY_PORT_BASE=P, which tally's {port} follows
#                               (over the job's port_base)
#   --slots N                   llamacpp: requests served at once (-np N, default 16: tally's
#                               default concurrency), with --threads-http N+4 (llama-server
#                               holds one HTTP thread per kept-alive connection); vllm: no effect
#   --wait S                    seconds to wait for every server's /health (default 900)
#   --server-args "..."         more arguments for every server (e.g. "--max-num-seqs 256")
#   --log-dir D                 server logs (default ./serve-logs-$SLURM_JOB_ID or ./serve-logs)
# llamacpp servers start with -ngl 999 (every layer on the GPU) and --no-context-shift (a prompt
# over the context is an HTTP 400, which tally records, instead of being cut from its start);
# --server-args come last and override them.
# Server i runs with CUDA_VISIBLE_DEVICES set to the i-th visible GPU. A server must be the one
# answering its port: the port is checked free before it starts, and the server's PID alive after
# its health check. Exit: COMMAND's exit code;
# 3 when a server did not come up within --wait (its log's tail is printed), 2 for bad options.
# The servers are stopped (SIGTERM, then SIGKILL after 20 s) however this script ends.
set -uo pipefail
KIND=vllm MODEL="" NAME="" GPUS="" PORT_BASE=auto WAIT=900 SARGS="" HOLD=0 SLOTS=16
LOGDIR="./serve-logs${SLURM_JOB_ID:+-$SLURM_JOB_ID}"
die() { echo "serve.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --kind) KIND="${2:?}"; shift 2 ;;
    --model) MODEL="${2:?}"; shift 2 ;;
    --name) NAME="${2:?}"; shift 2 ;;
    --gpus) GPUS="${2:?}"; shift 2 ;;
    --port-base) PORT_BASE="${2:?}"; shift 2 ;;
    --wait) WAIT="${2:?}"; shift 2 ;;
    --slots) SLOTS="${2:?}"; shift 2 ;;
    --server-args) SARGS="${2?}"; shift 2 ;;
    --log-dir) LOGDIR="${2:?}"; shift 2 ;;
    --hold) HOLD=1; shift ;;
    --) shift; break ;;
    *) die "unknown option '$1' (see the header of $0)" ;;
  esac
done
[ "$HOLD" = 1 ] || [ $# -gt 0 ] || die "give a COMMAND after --, or --hold"
case "$KIND" in vllm|llamacpp|test) ;; *) die "--kind takes vllm, llamacpp or test, not '$KIND'" ;; esac
[ "$KIND" = test ] || [ -n "$MODEL" ] || die "--model is needed for --kind $KIND"
[[ "$PORT_BASE" =~ ^[0-9]+$|^auto$ ]] && [[ "$WAIT" =~ ^[0-9]+$ ]] && [[ "$SLOTS" =~ ^[1-9][0-9]*$ ]] ||
  die "--port-base takes a whole number or auto; --wait and --slots whole numbers"
# the GPUs of this node
IFS=, read -r -a VIS <<< "${CUDA_VISIBLE_DEVICES:-}"
if [ -z "$GPUS" ]; then
  if [ "${#VIS[@]}" -gt 0 ] && [ -n "${VIS[0]}" ]; then GPUS=${#VIS[@]}
  elif [ -n "${SLURM_GPUS_ON_NODE:-}" ]; then GPUS=$SLURM_GPUS_ON_NODE
  elif command -v nvidia-smi > /dev/null; then GPUS=$(nvidia-smi -L | grep -c '^GPU')
  fi
fi
[[ "${GPUS:-}" =~ ^[1-9][0-9]*$ ]] || die "no GPU found (CUDA_VISIBLE_DEVICES, SLURM_GPUS_ON_NODE, nvidia-smi): give --gpus N"
mkdir -p "$LOGDIR" || die "cannot create the log folder '$LOGDIR'"
# port_taken P: something accepts connections on 127.0.0.1:P
port_taken() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
block_taken() { # BASE: any port of BASE .. BASE+GPUS-1 taken
  local p
  for ((p = $1; p < $1 + GPUS; p++)); do port_taken "$p" && return 0; done
  return 1
}
if [ "$PORT_BASE" = auto ]; then
  # blocks of 16 ports from 20000: the job and step ids pick one, the next free one is taken
  blk=$(( (${SLURM_JOB_ID:-$$} * 7 + ${SLURM_STEP_ID:-0}) % 2500 ))
  for _ in $(seq 2500); do
    PORT_BASE=$((20000 + 16 * blk))
    [ $((PORT_BASE + GPUS)) -le 60000 ] && ! block_taken "$PORT_BASE" && break
    blk=$(( (blk + 1) % 2500 ))
  done
else
  block_taken "$PORT_BASE" && die "a port of $PORT_BASE..$((PORT_BASE + GPUS - 1)) is taken on $(hostname -s) (another job's server?): use --port-base auto"
fi
export TALLY_PORT_BASE="$PORT_BASE"
HERE="$(cd "$(dirname "$0")" && pwd)"
TESTSERVER="${TALLY_TESTSERVER:-$HERE/../build/tally-testserver}"

PIDS=()
stop_all() {
  [ "${#PIDS[@]}" -gt 0 ] || return 0
  kill -TERM "${PIDS[@]}" 2> /dev/null
  for _ in $(seq 40); do
    alive=0; for p in "${PIDS[@]}"; do kill -0 "$p" 2> /dev/null && alive=1; done
    [ "$alive" = 0 ] && break; sleep 0.5
  done
  kill -KILL "${PIDS[@]}" 2> /dev/null
  wait 2> /dev/null
  PIDS=()
}
trap stop_all EXIT
trap 'exit 143' TERM INT

for ((i = 0; i < GPUS; i++)); do
  port=$((PORT_BASE + i))
  gpu="${VIS[$i]:-$i}"
  log="$LOGDIR/server-$(hostname -s)-$i.log"
  case "$KIND" in
    vllm) cmd=(vllm serve "$MODEL" --host 127.0.0.1 --port "$port" --served-model-name "${NAME:-$MODEL}") ;;
    llamacpp) cmd=(llama-server -m "$MODEL" --host 127.0.0.1 --port "$port" ${NAME:+--alias "$NAME"} -ngl 999
                   --no-context-shift -np "$SLOTS" --threads-http $((SLOTS + 4))) ;;
    test) cmd=("$TESTSERVER" --host 127.0.0.1 --port "$port") ;;
  esac
  # shellcheck disable=SC2206 # --server-args is split like a command line
  extra=($SARGS)
  CUDA_VISIBLE_DEVICES="$gpu" "${cmd[@]}" "${extra[@]}" > "$log" 2>&1 &
  PIDS+=($!)
  echo "serve.sh: server $i ($KIND) on GPU $gpu at http://127.0.0.1:$port/v1 (log $log)"
done
# every server healthy within WAIT seconds
deadline=$((SECONDS + WAIT))
for ((i = 0; i < GPUS; i++)); do
  port=$((PORT_BASE + i))
  until kill -0 "${PIDS[$i]}" 2> /dev/null && curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/health" &&
    kill -0 "${PIDS[$i]}" 2> /dev/null; do
    if ! kill -0 "${PIDS[$i]}" 2> /dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      kill -0 "${PIDS[$i]}" 2> /dev/null && why="did not come up within ${WAIT} s" || why="exited"
      echo "serve.sh: server $i (port $port, pid ${PIDS[$i]}) $why; the end of its log:" >&2
      tail -n 20 "$LOGDIR/server-$(hostname -s)-$i.log" >&2
      exit 3
    fi
    sleep 2
  done
done
echo "serve.sh: $GPUS server(s) healthy (ports $PORT_BASE..$((PORT_BASE + GPUS - 1)); TALLY_PORT_BASE=$PORT_BASE)"
if [ "$HOLD" = 1 ]; then
  while :; do sleep 3600 & wait $!; done
fi
"$@" &
wait $!
exit $?
