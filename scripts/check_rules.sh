#!/bin/sh
# scripts/check_rules.sh BUILD [INSTANCES] [SEED] - the rule checker
# (passhost --check-rules, docs/sdk.md "Checking rules") on every pattern
# pass of BUILD/plugins: one table per pass, then the totals.  Fails when a
# rule fails, when the rules covered (at least one instance kept) are
# fewer than the rules, or when a rule rewrote none of its instances and
# is not listed, with the reason, in scripts/rules_without_rewrites.txt
# (so that coverage cannot drop silently).  Reproducers go to
# BUILD/rulecheck/.
set -u
build=${1:-build}
instances=${2:-25}
seed=${3:-1}
repro="$build/rulecheck"
rm -rf "$repro" && mkdir -p "$repro"
status=0 passes=0 rules=0 covered=0 failing=0 idle=0
allow="$(dirname "$0")/rules_without_rewrites.txt"
for so in "$build"/plugins/*.so; do
    name=$(basename "$so" .so)
    out=$("$build/bin/passhost" --check-rules "$so" --instances "$instances" --seed "$seed" \
          --repro-dir "$repro" 2>&1)
    rc=$?
    case "$out" in *"has no rules"*) continue ;; esac
    printf '%s\n' "$out"
    passes=$((passes + 1))
    line=$(printf '%s\n' "$out" | grep "^$name: rules ")
    r=$(echo "$line" | sed 's/.*rules \([0-9]*\), rules covered.*/\1/')
    c=$(echo "$line" | sed 's/.*rules covered \([0-9]*\),.*/\1/')
    f=$(echo "$line" | sed 's/.*rules failing \([0-9]*\).*/\1/')
    rules=$((rules + ${r:-0})) covered=$((covered + ${c:-0})) failing=$((failing + ${f:-0}))
    [ "$rc" -eq 0 ] || status=1
    # rules that rewrote nothing: "  rule forms tried rejected pos matched rewritten ..."
    for rule in $(printf '%s\n' "$out" | awk '/^  / && $7 == 0 {print $1}'); do
        if grep -q "^$name/$rule " "$allow" 2>/dev/null; then
            continue
        fi
        echo "check-rules: $name/$rule rewrote none of its instances (give it an example graph, or list it with" \
             "the reason in $allow)"
        idle=$((idle + 1)) status=1
    done
done
echo "check-rules: $passes pattern passes, rules $rules, rules covered $covered, rules failing $failing" \
     "($instances instances a rule, seed $seed), rules rewriting nothing unlisted $idle"
[ "$covered" -eq "$rules" ] || { echo "check-rules: some rules have no instance the generator could build"; status=1; }
exit $status
