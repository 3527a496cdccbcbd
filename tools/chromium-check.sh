#!/usr/bin/env bash
# chromium-check.sh PAGE.html OUT.png - opens PAGE.html in headless Chromium (Debian's chromium
# package) as a reader would, and fails unless the page ran cleanly and drew every chart.
#
#   exit 0   no uncaught exception, no unhandled promise rejection, no console.error, no failed
#            or network resource load, every <svg> of the file present in the rendered DOM with
#            a non-empty box and drawn content; OUT.png is a screenshot of the whole page.
#   exit 1   any of those failed (each failure printed, one a line, on stderr).
#   exit 2   usage; exit 77 chromium is not installed (tests count it as skipped).
# Prints one line on success: "chromium-check: N of N svg drawn, 0 errors, screenshot OUT.png".
#
# How the errors are read: a probe script is put first in <head> of a copy of the page (so it
# runs before any of the page's own scripts) and records window 'error' events (uncaught
# exceptions, syntax errors of later scripts, failed resource loads: capture phase),
# 'unhandledrejection' events and console.error calls; after 'load' it measures every <svg>
# (getBoundingClientRect and getBBox both > 0, at least one child element), lists any resource
# fetched from outside the page (performance entries not file: or data:), and writes its
# findings into the DOM (data-tlcheck-* attributes on <html>, the messages in <pre
# id="tlcheck-report">), which `--dump-dom` prints after the page's timers ran
# (--virtual-time-budget). This is more robust than grepping `--enable-logging=stderr` for
# CONSOLE lines: those carry no level (console.log and an exception look alike) and their
# format is not stable between Chromium versions. The screenshot is taken of the original page
# in a second run (--screenshot, --window-size the page's measured height, at most 16384 px).
#
# Environment: CHROMIUM (the browser binary; default: the first of chromium, chromium-browser,
# google-chrome on PATH); CHROMIUM_TIMEOUT (seconds per browser run, default 90);
# CHROMIUM_CHECK_DOM (a file: the rendered DOM, as --dump-dom printed it, is copied there, for
# tests that read what the page's script did - tests/e2e/test_html_chromium.sh). As root the
# browser needs --no-sandbox (added when id -u is 0); a user without a usable sandbox (no user
# namespaces in a container) gets it after a first run that fails saying so. A fresh
# --user-data-dir under a temporary folder, removed at exit, keeps runs independent of each
# other and of any user profile.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: chromium-check.sh PAGE.html OUT.png" >&2
  exit 2
fi
page="$1"
png="$2"
[ -f "$page" ] || { echo "chromium-check: no such file '$page'" >&2; exit 2; }

browser="${CHROMIUM:-}"
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" > /dev/null 2>&1; then browser="$(command -v "$b")"; break; fi
  done
fi
if [ -z "$browser" ] || ! command -v "$browser" > /dev/null 2>&1; then
  echo "chromium-check: skipped: chromium is not installed (tools/install-deps.sh installs it)"
  exit 77
fi
limit="${CHROMIUM_TIMEOUT:-90}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
flags=(--headless --disable-gpu --no-first-run --no-default-browser-check --disable-extensions
       --hide-scrollbars --user-data-dir="$tmp/profile")
[ "$(id -u)" -ne 0 ] || flags+=(--no-sandbox)

cat > "$tmp/probe.html" <<'PROBE'
<script>(function(){'use strict';var errs=[];
window.addEventListener('error',function(e){var t=e.target;
 if(t&&t!==window&&(t.src||t.href)){errs.push('resource failed to load: '+(t.src||t.href));return;}
 errs.push('uncaught: '+(e.message||'error')+(e.lineno?' (line '+e.lineno+')':''));},true);
window.addEventListener('unhandledrejection',function(e){errs.push('unhandled rejection: '+String(e.reason));});
var ce=console.error;console.error=function(){errs.push('console.error: '+Array.prototype.join.call(arguments,' '));
 return ce.apply(console,arguments);};
window.addEventListener('load',function(){setTimeout(function(){
 var svgs=document.querySelectorAll('svg'),ok=0,i;
 for(i=0;i<svgs.length;i++){var s=svgs[i],r=s.getBoundingClientRect(),bb=null;try{bb=s.getBBox();}catch(x){}
  if(r.width>0&&r.height>0&&bb&&bb.width>0&&bb.height>0&&s.childElementCount>0)ok++;
  else errs.push('empty svg: #'+(i+1)+' '+(s.getAttribute('aria-labelledby')||''));}
 var res=performance.getEntriesByType('resource');
 for(i=0;i<res.length;i++)if(!/^(file|data|blob):/.test(res[i].name))errs.push('network resource: '+res[i].name);
 var d=document.documentElement,pre=document.createElement('pre');pre.id='tlcheck-report';
 pre.textContent=errs.join('\n');document.body.appendChild(pre);
 d.setAttribute('data-tlcheck-svg',String(svgs.length));d.setAttribute('data-tlcheck-svg-ok',String(ok));
 d.setAttribute('data-tlcheck-errors',String(errs.length));
 d.setAttribute('data-tlcheck-height',String(Math.ceil(d.scrollHeight)));d.setAttribute('data-tlcheck-done','1');
},50);});})();</script>
PROBE

# the copy: the probe right after the line that opens <head>, in the page's own folder (so that
# relative paths resolve as they would for the original)
dir="$(cd "$(dirname "$page")" && pwd)"
copy="$dir/.tlcheck.$$.$(basename "$page")"
[ -w "$dir" ] || copy="$tmp/$(basename "$page")" # a read-only folder: the copy in the temp one
trap 'rm -rf "$tmp" "$copy"' EXIT
if ! awk -v probe="$tmp/probe.html" 'BEGIN{done=0} {print} !done && tolower($0) ~ /<head[ >]/ {
       while ((getline l < probe) > 0) print l; done=1 } END{exit done?0:1}' "$page" > "$copy"; then
  echo "chromium-check: '$page' has no <head> line to put the probe after" >&2
  exit 1
fi

# A non-root user where the kernel gives no user namespaces (many containers) has no usable
# sandbox: Chromium then stops at once saying so; the run is tried again without it.
browse() { # LOG ARGS...: the browser with the flags, stdout to the caller
  local log="$1"
  shift
  timeout "$limit" "$browser" "${flags[@]}" "$@" 2> "$log" && return 0
  local rc=$?
  if [[ " ${flags[*]} " != *" --no-sandbox "* ]] && grep -qi "sandbox" "$log"; then
    echo "chromium-check: no usable sandbox for this user: running with --no-sandbox" >&2
    flags+=(--no-sandbox)
    timeout "$limit" "$browser" "${flags[@]}" "$@" 2> "$log"
    return $?
  fi
  return $rc
}
if ! browse "$tmp/log1" --virtual-time-budget=5000 --window-size=1280,1024 \
     --dump-dom "file://$copy" > "$tmp/dom.html"; then
  tail -20 "$tmp/log1" >&2
  echo "chromium-check: chromium failed or timed out (${limit}s) loading '$page'" >&2
  exit 1
fi
[ -z "${CHROMIUM_CHECK_DOM:-}" ] || cp "$tmp/dom.html" "$CHROMIUM_CHECK_DOM"
attr() { sed -n "s/.*<html[^>]* $1=\"\([^\"]*\)\".*/\1/p" "$tmp/dom.html" | head -1; }
if [ "$(attr data-tlcheck-done)" != "1" ]; then
  tail -20 "$tmp/log1" >&2
  echo "chromium-check: the probe did not finish in '$page' (the page never fired 'load', or blocked)" >&2
  exit 1
fi
nsvg="$(attr data-tlcheck-svg)"
nok="$(attr data-tlcheck-svg-ok)"
nerr="$(attr data-tlcheck-errors)"
height="$(attr data-tlcheck-height)"
insrc="$(grep -o '<svg[ >]' "$page" | wc -l)"
status=0
if [ "$nerr" != "0" ]; then
  # the report's lines, HTML entities of the dump undone
  sed -n '/<pre id="tlcheck-report">/,/<\/pre>/p' "$tmp/dom.html" | sed -e 's/<pre id="tlcheck-report">//' \
      -e 's/<\/pre>.*//' -e 's/&lt;/</g' -e 's/&gt;/>/g' -e 's/&quot;/"/g' -e 's/&amp;/\&/g' |
    sed '/^$/d; s/^/chromium-check: /' >&2
  status=1
fi
if [ "$nsvg" != "$insrc" ]; then
  echo "chromium-check: the file has $insrc <svg> elements, the rendered page $nsvg" >&2
  status=1
fi
[ "$status" = 0 ] || { echo "chromium-check: FAILED: '$page'" >&2; exit 1; }

h="${height:-2000}"
[ "$h" -ge 200 ] 2>/dev/null || h=2000
[ "$h" -le 16384 ] || h=16384
rm -f "$png"
if ! browse "$tmp/log2" --virtual-time-budget=2000 --window-size="1280,$h" \
     --screenshot="$(cd "$(dirname "$png")" && pwd)/$(basename "$png")" "file://$dir/$(basename "$page")" \
     >> "$tmp/log2"; then
  tail -20 "$tmp/log2" >&2
  echo "chromium-check: the screenshot run failed" >&2
  exit 1
fi
if [ ! -s "$png" ] || [ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" != "211PNG" ]; then
  echo "chromium-check: no PNG screenshot at '$png'" >&2
  exit 1
fi
echo "chromium-check: $nok of $nsvg svg drawn, 0 errors, screenshot $png"
