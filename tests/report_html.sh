#!/bin/sh
# --report-html: one self-contained file (nothing loaded from elsewhere)
# that headless Chromium (Debian's chromium, installed by .ci/run) renders
# without errors on a laptop's screen (1366x768): the DOM after its script
# says the charts have a size and the page fits the window's width, the
# console has no error, and a screenshot is taken.  The report shows the
# regions the passes changed as diagrams and keeps the configuration
# collapsed; a failed run's report says in its output column that nothing
# was written.  Skipped when Chromium is not installed.
cd "$(dirname "$0")/.." || exit 1
BUILD=${PASSHOST_BUILD:-build}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
    echo "report_html: chromium is not installed: skipped (apt-get install chromium)"
    exit 0
fi
tmp=$(mktemp -d /tmp/ph_report_html.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "report_html: FAIL: $*"; exit 1; }

"$BUILD/bin/passhost" models/cnn_small.onnx "$tmp/out.onnx" --verify=2 --verify-each -q \
    --report-html "$tmp/report.html" >/dev/null || fail "passhost failed"
html="$tmp/report.html"
# self-contained: no external reference of any kind (the SVG namespace is a
# name, not a fetch; url(#id) points into the page itself)
grep -Eiq '<link|src=|url\([^#]|@import' "$html" && fail "the report loads something"
other=$(grep -Eo 'https?://[^" <]*' "$html" | sort -u | grep -v '^http://www.w3.org/2000/svg$')
[ -z "$other" ] || fail "the report refers to $other"
for id in summary regions region-0 op-chart timeline-chart stages verify config; do
    grep -q "id=\"$id\"" "$html" || fail "no #$id in the report"
done
# the changed regions are diagrams of boxes; the configuration is collapsed
grep -q 'class="node changed"' "$html" || fail "no changed node in the diagrams"
grep -q '<section id="config"><h2>Configuration</h2>' "$html" && grep -q '<details><summary>the effective configuration' "$html" ||
    fail "the configuration is not collapsed"

# render it at a laptop's size: the DOM after the script, with the console on stderr
export HOME="$tmp" # chromium writes its profile there
flags="--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
--user-data-dir=$tmp/profile --enable-logging=stderr --v=0 --window-size=1366,768"
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --dump-dom "file://$html" >"$tmp/dom.html" 2>"$tmp/console.log" ||
    fail "chromium --dump-dom failed: $(tail -5 "$tmp/console.log")"
grep -q 'data-rendered="ok"' "$tmp/dom.html" ||
    fail "the charts did not render: $(grep -o 'data-rendered="[^"]*"' "$tmp/dom.html")"
grep -q 'data-fits="yes"' "$tmp/dom.html" ||
    fail "the page is wider than a 1366-pixel window: $(grep -o 'data-fits="[^"]*"' "$tmp/dom.html")"
# console messages of the page (CSP violations, script errors) are logged as CONSOLE lines
if grep -E 'CONSOLE|Uncaught|Refused to' "$tmp/console.log"; then
    fail "the page logged errors"
fi
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --screenshot="$tmp/shot.png" "file://$html" \
    >/dev/null 2>&1 || fail "chromium --screenshot failed"
size=$(wc -c <"$tmp/shot.png")
[ "$size" -gt 10000 ] || fail "screenshot of $size bytes"
# a failed run's report renders too, with the output column saying why it is empty
"$BUILD/bin/passhost" models/cnn_small.onnx "$tmp/o2.onnx" --passes=nosuch -q \
    --report-html "$tmp/failed.html" 2>/dev/null
[ $? -eq 2 ] || fail "want exit 2"
grep -q 'id="status" class="fail"' "$tmp/failed.html" || fail "no failure in the failed run's report"
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --dump-dom "file://$tmp/failed.html" >"$tmp/dom2.html" 2>"$tmp/console2.log" ||
    fail "chromium failed on the failed run's report"
grep -q 'data-rendered="ok"' "$tmp/dom2.html" || fail "the failed run's report did not render"
# a run that fails after the load: the models table has an output column saying nothing was written
mkdir "$tmp/plugins" && cp "$BUILD/test-plugins/tp_fail.so" "$tmp/plugins/" || fail "no tp_fail.so"
"$BUILD/bin/passhost" models/cnn_small.onnx "$tmp/o3.onnx" --plugin-dir "$tmp/plugins" \
    --passes=tp_fail -q --report-html "$tmp/failed3.html" 2>/dev/null
[ $? -eq 5 ] || fail "want exit 5 from tp_fail"
grep -q 'class="fail nooutput">not written: the run failed (exit 5)' "$tmp/failed3.html" ||
    fail "no output column in the report of a run that failed after the load"
# shellcheck disable=SC2086
timeout 120 "$CHROMIUM" $flags --dump-dom "file://$tmp/failed3.html" >"$tmp/dom3.html" 2>/dev/null ||
    fail "chromium failed on the report of a run that failed after the load"
grep -q 'data-rendered="ok"' "$tmp/dom3.html" && grep -q 'data-fits="yes"' "$tmp/dom3.html" ||
    fail "the report of a run that failed after the load did not render"
echo "report_html: ok (screenshot $size bytes)"
