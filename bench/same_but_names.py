"""Exit 0 when two ONNX files are the same model but for names: node names,
and the names of values between nodes and of initializers (graph inputs and
outputs keep theirs), each numbered in order of appearance.  For
bench/same_outputs.sh.
    same_but_names.py A.onnx B.onnx"""
import sys

import onnx


def normalized(path):
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    keep = {v.name for v in list(g.input) + list(g.output)}
    ren = {}
    for t in g.initializer:
        if t.name not in keep:
            ren[t.name] = f"i{len(ren)}"
            t.name = ren[t.name]

    def name(x):
        if x == "" or x in keep:
            return x
        if x not in ren:
            ren[x] = f"v{len(ren)}"
        return ren[x]

    def walk(gr):
        for n in gr.node:
            n.name = ""
            for i, x in enumerate(n.input):
                n.input[i] = name(x)
            for i, x in enumerate(n.output):
                n.output[i] = name(x)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)
        for v in gr.value_info:
            v.name = name(v.name)

    walk(g)
    return m.SerializeToString()


sys.exit(0 if normalized(sys.argv[1]) == normalized(sys.argv[2]) else 1)
