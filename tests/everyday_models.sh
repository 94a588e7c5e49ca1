#!/bin/sh
# The shapes of real exports passhost met in public packages, made by
# scripts/gen_everyday_models.py with torch and onnx.helper, through the
# passhost program with the default stages:
#   vad_like            If nodes whose conditions fold to constants are
#                       inlined (only the If on the sample-rate input stays),
#                       nested ones too; fewer nodes
#   if_in_loop          the Ifs inside a Loop body are inlined into it
#   seg_fp16_unordered  Casts appended at the end of the node list: sorted,
#                       said in one line, the output in order (onnx.checker)
#   reshape_chain       the Shape -> Gather -> Unsqueeze -> Concat chains of
#                       the Reshape targets go (Reshape with 0 and -1)
# and each is checked in ONNX Runtime when onnxruntime-node is there (the
# numeric check; make test-ort runs the same models with more passes).
# Prints the node counts before and after.  Skipped without python3-torch.
cd "$(dirname "$0")/.." || exit 1
BUILD=${PASSHOST_BUILD:-build}
PY=/usr/bin/python3
if ! $PY -c 'import torch, onnx' 2>/dev/null; then
    echo "everyday_models: python3-torch / python3-onnx not installed: skipped"
    exit 0
fi
tmp=$(mktemp -d /tmp/ph_everyday.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail() { echo "everyday_models: FAIL: $*"; exit 1; }

$PY scripts/gen_everyday_models.py "$tmp" >"$tmp/gen.log" 2>&1 || fail "generating: $(tail -3 "$tmp/gen.log")"
ort=0
node -e "require('onnxruntime-node')" 2>/dev/null && ort=1

for m in vad_like if_in_loop seg_fp16_unordered reshape_chain; do
    "$BUILD/bin/passhost" "$tmp/$m.onnx" "$tmp/$m.opt.onnx" >"$tmp/$m.out" 2>"$tmp/$m.err" ||
        fail "$m: passhost exited $?: $(cat "$tmp/$m.err")"
done
grep -q "seg_fp16_unordered.onnx lists its nodes out of order (.* read a value listed after them): sorted" \
    "$tmp/seg_fp16_unordered.err" || fail "the out-of-order model is not said to be sorted: $(cat "$tmp/seg_fp16_unordered.err")"
grep -q "inline_constant_if" "$tmp/vad_like.out" || fail "inline_constant_if did not fire on vad_like"
grep -q "dynamic_reshape_to_static" "$tmp/reshape_chain.out" || fail "dynamic_reshape_to_static did not fire"

$PY - "$tmp" <<'PYEOF' || exit 1
import sys, onnx
d = sys.argv[1]

def count(g):
    n = 0
    for node in g.node:
        n += 1
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                n += count(a.g)
    return n

def ifs(g, consts):
    """If nodes of g and its bodies, and those whose condition is a constant."""
    total, const = 0, 0
    names = consts | {t.name for t in g.initializer} | {o for n in g.node if n.op_type == "Constant" for o in n.output}
    for node in g.node:
        if node.op_type == "If":
            total += 1
            const += node.input[0] in names
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                t, c = ifs(a.g, names)
                total, const = total + t, const + c
    return total, const

def fail(msg):
    print("everyday_models: FAIL:", msg)
    sys.exit(1)

for m in ("vad_like", "if_in_loop", "seg_fp16_unordered", "reshape_chain"):
    a = onnx.load(f"{d}/{m}.onnx")
    b = onnx.load(f"{d}/{m}.opt.onnx")
    onnx.checker.check_model(b)  # valid, in topological order
    ia, ib = ifs(a.graph, set()), ifs(b.graph, set())
    print(f"everyday_models: {m}: nodes {len(a.graph.node)} -> {len(b.graph.node)} (with bodies "
          f"{count(a.graph)} -> {count(b.graph)}), If {ia[0]} -> {ib[0]}")
    if count(b.graph) >= count(a.graph):
        fail(f"{m}: no node fewer")
    if ib[1]:
        fail(f"{m}: {ib[1]} If node(s) with a constant condition left")
b = onnx.load(f"{d}/vad_like.opt.onnx")
left = [n for n in b.graph.node if n.op_type == "If"]
if not any("sr" in n.input[0] or n.input[0].startswith("/Equal") for n in left):
    fail("vad_like: the If on the sample rate should stay")
loop = onnx.load(f"{d}/if_in_loop.opt.onnx").graph.node[0]
if loop.op_type != "Loop" or any(n.op_type == "If" for n in loop.attribute[0].g.node):
    fail("if_in_loop: an If is left in the Loop body")
r = onnx.load(f"{d}/reshape_chain.opt.onnx").graph
shapes = sum(n.op_type == "Shape" for n in r.node)
before = sum(n.op_type == "Shape" for n in onnx.load(f"{d}/reshape_chain.onnx").graph.node)
if shapes >= before:
    fail(f"reshape_chain: Shape nodes {before} -> {shapes}")
PYEOF

if [ $ort -eq 1 ]; then
    node scripts/ort_check.js "$tmp/vad_like.onnx" "$tmp/vad_like.opt.onnx" -q --shape input:1x512 \
        --symbolic 1 >"$tmp/ort.log" 2>&1 || fail "vad_like differs in ONNX Runtime: $(cat "$tmp/ort.log")"
    for m in if_in_loop seg_fp16_unordered reshape_chain; do
        node scripts/ort_check.js "$tmp/$m.onnx" "$tmp/$m.opt.onnx" -q --symbolic 1,3 --runs 4 \
            >"$tmp/ort.log" 2>&1 || fail "$m differs in ONNX Runtime: $(cat "$tmp/ort.log")"
    done
    echo "everyday_models: ok (outputs equal in ONNX Runtime)"
else
    echo "everyday_models: ok (onnxruntime-node not installed: no ONNX Runtime check)"
fi
