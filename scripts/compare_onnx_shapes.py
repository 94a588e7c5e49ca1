#!/usr/bin/python3
"""Compare passhost's inferred shapes with onnx.shape_inference on the bundled models.

    scripts/compare_onnx_shapes.py [--build DIR] [MODEL.onnx ...]

Builds DIR/lib/libpasshost.so (default DIR: build) and tests/tools/dump_shapes.c,
runs dump_shapes on each model (default: models/*.onnx and tests/models/*.onnx),
runs onnx.shape_inference.infer_shapes on the same model, and compares every
value both know: dtype, rank, and each dim.  Prints the differences.

Exit status: 0 when they agree; 1 when they disagree on a dtype, a rank or a
static dim (both sides give a number and the numbers differ); 2 when
Debian's python3-onnx is missing or the tools cannot be built.  Differences
in dim names, and dims only one side knows, are listed but not failures.
"""
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(msg, code=2):
    print("compare_onnx_shapes: " + msg, file=sys.stderr)
    sys.exit(code)


try:
    import onnx
    from onnx import shape_inference
except ImportError:
    fail("python3-onnx is not installed (apt-get install python3-onnx); nothing compared")


def build(build_dir):
    lib = os.path.join(build_dir, "lib", "libpasshost.so")
    r = subprocess.run(["make", "--no-print-directory", "BUILD=" + build_dir, lib], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        fail("cannot build %s:\n%s" % (lib, r.stderr))
    exe = os.path.join(build_dir, "tools", "dump_shapes")
    os.makedirs(os.path.dirname(os.path.join(ROOT, exe)), exist_ok=True)
    libdir = os.path.join(ROOT, build_dir, "lib")
    san = ["-fsanitize=address,undefined"] if "san" in os.path.basename(build_dir) else []
    r = subprocess.run(["cc", "-std=c11", "-O1", "-g"] + san + ["-Isdk/include", "tests/tools/dump_shapes.c",
                        "-L" + libdir, "-lpasshost", "-Wl,-rpath," + libdir, "-o", exe],
                       cwd=ROOT, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        fail("cannot build dump_shapes:\n" + r.stderr)
    return os.path.join(ROOT, exe)


def passhost_shapes(exe, path):
    r = subprocess.run([exe, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    out = {}
    for line in r.stdout.splitlines():
        name, dtype, dims = line.split("\t")
        out[name] = (dtype, None if dims == "?" else [d for d in dims[1:-1].split(",") if d != ""])
    return out, None


def onnx_shapes(path):
    model = onnx.load(path)
    try:
        inferred = shape_inference.infer_shapes(model, data_prop=True)
    except TypeError:  # onnx before 1.10 has no data propagation
        inferred = shape_inference.infer_shapes(model)
    out = {}

    def visit(g):
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if t is None:
                continue
            dtype = onnx.TensorProto.DataType.Name(t.elem_type).lower() if t.elem_type else "?"
            dims = None
            if t.HasField("shape"):
                dims = []
                for d in t.shape.dim:
                    dims.append(str(d.dim_value) if d.HasField("dim_value")
                                else d.dim_param if d.HasField("dim_param") else "?")
            out[vi.name] = (dtype, dims)
        for n in g.node:
            for a in n.attribute:
                if a.HasField("g"):
                    visit(a.g)
                for sg in a.graphs:
                    visit(sg)

    visit(inferred.graph)
    return out


def compare(path, exe):
    ours, err = passhost_shapes(exe, path)
    if ours is None:
        print("%s: passhost inference failed: %s" % (path, err))
        return 1, 0
    theirs = onnx_shapes(path)
    bad = info = 0
    for name, (odt, odims) in sorted(theirs.items()):
        if name not in ours:
            continue
        pdt, pdims = ours[name]
        where = "%s: %s" % (os.path.relpath(path, ROOT), name)
        if odt != "?" and pdt != "?" and odt != pdt:
            print("DIFF  %s: dtype passhost %s, onnx %s" % (where, pdt, odt))
            bad += 1
            continue
        if odims is None or pdims is None:
            if odims != pdims:
                print("info  %s: rank known only to %s" % (where, "passhost" if odims is None else "onnx"))
                info += 1
            continue
        if len(odims) != len(pdims):
            print("DIFF  %s: rank passhost %d %s, onnx %d %s" % (where, len(pdims), pdims, len(odims), odims))
            bad += 1
            continue
        for i, (p, o) in enumerate(zip(pdims, odims)):
            if p.isdigit() and o.isdigit():
                if p != o:
                    print("DIFF  %s: dim %d passhost %s, onnx %s" % (where, i, p, o))
                    bad += 1
            elif p != o and not (o.startswith("unk__") and p == "?"):
                print("info  %s: dim %d passhost %s, onnx %s" % (where, i, p, o))
                info += 1
    compared = sum(1 for n in theirs if n in ours)
    print("%s: %d values compared, %d disagreements, %d notes" % (os.path.relpath(path, ROOT), compared, bad, info))
    return bad, compared


def main():
    args = sys.argv[1:]
    build_dir = "build"
    if len(args) >= 2 and args[0] == "--build":
        build_dir, args = args[1], args[2:]
    models = args or sorted(glob.glob(os.path.join(ROOT, "models", "*.onnx")) +
                            glob.glob(os.path.join(ROOT, "tests", "models", "*.onnx")))
    exe = build(build_dir)
    total_bad = 0
    for m in models:
        bad, _ = compare(os.path.abspath(m), exe)
        total_bad += bad
    if total_bad:
        print("compare_onnx_shapes: %d disagreements on dtypes, ranks or static dims" % total_bad)
        return 1
    print("compare_onnx_shapes: passhost and onnx %s agree on every static dim" % onnx.__version__)
    return 0


if __name__ == "__main__":
    sys.exit(main())
