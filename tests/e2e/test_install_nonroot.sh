#!/usr/bin/env bash
# A cluster user's build (issue 30): an unprivileged user configures, builds and installs tally
# into a prefix of their own (cmake --install build --prefix P; dependencies from the system, no
# root), runs the demo job from the installed tree and reads its output with the installed
# tally-h5; nothing is written outside the prefix and the work folder (every file the user owns
# afterwards, anywhere on the file systems tally could reach, lies under the two).
# Skipped (77) where this test cannot make or become an unprivileged user (not root, no useradd
# or runuser).
. "$(dirname "$0")/common.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: making an unprivileged user needs root"; exit 77; }
command -v runuser > /dev/null && command -v useradd > /dev/null || { echo "skipped: no runuser/useradd"; exit 77; }
U=tallybuild
id "$U" > /dev/null 2>&1 || useradd --no-create-home --home-dir /nonexistent --shell /bin/bash "$U" ||
  { echo "skipped: useradd failed"; exit 77; }
W="$WORK/user"
mkdir -p "$W"
chmod 755 "$WORK"
# the source as a user would have it (a clone): the tracked tree, no build folders
mkdir -p "$W/src"
tar -C "$TALLY_SRC" --exclude='./build*' --exclude='./.git' --exclude='./out' -cf - . | tar -C "$W/src" -xf -
chown -R "$U" "$W"
touch "$WORK/stamp"
as_user() { runuser -u "$U" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$W" TMPDIR="$W/tmp" "$@"; }
as_user mkdir -p "$W/tmp"
as_user cmake -S "$W/src" -B "$W/build" -DTALLY_CUDA=OFF -DTALLY_TESTS=OFF > "$W/configure.log" 2>&1 ||
  { cat "$W/configure.log"; fail "configure as $U failed"; }
as_user cmake --build "$W/build" -j"$(nproc)" > "$W/build.log" 2>&1 || { tail -40 "$W/build.log"; fail "build as $U failed"; }
as_user cmake --install "$W/build" --prefix "$W/prefix" > "$W/install.log" 2>&1 || { cat "$W/install.log"; fail "install as $U failed"; }
for f in bin/tally bin/tally-h5 share/tally/slurm/serve.sh share/tally/slurm/tally-run.sbatch share/tally/python/tally_h5.py \
         share/tally/jobs/demo.json share/doc/tally/README.md share/doc/tally/OUTPUT.md; do
  [ -e "$W/prefix/$f" ] || fail "the install has no $f"
done
# the demo from the installed tree, into the work folder; read back with the installed reader
as_user sh -c "cd '$W' && '$W/prefix/bin/tally' run '$W/prefix/share/tally/jobs/demo.json' --out '$W/demo.h5' --quiet" \
  > "$W/demo.txt" 2> "$W/demo.err" || { cat "$W/demo.err"; fail "the installed tally failed on the demo"; }
grep -q "parser audit" "$W/demo.txt" || fail "the installed demo printed no summary"
as_user env TALLY_PYTHON="$PY" "$W/prefix/bin/tally-h5" "$W/demo.h5" > "$W/tables.txt" 2> "$W/tables.err" ||
  { cat "$W/tables.err"; fail "the installed tally-h5 failed"; }
grep -qx "/items/spatialeval" "$W/tables.txt" || fail "tally-h5 did not list /items/spatialeval"
# every file the user owns lies under the work folder (prefix, build, source, outputs)
stray=$(find / -xdev \( -path /proc -o -path /sys -o -path /dev \) -prune -o -user "$U" -print 2> /dev/null |
        grep -v "^$W" | head -5 || true)
[ -z "$stray" ] || fail "the user's build wrote outside the prefix and the work folder: $stray"
rm -rf "$W" # the user's files, before the trap's rm (which runs as root anyway)
echo "non-root build: configured, built, installed into a prefix, ran the demo and read it back; nothing written elsewhere"
