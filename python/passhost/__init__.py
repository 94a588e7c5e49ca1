"""passhost: rewrite ONNX models with passhost's pipeline, from Python.

    import passhost
    model = passhost.optimize("model.onnx", passes=["eliminate_identity", "fuse_conv_bn"],
                              input_shapes={"input": [1, 3, 224, 224]}, verify=True)
    passhost.optimize(model, output_path="out.onnx")      # an onnx.ModelProto in, a file out

optimize() runs what `passhost IN.onnx OUT.onnx --passes=... --skip=...
--input-shape ... --verify` runs, through libpasshost-pipeline.so
(passhost/pipeline.h) with ctypes: nothing to compile at install.  The
result is byte for byte the file the passhost program writes with the same
options.  A failure raises PasshostError with the program's exit code and
message.  docs/embedding.md is the guide.

The library is found, in this order: the file named by the environment
variable PASSHOST_LIB; libpasshost-pipeline.so next to this package; the
installed one (PREFIX/lib, for this package in
PREFIX/lib/python3/dist-packages/passhost); the build tree beside a source
checkout (build/lib); then the dynamic loader's search path.  The passes are
found by the library itself, as the program finds them: plugin_dir (the
plugin_dir argument), PASSHOST_PLUGIN_PATH, then the plugins folder of the
build tree or the installation the library belongs to.

onnx (Debian: python3-onnx) is needed only to pass or return an
onnx.ModelProto; optimize_bytes() works on paths and bytes without it.
"""

import ctypes
import os

__all__ = ["optimize", "optimize_bytes", "PasshostError", "library_path", "version"]

_LIB_NAME = "libpasshost-pipeline.so"

# The exit codes of the passhost program (passhost/pipeline.h).
OK, USAGE, CONFIG, MODEL, PLUGIN, PASS, OUTPUT, MISMATCH, NOVERIFY, CRASH = range(10)


class PasshostError(Exception):
    """A failed run: code is the passhost program's exit code (2: configuration,
    3: the input model cannot be loaded, 5: a pass failed, 7: --verify found
    other outputs, ...), message its one-line error, log all it would have
    printed."""

    def __init__(self, code, message, log=""):
        super().__init__("passhost: %s (exit code %d)" % (message, code))
        self.code = code
        self.message = message
        self.log = log


_lib = None
_lib_path = None


def _candidates():
    env = os.environ.get("PASSHOST_LIB")
    if env:  # named explicitly: that one or none
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [
        os.path.join(here, _LIB_NAME),
        os.path.normpath(os.path.join(here, "..", "..", "..", _LIB_NAME)),
        os.path.normpath(os.path.join(here, "..", "..", "build", "lib", _LIB_NAME)),
        _LIB_NAME + ".1",
    ]


def _declare(lib):
    vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    lib.ph_pipeline_new.restype = vp
    lib.ph_pipeline_new.argtypes = []
    lib.ph_pipeline_free.restype = None
    lib.ph_pipeline_free.argtypes = [vp]
    for name in ("config_file", "config_text", "set", "passes", "skip", "input_shape",
                 "plugin_dir", "option"):
        f = getattr(lib, "ph_pipeline_" + name)
        f.restype = ci
        f.argtypes = [vp, cp]
    lib.ph_pipeline_verify.restype = ci
    lib.ph_pipeline_verify.argtypes = [vp, ci]
    lib.ph_pipeline_full_report.restype = None
    lib.ph_pipeline_full_report.argtypes = [vp, ci]
    lib.ph_pipeline_run.restype = ci
    lib.ph_pipeline_run.argtypes = [vp, cp, cp, ctypes.c_size_t, cp,
                                    ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t)]
    lib.ph_pipeline_free_buffer.restype = None
    lib.ph_pipeline_free_buffer.argtypes = [vp]
    for name in ("error", "log"):
        f = getattr(lib, "ph_pipeline_" + name)
        f.restype = cp
        f.argtypes = [vp]
    lib.ph_pipeline_version.restype = cp
    lib.ph_pipeline_version.argtypes = []


def _library():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib
    raise OSError("passhost: cannot load %s; set PASSHOST_LIB to its path. Tried: %s"
                  % (_LIB_NAME, "; ".join(tried)))


def library_path():
    """The path of the libpasshost-pipeline.so in use (loading it if needed)."""
    _library()
    return _lib_path


def version():
    """The passhost version of the library ("0.1.0")."""
    return _library().ph_pipeline_version().decode()


def _text(value):
    return os.fsencode(value) if isinstance(value, os.PathLike) else str(value).encode()


def _names(value):
    if isinstance(value, (str, bytes)):
        return value.decode() if isinstance(value, bytes) else value
    return ",".join(str(v) for v in value)


def _shapes(input_shapes):
    """{'input': [1, 3, 224, 224]} or ['input:1,3,224,224'] or 'input:1,3,224,224'."""
    if input_shapes is None:
        return []
    if isinstance(input_shapes, str):
        return [input_shapes]
    if isinstance(input_shapes, dict):
        return ["%s:%s" % (name, ",".join("?" if d is None else str(d) for d in dims))
                for name, dims in input_shapes.items()]
    return [str(s) for s in input_shapes]


def _is_config_text(config):
    return isinstance(config, str) and ("\n" in config or config.lstrip().startswith("["))


class _Pipeline:
    """A ph_pipeline with its options; raises PasshostError for a refused one."""

    def __init__(self):
        self.lib = _library()
        self.p = self.lib.ph_pipeline_new()
        if not self.p:
            raise MemoryError("ph_pipeline_new")

    def close(self):
        if self.p:
            self.lib.ph_pipeline_free(self.p)
            self.p = None

    def check(self, code):
        if code:
            raise PasshostError(code, self.lib.ph_pipeline_error(self.p).decode(errors="replace"),
                                self.lib.ph_pipeline_log(self.p).decode(errors="replace"))

    def call(self, name, *args):
        self.check(getattr(self.lib, "ph_pipeline_" + name)(self.p, *args))


def _configure(pl, passes, skip, input_shapes, verify, config, config_text, sets, options,
               plugin_dir):
    if config is not None:
        if _is_config_text(config):
            pl.call("config_text", config.encode())
        else:
            pl.call("config_file", os.fsencode(config))
    if config_text is not None:
        pl.call("config_text", config_text.encode())
    for s in [sets] if isinstance(sets, str) else sets or []:
        pl.call("set", _text(s))
    if passes is not None:
        pl.call("passes", _names(passes).encode())
    if skip is not None:
        pl.call("skip", _names(skip).encode())
    for s in _shapes(input_shapes):
        pl.call("input_shape", s.encode())
    if verify is not None and verify is not False:
        runs = 0 if verify is True else int(verify)
        pl.call("verify", runs)
    if plugin_dir is not None:
        pl.call("plugin_dir", os.fsencode(plugin_dir))
    for o in [options] if isinstance(options, str) else options or []:
        pl.call("option", _text(o))


def _input(model_or_path):
    """(path, bytes): exactly one is not None."""
    if isinstance(model_or_path, (str, os.PathLike)):
        return os.fsencode(model_or_path), None
    if isinstance(model_or_path, (bytes, bytearray, memoryview)):
        return None, bytes(model_or_path)
    if hasattr(model_or_path, "SerializeToString"):  # onnx.ModelProto
        return None, model_or_path.SerializeToString()
    raise TypeError("passhost: want an onnx.ModelProto, bytes or a path, not %s"
                    % type(model_or_path).__name__)


def _run(model_or_path, output_path, passes, skip, input_shapes, verify, config, config_text,
         sets, options, plugin_dir):
    in_path, in_bytes = _input(model_or_path)
    pl = _Pipeline()
    try:
        _configure(pl, passes, skip, input_shapes, verify, config, config_text, sets, options,
                   plugin_dir)
        out = ctypes.c_void_p()
        size = ctypes.c_size_t()
        want_bytes = output_path is None
        code = pl.lib.ph_pipeline_run(
            pl.p, in_path, in_bytes, len(in_bytes) if in_bytes is not None else 0,
            None if want_bytes else os.fsencode(output_path),
            ctypes.byref(out) if want_bytes else None, ctypes.byref(size) if want_bytes else None)
        pl.check(code)
        if not want_bytes:
            return output_path
        try:
            return ctypes.string_at(out, size.value) if size.value else b""
        finally:
            pl.lib.ph_pipeline_free_buffer(out)
    finally:
        pl.close()


def optimize_bytes(model_or_path, passes=None, skip=None, input_shapes=None, verify=False,
                   output_path=None, config=None, *, config_text=None, sets=None, options=None,
                   plugin_dir=None):
    """optimize(), returning the serialized model (bytes) instead of an
    onnx.ModelProto; needs no onnx module for a path or bytes input."""
    return _run(model_or_path, output_path, passes, skip, input_shapes, verify, config,
                config_text, sets, options, plugin_dir)


def optimize(model_or_path, passes=None, skip=None, input_shapes=None, verify=False,
             output_path=None, config=None, *, config_text=None, sets=None, options=None,
             plugin_dir=None):
    """Rewrite a model as `passhost IN.onnx OUT.onnx OPTIONS` does.

    model_or_path  an onnx.ModelProto, the model's bytes, or a path to it
                   (a model with external data must be given by path)
    passes         `--passes`: the optimize stage runs exactly these, in this
                   order (a list, or "a,b"), or a whole pipeline as
                   `passhost --print-pipeline` prints it
                   ("optimize(a,b<k=v>),adapt<target=ort>(c)"); None: the
                   default stages
    skip           `--skip`: these passes off in both stages (a list or "a,b")
    input_shapes   `--input-shape`: {"input": [1, 3, 224, 224]} (None for a
                   dim to keep), or ["input:1,3,224,224", ...]
    verify         `--verify`: True (the [verify] runs, default 3) or a number
                   of seeded random input sets; outputs must match
    output_path    write the result there and return output_path; None:
                   return an onnx.ModelProto
    config         an INI file's path (`passhost CONFIG.ini`), or INI text
                   (a string holding a newline or starting with '[')
    config_text    INI text, read after config
    sets           `--set SECTION.KEY=VALUE` strings (a list, or one string)
    options        further program options, one word each: "--no-fold",
                   "--verify-each", "--max-rewrites=N", "--report-json=F", ...
    plugin_dir     `--plugin-dir`: a folder searched for passes first

    Raises PasshostError (code, message, log) when the run fails; nothing
    is written then.
    """
    data = _run(model_or_path, output_path, passes, skip, input_shapes, verify, config,
                config_text, sets, options, plugin_dir)
    if output_path is not None:
        return data
    import onnx  # only here: paths and bytes need no onnx

    return onnx.load_model_from_string(data)
