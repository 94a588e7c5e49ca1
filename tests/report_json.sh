#!/bin/sh
# --report-json validates against docs/report.schema.json and matches the
# text report (tests/report_json.py; python3-jsonschema from Debian,
# installed by scripts/deps.sh).
cd "$(dirname "$0")/.." || exit 1
exec /usr/bin/python3 tests/report_json.py "${PASSHOST_BUILD:-build}"
