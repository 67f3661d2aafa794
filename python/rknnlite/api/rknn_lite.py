"""RKNNLite: RKNN-Toolkit-Lite2's documented interface over rknnxx.Context, so that a Lite2 script runs
unchanged on a PC (host runtime) and on a board (vendor runtime). docs/python.md lists what each
method takes and returns, and where rknnxx differs.

Lite2's conventions, kept here: methods return 0 on success and -1 on failure (inference returns
None), after printing one line that says what went wrong; they do not raise.
"""

from __future__ import annotations

import collections
import os
from typing import Optional

import rknnxx
from rknnxx._script import ScriptInterface


class RKNNLite(ScriptInterface):
    _name = "RKNNLite"

    # The values of the runtime's rknn_core_mask.
    NPU_CORE_AUTO = 0
    NPU_CORE_0 = 1
    NPU_CORE_1 = 2
    NPU_CORE_2 = 4
    NPU_CORE_0_1 = 3
    NPU_CORE_0_1_2 = 7
    NPU_CORE_ALL = 0xFFFF

    def load_rknn(self, path: str, load_model_in_npu: bool = False) -> int:
        """Reads the model file. Returns 0, or -1 when it cannot be read."""
        if load_model_in_npu:
            self._log("W", "load_model_in_npu is not supported: the model is read from the file")
        return super().load_rknn(path)

    def init_runtime(self, target: Optional[str] = None, device_id: Optional[str] = None, async_mode: bool = False,
                     core_mask: int = NPU_CORE_AUTO) -> int:
        """Opens the loaded model on the runtime (RKNNXX_RUNTIME, else the vendor runtime when it loads,
        else the host runtime) and sets the core mask. Returns 0, or -1 with the runtime's message."""
        if self._model is None:
            return self._fail("init_runtime: no model is loaded: call load_rknn first")
        if target is not None or device_id is not None:
            self._log("W", f"init_runtime: target={target!r} device_id={device_id!r} ignored: the model runs here")
        if async_mode:
            self._log("W", "init_runtime: async_mode is not supported: inference runs synchronously")
        return self._open(self._model, None, core_mask)

    def list_support_target_platform(self, rknn_model: Optional[str] = None):
        """Prints and returns the platforms rknnxx runs models for ('support_target_platform') and, for a
        host model, the one it was converted for ('filled_target_platform')."""
        if rknn_model is not None and not os.path.isfile(rknn_model):
            return self._fail(f"list_support_target_platform: the model file {rknn_model!r} does not exist", None)
        support = [name for name, _cores in rknnxx.platforms()]
        filled = []
        if rknn_model is not None:
            platform = _host_model_platform(rknn_model)
            if platform:
                filled = [platform]
        result = collections.OrderedDict([("filled_target_platform", filled), ("support_target_platform", support)])
        if filled:
            print("Target platforms filled in the model: " + ", ".join(filled))
        print("Target platforms supported by rknnxx: " + ", ".join(support))
        return result

    def list_devices(self):
        """No devices are attached: the model runs on this machine. Returns ([], [])."""
        print("No devices: rknnxx runs the model on this machine")
        return [], []


def _host_model_platform(path: str) -> Optional[str]:
    """The target platform a host model file records, upper case; None for any other file (or without
    the converter module, which builds with the host runtime)."""
    try:
        from rknnxx import _converter
    except ImportError:
        return None
    try:
        with open(path, "rb") as f:
            return _converter.model_info(f.read())["target_platform"].upper()
    except (OSError, RuntimeError):
        return None
