"""tests/python_api.py - the Python module (python/passhost) against the
passhost program: optimize() must give the very bytes `passhost IN OUT
OPTIONS` writes, for every way the model goes in (onnx.ModelProto, bytes,
bytearray, a path as str or pathlib.Path) and out (ModelProto, bytes, a
path), with passes, skip, input_shapes, verify, config (file and text),
sets and further options; failures raise PasshostError with the program's
exit code and message and leave no output file.

    PASSHOST_LIB=build/lib/libpasshost-pipeline.so PYTHONPATH=python \\
        /usr/bin/python3 tests/python_api.py build

Run by tests/python_api.sh (make test), with Debian's python3 and
python3-onnx.  The argument is the build tree whose bin/passhost is compared
with the library named by PASSHOST_LIB.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest

import onnx

import passhost

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "build").resolve()
PASSHOST = BUILD / "bin" / "passhost"
MODELS = [ROOT / "models" / "cnn_small.onnx", ROOT / "models" / "transformer_block.onnx",
          ROOT / "tests" / "models" / "control_flow.onnx",
          ROOT / "tests" / "models" / "unknown_fields.onnx"]
CNN = MODELS[0]

# (optimize() keywords, the same as program options), run on each model
CASES = [
    ({}, []),
    ({"passes": ["eliminate_identity", "fuse_conv_bn"]}, ["--passes=eliminate_identity,fuse_conv_bn"]),
    ({"passes": "eliminate_identity"}, ["--passes=eliminate_identity"]),
    ({"skip": ["fuse_conv_bn", "constant_folding"]}, ["--skip=fuse_conv_bn,constant_folding"]),
    ({"verify": True}, ["--verify"]),
    ({"verify": 2, "options": ["--no-fold"]}, ["--verify=2", "--no-fold"]),
    ({"sets": ["optimize.pass_off=eliminate_identity"], "options": "--shapes"},
     ["--set", "optimize.pass_off=eliminate_identity", "--shapes"]),
]


def cli(*args, ok=True):
    r = subprocess.run([str(PASSHOST), *map(str, args)], capture_output=True, text=True)
    if ok and r.returncode != 0:
        raise AssertionError("passhost %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="ph_python_api."))
        os.environ["TMPDIR"] = str(self.tmp)  # the library stages byte outputs there

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def program(self, model, options, name="cli.onnx", config=None):
        out = self.tmp / name
        if config:
            cli(config, "-i", model, "-o", out, "-q", *options)
        else:
            cli(model, out, "-q", *options)
        return out.read_bytes()

    def assert_nothing_left(self):
        left = [p.name for p in self.tmp.iterdir() if p.name.startswith(("passhost-pipeline.", "."))]
        self.assertEqual(left, [])


class SameBytesAsTheProgram(Base):
    def test_every_model_every_case_every_input(self):
        for model in MODELS:
            proto = onnx.load(str(model))
            data = model.read_bytes()
            for kw, options in CASES:
                with self.subTest(model=model.name, options=options):
                    out = self.tmp / "cli.onnx"
                    r = cli(model, out, "-q", *options, ok=False)
                    if r.returncode:  # e.g. 8: --verify on a model the evaluator cannot run
                        with self.assertRaises(passhost.PasshostError) as cm:
                            passhost.optimize(proto, **kw)
                        self.assertEqual((cm.exception.code, "passhost: %s\n" % cm.exception.message),
                                         (r.returncode, r.stderr.splitlines(True)[-1]))
                        continue
                    want = out.read_bytes()
                    # path in (str and pathlib), ModelProto out
                    self.assertEqual(passhost.optimize(str(model), **kw).SerializeToString(), want)
                    self.assertEqual(passhost.optimize(model, **kw).SerializeToString(), want)
                    # ModelProto, bytes, bytearray in; bytes out
                    self.assertEqual(passhost.optimize_bytes(proto, **kw), want)
                    self.assertEqual(passhost.optimize_bytes(data, **kw), want)
                    self.assertEqual(passhost.optimize_bytes(bytearray(data), **kw), want)
                    # a path out: returned as given, the file's bytes
                    out = self.tmp / "lib.onnx"
                    self.assertEqual(passhost.optimize(proto, output_path=out, **kw), out)
                    self.assertEqual(out.read_bytes(), want)
                    self.assertEqual(proto, onnx.load(str(model)))  # the input untouched
            self.assert_nothing_left()

    def test_input_shapes(self):
        want = self.program(CNN, ["--input-shape", "input:2,3,64,64"])
        self.assertEqual(passhost.optimize_bytes(CNN, input_shapes={"input": [2, 3, 64, 64]}), want)
        self.assertEqual(passhost.optimize_bytes(CNN, input_shapes=["input:2,3,64,64"]), want)
        self.assertEqual(passhost.optimize_bytes(CNN, input_shapes="input:2x3x64x64"), want)
        m = passhost.optimize(CNN, input_shapes={"input": [2, 3, 64, 64]})
        dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
        self.assertEqual(dims, [2, 3, 64, 64])
        # None keeps a dim
        want = self.program(CNN, ["--input-shape", "input:?,3,64,64"], "cli2.onnx")
        self.assertEqual(passhost.optimize_bytes(CNN, input_shapes={"input": [None, 3, 64, 64]}),
                         want)

    def test_config_file_and_text(self):
        ini = self.tmp / "run.ini"
        ini.write_text("[optimize]\npass_off = fuse_conv_bn\n")
        want = self.program(CNN, [], config=ini)
        self.assertEqual(passhost.optimize_bytes(CNN, config=ini), want)
        self.assertEqual(passhost.optimize_bytes(CNN, config=str(ini)), want)
        self.assertEqual(passhost.optimize_bytes(CNN, config="[optimize]\npass_off = fuse_conv_bn\n"),
                         want)
        self.assertEqual(passhost.optimize_bytes(CNN, config_text="[optimize]\npass_off = fuse_conv_bn"),
                         want)
        # [model] paths of the file name the input and output
        (self.tmp / "in.onnx").write_bytes(CNN.read_bytes())
        ini.write_text("[model]\ninput = in.onnx\noutput = out.onnx\n")
        cli(ini, "-q")
        want = (self.tmp / "out.onnx").read_bytes()
        (self.tmp / "out.onnx").unlink()
        self.assertEqual(passhost.optimize_bytes(self.tmp / "in.onnx", config=ini), want)


class Errors(Base):
    def expect(self, code, fragment, *args, ran=True, **kw):
        """A failure; ran: of the run (with a log), not of an option refused at once."""
        with self.assertRaises(passhost.PasshostError) as cm:
            passhost.optimize(*args, **kw)
        e = cm.exception
        self.assertEqual(e.code, code, e.message)
        self.assertIn(fragment, e.message)
        if ran:
            self.assertIn("passhost: " + e.message, e.log)
        self.assertIn("exit code %d" % code, str(e))
        return e

    def test_bad_model(self):
        e = self.expect(passhost.MODEL, "<memory>", b"\x08\x07\x12\xffgarbage")
        self.expect(passhost.MODEL, "missing.onnx", self.tmp / "missing.onnx")
        bad = self.tmp / "bad.onnx"
        bad.write_bytes(b"\x08\x07\x12\xffgarbage")
        out = self.tmp / "out.onnx"
        e = self.expect(passhost.MODEL, "bad.onnx", bad, output_path=out)
        r = cli(bad, out, ok=False)  # the program: the same code and line
        self.assertEqual((r.returncode, r.stderr), (e.code, "passhost: %s\n" % e.message))
        self.assertFalse(out.exists())
        self.assert_nothing_left()

    def test_bad_pass_name(self):
        out = self.tmp / "out.onnx"
        e = self.expect(passhost.CONFIG, "unknown pass 'fuse_conv_bm'", CNN,
                        passes=["fuse_conv_bm"], output_path=out)
        r = cli(CNN, out, "--passes=fuse_conv_bm", ok=False)
        self.assertEqual((r.returncode, r.stderr), (e.code, "passhost: %s\n" % e.message))
        self.expect(passhost.CONFIG, "no_such_pass", CNN, skip="no_such_pass", output_path=out)
        self.assertFalse(out.exists())

    def test_bad_options(self):
        self.expect(passhost.CONFIG, "NAME:DIMS", CNN, input_shapes=["input:1,x"], ran=False)
        self.expect(passhost.CONFIG, "no_such_key", CNN, sets=["optimize.no_such_key=1"], ran=False)
        self.expect(passhost.USAGE, "--verify", CNN, verify=-5, ran=False)
        self.expect(passhost.USAGE, "not an option of the library", CNN, options=["--bisect"],
                    ran=False)
        self.expect(passhost.USAGE, "not an option of the library", CNN, options=["-o", "x.onnx"],
                    ran=False)
        self.expect(passhost.CONFIG, "nope.ini", CNN, config=self.tmp / "nope.ini")
        self.expect(passhost.CONFIG, "<config text>:2", CNN, config="[optimize]\nbad key\n")
        self.expect(passhost.OUTPUT, "never overwrites its input", CNN, output_path=CNN)
        self.expect(passhost.OUTPUT, "external-data file", CNN,
                    sets="model.external_data_threshold=0")
        with self.assertRaises(TypeError):
            passhost.optimize(42)
        self.assert_nothing_left()


class Library(unittest.TestCase):
    def test_found_and_versioned(self):
        self.assertEqual(os.path.realpath(passhost.library_path()),
                         os.path.realpath(os.environ["PASSHOST_LIB"]))
        r = cli("--version")
        self.assertIn("passhost %s " % passhost.version(), r.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
