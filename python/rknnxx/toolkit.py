"""rknnxx.toolkit.RKNN: RKNN-Toolkit2's conversion interface over the host converter, so that a toolkit
conversion script makes a host model with only its import line changed
(`from rknnxx.toolkit import RKNN`). docs/python.md lists what each method does here.

The toolkit's conventions are kept: 0 on success, -1 on failure after a printed line (inference
returns None); nothing raises.
"""

from __future__ import annotations

import json
from typing import Optional

import numpy as np

from ._script import ScriptInterface

try:
    from . import _converter
except ImportError:  # built without the host runtime
    _converter = None


def _plain(value):
    """numpy values in config() as the JSON lists and numbers CONFIG.json holds."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class RKNN(ScriptInterface):
    _name = "RKNN"

    def __init__(self, verbose: bool = False, verbose_file: Optional[str] = None):
        super().__init__(verbose, verbose_file)
        self._config: dict = {}
        self._onnx: Optional[bytes] = None

    def config(self, **kwargs) -> int:
        """The conversion parameters, with the keys of CONFIG.json (mean_values, std_values,
        target_platform, dynamic_input, ...); the converter checks them at build(), naming the key."""
        self._config.update({k: _plain(v) for k, v in kwargs.items()})
        return 0

    def load_onnx(self, model: str, inputs=None, input_size_list=None, input_initial_val=None, outputs=None) -> int:
        """Reads the ONNX model. Cutting the graph at other inputs or outputs is not supported."""
        if inputs is not None or input_size_list is not None or input_initial_val is not None or outputs is not None:
            return self._fail("load_onnx: inputs, input_size_list, input_initial_val and outputs are not supported by "
                              "the host converter: export the ONNX model with the inputs and outputs to convert")
        onnx = self._read_file("load_onnx", model)
        if onnx is None:
            return -1
        self._onnx = onnx
        return 0

    def build(self, do_quantization: bool = True, dataset: Optional[str] = None, rknn_batch_size=None) -> int:
        """Converts the loaded model with the config into a host model (float16, as the toolkit's
        float_dtype). Quantization is not available from Python yet: do_quantization=True is refused."""
        if _converter is None:
            return self._fail("build: this rknnxx was built without the host runtime, which holds the converter")
        if self._onnx is None:
            return self._fail("build: no model is loaded: call load_onnx first")
        if do_quantization:
            return self._fail("build: do_quantization=True is not supported from Python yet (rknnxx's converter "
                              "quantizes through `rknnxx convert`); call build(do_quantization=False)")
        if rknn_batch_size not in (None, 1):
            return self._fail(f"build: rknn_batch_size={rknn_batch_size} is not supported")
        try:
            self._model = _converter.convert(self._onnx, json.dumps(self._config))
        except (RuntimeError, ValueError) as e:
            return self._fail(f"build: {e}")
        return 0

    def export_rknn(self, export_path: str) -> int:
        """Writes the built model (a host model: the host runtime and rknnlite.api run it)."""
        if self._model is None:
            return self._fail("export_rknn: no model is built: call build first")
        try:
            with open(export_path, "wb") as f:
                f.write(self._model)
        except OSError as e:
            return self._fail(f"export_rknn: cannot write {export_path!r}: {e}")
        return 0

    def init_runtime(self, target: Optional[str] = None, device_id: Optional[str] = None, perf_debug: bool = False,
                     eval_mem: bool = False, async_mode: bool = False, core_mask: int = 0) -> int:
        """target=None runs the model on the host runtime (the toolkit's simulator); a target runs it on
        the runtime RKNNXX_RUNTIME chooses (on a board, the vendor runtime) rather than over adb."""
        if self._model is None:
            return self._fail("init_runtime: no model: call build or load_rknn first")
        if device_id is not None or perf_debug or eval_mem or async_mode:
            self._log("W", "init_runtime: device_id, perf_debug, eval_mem and async_mode are ignored")
        return self._open(self._model, "host" if target is None else None, core_mask)

    def accuracy_analysis(self, *args, **kwargs) -> int:
        return self._fail("accuracy_analysis: not available from Python yet (it needs quantization)")
