#!/usr/bin/env bash
# test_html_chromium.sh - the HTML page and its charts as a reader sees them (issue 33 item 4):
# tally-html-demo writes a page with every chart kind (src/report/svg_html.cmake builds it beside
# tally); the page is the same bytes twice; every <svg> in it is well-formed XML (Python's
# parser, when python3 is there); tools/chromium-check.sh opens it in headless Chromium: no
# console error or exception, all 6 charts drawn, a screenshot (kept in $WORK and copied to
# the build folder as test_html_chromium.png). Then the check must FAIL on copies of the page
# with, one at a time: an uncaught exception, a syntax error in the page's own script, a
# console.error, an empty <svg>, a resource fetched from the network. Last, the inline script
# works: clicking the "accuracy" header sorts numerically with NaN last (both directions), and
# the filter box keeps the matching rows. Skipped (77) when chromium is absent.
source "$(dirname "$0")/common.sh"

demo="$(dirname "$TALLY_BIN")/tally-html-demo"
check="$TALLY_SRC/tools/chromium-check.sh"
[ -x "$demo" ] || fail "no $demo (built by src/report/svg_html.cmake)"

page="$WORK/page.html"
"$demo" "$page" || fail "tally-html-demo failed"
"$demo" "$WORK/again.html"
cmp -s "$page" "$WORK/again.html" || fail "the page is not the same bytes twice"
[ "$(grep -c '<svg ' "$page")" = 6 ] || fail "the demo page should hold 6 charts"

if "$PY" -c 'import xml.etree.ElementTree' 2>/dev/null; then
  "$PY" - "$page" <<'EOF' || fail "an <svg> of the page is not well-formed XML"
import re, sys, xml.etree.ElementTree as ET
text = open(sys.argv[1], encoding="utf-8").read()
svgs = re.findall(r"<svg .*?</svg>", text, re.S)
assert len(svgs) == 6, len(svgs)
for s in svgs:
    root = ET.fromstring(s)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.get("role") == "img"
    assert root.find(ns + "title") is not None and root.find(ns + "desc") is not None
EOF
fi

set +e
out="$(CHROMIUM_CHECK_DOM="$WORK/dom.html" bash "$check" "$page" "$WORK/page.png" 2>&1)"
rc=$?
set -e
if [ "$rc" = 77 ]; then echo "$out"; exit 77; fi
echo "$out"
[ "$rc" = 0 ] || fail "chromium-check failed on the demo page (rc $rc)"
grep -q "^chromium-check: 6 of 6 svg drawn, 0 errors" <<< "$out" || fail "not every chart was drawn"
[ -s "$WORK/page.png" ] || fail "no screenshot"
cp "$WORK/page.png" "$(dirname "$TALLY_BIN")/test_html_chromium.png"

# ---- the check fails on a broken copy: (what is put in, where, the message expected) ----
# where: "end" = just before </main> (after the charts, before the page's script), "script" = a
# sed expression applied to the page's own script
inject() { # NAME WHERE TEXT -> $WORK/NAME.html
  if [ "$2" = end ]; then
    awk -v t="$3" '/^<\/main>$/ && !d {print t; d=1} {print}' "$page" > "$WORK/$1.html"
  else
    sed "$3" "$page" > "$WORK/$1.html"
  fi
  cmp -s "$page" "$WORK/$1.html" && fail "$1: the injection changed nothing"
  return 0
}
cases=(
  "exception|end|<script>undefinedFunctionOfTheTest();</script>|uncaught: Uncaught ReferenceError: undefinedFunctionOfTheTest"
  "syntax|script|s/^(function(){'use strict';\$/(function(){'use strict';)/|uncaught: Uncaught SyntaxError"
  "console|end|<script>console.error('the test says no');</script>|console.error: the test says no"
  "emptysvg|end|<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"0\" height=\"0\"></svg>|empty svg: #7"
  "network|end|<img alt=\"\" src=\"http://127.0.0.1:9/x.png\">|http://127.0.0.1:9/x.png"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name where text want <<< "$c"
  inject "$name" "$where" "$text"
  set +e
  bad="$(bash "$check" "$WORK/$name.html" "$WORK/$name.png" 2>&1)"
  rc=$?
  set -e
  [ "$rc" = 1 ] || { echo "$bad"; fail "$name: chromium-check exited $rc on a broken page, not 1"; }
  grep -qF -- "$want" <<< "$bad" || { echo "$bad"; fail "$name: no '$want' in the check's output"; }
  echo "ok: the check fails on '$name': $(grep -F -- "$want" <<< "$bad" | head -1)"
done

# ---- the inline script: sort and filter, driven by a test script after the page's own ----
cat > "$WORK/drive.js" <<'EOF'
<script>(function(){var t=document.getElementById('items'),d=document.documentElement;
function order(){var r=t.tBodies[0].rows,o=[];for(var i=0;i<r.length;i++)o.push(r[i].cells[0].textContent);return o.join(',');}
var b=t.tHead.rows[0].cells[1].querySelector('button');
b.click();d.setAttribute('data-asc',order()+'|'+t.tHead.rows[0].cells[1].getAttribute('aria-sort'));
b.click();d.setAttribute('data-desc',order()+'|'+t.tHead.rows[0].cells[1].getAttribute('aria-sort'));
var n=t.tHead.rows[0].cells[3].querySelector('button');n.click();d.setAttribute('data-text',order());
var inp=document.querySelector('.tl-filter input');inp.value='QW';inp.dispatchEvent(new Event('input'));
var shown=[];for(var i=0;i<t.tBodies[0].rows.length;i++)if(!t.tBodies[0].rows[i].hidden)shown.push(t.tBodies[0].rows[i].cells[0].textContent);
d.setAttribute('data-filter',shown.join(',')+'|'+document.querySelector('.tl-filter span').textContent);})();</script>
EOF
awk -v f="$WORK/drive.js" '/^<\/body>$/ {while ((getline l < f) > 0) print l} {print}' "$page" > "$WORK/drive.html"
CHROMIUM_CHECK_DOM="$WORK/drive.dom" bash "$check" "$WORK/drive.html" "$WORK/drive.png" > /dev/null ||
  fail "chromium-check failed on the page driven by the test script"
got() { sed -n "s/.*<html[^>]* $1=\"\([^\"]*\)\".*/\1/p" "$WORK/drive.dom" | head -1; }
[ "$(got data-asc)" = "phi-3,llava,idefics,qwen2-vl|ascending" ] || fail "ascending sort: $(got data-asc)"
[ "$(got data-desc)" = "idefics,llava,phi-3,qwen2-vl|descending" ] || fail "descending sort (NaN last): $(got data-desc)"
# the note column: text sorts after the cell that starts with a number ("1 &lt;unparsed&gt;")
[ "$(got data-text)" = "idefics,qwen2-vl,llava,phi-3" ] || fail "text sort: $(got data-text)"
[ "$(got data-filter)" = "qwen2-vl|1 of 4 rows" ] || fail "filter: $(got data-filter)"
echo "ok: sort (numeric, NaN last both ways, text) and filter"
echo "PASS (screenshot: $(dirname "$TALLY_BIN")/test_html_chromium.png)"
