"""What the two toolkit interfaces share (rknnlite.api.RKNNLite, rknnxx.toolkit.RKNN): their
conventions (0 or -1 after a printed line, never an exception), a runtime context, inference with
the toolkits' arguments, the SDK version. docs/python.md describes both."""

from __future__ import annotations

import os
import sys
from typing import Optional

import numpy as np

from . import Context, Error


class ScriptInterface:
    _name = "rknnxx"

    def __init__(self, verbose: bool = False, verbose_file: Optional[str] = None):
        self.verbose = verbose
        self._verbose_file = verbose_file
        self._context: Optional[Context] = None
        self._model: Optional[bytes] = None  # the model file init_runtime opens

    # ---- messages: 'E' always (stderr), the rest when verbose ------------------------------------------
    def _log(self, level: str, message: str) -> None:
        line = f"{level} {self._name}: {message}"
        if level == "E" or self.verbose:
            print(line, file=sys.stderr if level in ("E", "W") else sys.stdout)
        if self.verbose and self._verbose_file:
            with open(self._verbose_file, "a", encoding="utf-8") as f:
                f.write(line + "\n")

    def _fail(self, message: str, result=-1):
        self._log("E", message)
        return result

    def _read_file(self, call: str, path: str) -> Optional[bytes]:
        """The bytes of a file, or None after printing why they cannot be read."""
        if not path or not os.path.isfile(path):
            return self._fail(f"{call}: the file {path!r} does not exist", None)
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as e:
            return self._fail(f"{call}: cannot read {path!r}: {e}", None)

    def load_rknn(self, path: str) -> int:
        """Reads a model file (for init_runtime). Returns 0, or -1 when it cannot be read."""
        model = self._read_file("load_rknn", path)
        if model is None:
            return -1
        self._model = model
        return 0

    # ---- the runtime -----------------------------------------------------------------------------------
    def _open(self, model: bytes, runtime: Optional[str], core_mask: int) -> int:
        self.release()
        try:
            context = Context(model, runtime)
            if core_mask != 0:
                context.set_core_mask(core_mask)
        except Error as e:
            return self._fail(f"init_runtime: {e}")
        self._context = context
        info = context.runtime
        self._log("I", f"runtime {info.path} ({info.kind}), SDK {info.api_version}, driver {info.driver_version}")
        return 0

    def inference(self, inputs, data_type: Optional[str] = None, data_format=None, inputs_pass_through=None,
                  get_frame_id: bool = False):
        """Runs the model. inputs: a list of numpy arrays in input order; data_type: a numpy type name the
        arrays are converted to first; data_format: 'nhwc' (default) or 'nchw', one for all (a string or a
        one-element list) or a list per input; inputs_pass_through: a list of 0/1 per input. Returns the
        outputs as a list of float32 numpy arrays, or None after printing why."""
        if self._context is None:
            return self._fail("inference: the runtime is not initialized: call init_runtime first", None)
        if get_frame_id:
            self._log("W", "inference: get_frame_id is for async_mode, which is not supported")
        try:
            arrays = [inputs] if isinstance(inputs, np.ndarray) else list(inputs)
            if data_type is not None:
                arrays = [np.asarray(a, dtype=np.dtype(data_type)) for a in arrays]
            if isinstance(data_format, (list, tuple)) and len(data_format) != len(arrays):
                if len(data_format) != 1:
                    return self._fail(f"inference: {len(data_format)} data formats for {len(arrays)} inputs", None)
                data_format = list(data_format) * len(arrays)
            pass_through = [bool(p) for p in inputs_pass_through] if inputs_pass_through is not None else False
            return self._context.run(arrays, data_format, pass_through=pass_through)
        except (Error, TypeError, ValueError) as e:
            return self._fail(f"inference: {e}", None)

    def get_sdk_version(self) -> Optional[str]:
        """The runtime's versions ("API: ...\\nDRV: ..."), or None before init_runtime."""
        if self._context is None:
            return self._fail("get_sdk_version: the runtime is not initialized: call init_runtime first", None)
        api, driver = self._context.sdk_version
        return f"API: {api}\nDRV: {driver}"

    def release(self) -> None:
        """Destroys the runtime context."""
        if self._context is not None:
            self._context.close()
            self._context = None
