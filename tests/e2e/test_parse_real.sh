#!/usr/bin/env bash
# `tally parse` agrees with the original evaluator (legacy) and the published parser (pr3) on
# every real answer in ../shared/data; strict marks none of the seed complaints correct.
. "$(dirname "$0")/common.sh"
DATA="${TALLY_SHARED_DATA:-$TALLY_SRC/../shared/data}"
[ -d "$DATA/spatialeval/outputs" ] || { echo "skipped: $DATA/spatialeval is absent"; exit 77; }
[ -x "$PY" ] || { echo "skipped: $PY is absent"; exit 77; }
"$PY" "$TALLY_SRC/tests/e2e/real_parse_check.py" "$TALLY_BIN" "$TALLY_SRC" "$DATA"
