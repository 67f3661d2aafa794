"""rknnxx from Python: the rknn runtime (the vendor's on a board, the host runtime elsewhere) over numpy.

    import rknnxx
    ctx = rknnxx.Context("model.hrknn")            # or Context(model_bytes, runtime="host")
    ctx.inputs[0].dims, ctx.outputs[0].dtype       # attributes as dataclasses
    out = ctx.run([image], data_format="nhwc")     # or a dict {name: array}; a list of numpy arrays back
    worker = ctx.dup()                             # a second context sharing the weights, for a thread

Errors are rknnxx.Error (a RuntimeError) with the runtime's code (e.code, e.code_name), the call and
the message. docs/python.md describes the package; rknnlite.api.RKNNLite is RKNN-Toolkit-Lite2's
interface over the same Context.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from typing import Mapping, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import Error, error_codes

__version__ = _native.__version__

__all__ = ["Binding", "Context", "Error", "Quantization", "RuntimeInfo", "ShapeSet", "TensorAttr", "error_codes", "load_runtime",
           "platforms", "__version__"]


@dataclasses.dataclass(frozen=True)
class Quantization:
    """Affine asymmetric quantization: value = (q - zero_point) * scale. Dynamic fixed point
    (w16a16i_dfp's int16 tensors) is the case scale = 2**-fl, zero_point = 0, with fl set."""
    scale: float
    zero_point: int
    fl: Optional[int] = None


@dataclasses.dataclass(frozen=True)
class TensorAttr:
    """A tensor's attributes as the runtime reports them (rknn_tensor_attr). 4-D inputs are NHWC."""
    index: int
    name: str
    dims: tuple
    dtype: str            # numpy's name of the element type ("float32", "int8", ...)
    type: str             # the runtime's name ("FP32", "INT8", ...)
    format: str           # "NHWC", "NCHW", "NC1HWC2" or "UNDEFINED"
    n_elems: int
    size: int
    w_stride: int
    h_stride: int
    size_with_stride: int
    pass_through: bool
    quantization: Optional[Quantization]  # None: plain values

    # rknn_tensor_attr's names for the quantization, for code written against the C struct.
    @property
    def qnt_type(self) -> str:
        """"AFFINE_ASYMMETRIC" for a quantized tensor (int8 of a w8a8 model), "DFP" for dynamic fixed
        point (int16 of a w16a16i_dfp model), else "NONE"."""
        if self.quantization is None:
            return "NONE"
        return "AFFINE_ASYMMETRIC" if self.quantization.fl is None else "DFP"

    @property
    def fl(self) -> int:
        """Dynamic fixed point's fraction length (0 otherwise, as in rknn_tensor_attr)."""
        return 0 if self.quantization is None or self.quantization.fl is None else self.quantization.fl

    @property
    def zp(self) -> int:
        """The zero point (0 for plain values)."""
        return 0 if self.quantization is None else self.quantization.zero_point

    @property
    def scale(self) -> float:
        """The scale (1.0 for plain values)."""
        return 1.0 if self.quantization is None else self.quantization.scale

    @classmethod
    def _from_native(cls, d: dict) -> "TensorAttr":
        q = d["quantization"]
        return cls(**{**d, "quantization": Quantization(*q) if q is not None else None})


@dataclasses.dataclass(frozen=True)
class ShapeSet:
    """The shapes a dynamic-shape model accepts: groups[g][i] is input i's shape in group g, in the
    runtime's order (NHWC for 4-D inputs); nchw() gives them in the model's framework order."""
    groups: tuple

    def __len__(self) -> int:
        return len(self.groups)

    def __getitem__(self, group: int) -> tuple:
        return self.groups[group]

    def nchw(self) -> tuple:
        def to_nchw(shape):
            return (shape[0], shape[3], shape[1], shape[2]) if len(shape) == 4 else shape
        return tuple(tuple(to_nchw(s) for s in group) for group in self.groups)


@dataclasses.dataclass(frozen=True)
class RuntimeInfo:
    """The runtime a context runs on: its file, 'vendor' or 'host', and its versions once known."""
    path: str
    kind: str
    api_version: Optional[str] = None
    driver_version: Optional[str] = None


def load_runtime(choice: Optional[str] = None) -> RuntimeInfo:
    """Loads the runtime: 'vendor', 'host', 'auto' or a file; None follows RKNNXX_RUNTIME (else auto:
    the vendor runtime when it loads, the host runtime otherwise)."""
    return RuntimeInfo(**_native.load_runtime(choice))


def platforms() -> list:
    """The platforms rknnxx knows, as (name, NPU cores)."""
    return _native.platforms()


def _param_invalid(call: str, message: str) -> Error:
    """An Error raised by the Python layer, shaped as the native module shapes them."""
    e = Error(f"{call}: {message}")
    e.code, e.code_name, e.call, e.message = error_codes["RKNN_ERR_PARAM_INVALID"], "RKNN_ERR_PARAM_INVALID", call, message
    return e


ArrayInputs = Union[np.ndarray, Sequence[np.ndarray], Mapping[str, np.ndarray]]
Formats = Union[None, str, Sequence[str], Mapping[str, str]]


class Context:
    """A model opened on the runtime. One Context may be used from several threads (calls are
    serialized); dup() makes a context per thread that runs in parallel, sharing the weights."""

    def __init__(self, model: Union[str, os.PathLike, bytes, bytearray, memoryview], runtime: Optional[str] = None,
                 *, flags: int = 0):
        if isinstance(model, _native.Context):  # from dup()
            self._handle = model
        else:
            self._handle = _native.Context(model, runtime, flags)
        self._input_names = [a["name"] for a in self._native.input_attrs("normal")]

    @property
    def _native(self) -> _native.Context:
        if self._handle is None:
            raise _param_invalid("rknnxx.Context", "the context was closed")
        return self._handle

    # ---- attributes -----------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return self._native.num_inputs

    @property
    def num_outputs(self) -> int:
        return self._native.num_outputs

    @property
    def inputs(self) -> list:
        """The inputs' attributes for the current shape."""
        return [TensorAttr._from_native(a) for a in self._native.input_attrs("current")]

    @property
    def outputs(self) -> list:
        """The outputs' attributes for the current shape."""
        return [TensorAttr._from_native(a) for a in self._native.output_attrs("current")]

    def input_attrs(self, query: str = "normal") -> list:
        """Attributes by query: 'normal', 'native', 'native_nhwc', 'current' or 'current_native'."""
        return [TensorAttr._from_native(a) for a in self._native.input_attrs(query)]

    def output_attrs(self, query: str = "normal") -> list:
        return [TensorAttr._from_native(a) for a in self._native.output_attrs(query)]

    # ---- dynamic shapes ---------------------------------------------------------------------------
    @property
    def shape_set(self) -> Optional[ShapeSet]:
        """The shapes the model accepts, or None for a static-shape model."""
        groups = self._native.shape_set()
        return ShapeSet(groups) if groups is not None else None

    @property
    def is_dynamic(self) -> bool:
        return self._native.shape_set() is not None

    @property
    def current_group(self) -> Optional[int]:
        """The shape group chosen last (by set_input_shapes or by run), None before the first."""
        return self._native.current_group

    def set_input_shapes(self, shapes: Union[int, Sequence[Sequence[int]]], order: str = "runtime") -> int:
        """Switches to a group of the shape set, given by its number or by one shape per input
        (order 'runtime': 4-D shapes NHWC, as the runtime reports them; 'nchw': the model's order).
        Returns the group. run() does this by itself from the shapes of its arrays."""
        if isinstance(shapes, int):
            return self._native.set_input_shapes(shapes)
        return self._native.set_input_shapes([list(s) for s in shapes], order)

    # ---- inference --------------------------------------------------------------------------------
    def run(self, inputs: ArrayInputs, data_format: Formats = "nhwc", *, pass_through: Union[bool, Sequence[bool]] = False,
            want_float: bool = True) -> list:
        """Runs the model on numpy arrays: one array, a list in input order, or a dict by input name.
        data_format says how 4-D arrays are laid out ('nhwc' or 'nchw'; one for all, or one per input);
        arrays of another rank are taken in the model's order. Inputs of another type than the model's
        are converted (and quantized) by the runtime. A dynamic-shape model switches to the group of
        the arrays' shapes. Returns the outputs as float32 arrays (dequantized), or with
        want_float=False in the model's types."""
        arrays = self._ordered(inputs, "inputs")
        n = len(arrays)
        if data_format is None or isinstance(data_format, str):
            formats = [data_format or "nhwc"] * n
        else:
            formats = [str(f) for f in self._ordered(data_format, "data_format")]
        flags = [bool(pass_through)] * n if isinstance(pass_through, (bool, int)) else [bool(p) for p in pass_through]
        return self._native.run(arrays, formats, flags, want_float)

    def _ordered(self, given, what: str) -> list:
        if isinstance(given, np.ndarray):
            return [given]
        if isinstance(given, Mapping):
            unknown = [k for k in given if k not in self._input_names]
            missing = [k for k in self._input_names if k not in given]
            if unknown or missing:
                raise _param_invalid("rknnxx.Context.run", f"{what} by name: " +
                                     (f"no input is named {', '.join(map(repr, unknown))}; " if unknown else "") +
                                     (f"missing {', '.join(map(repr, missing))}; " if missing else "") +
                                     f"the inputs are {', '.join(map(repr, self._input_names))}")
            return [given[name] for name in self._input_names]
        return list(given)

    # ---- the rest ----------------------------------------------------------------------------------
    def dup(self) -> "Context":
        """A second context for the same model sharing its weights (rknn_dup_context), e.g. per thread."""
        return Context(self._native.dup())

    def bind(self, input_dtype: Optional[str] = None, input_format: Optional[str] = None,
             output_dtype: Optional[str] = None, output_format: Optional[str] = None, *, native: bool = False) -> "Binding":
        """Zero-copy I/O: binds runtime memory to every input and output (rknnxx::IoBinding), in the
        model's types and layouts or the ones given (e.g. input_dtype='uint8', output_dtype='float32'),
        or the runtime's native layouts (native=True). Once a context has bound memory, its runs go
        through the binding; use dup() for a context that takes arrays with run()."""
        return Binding(self._native.bind(input_dtype, input_format, output_dtype, output_format, native))

    def set_core_mask(self, mask: int) -> None:
        """The NPU cores to run on (RK3588/RK3576): rknnlite.api.RKNNLite.NPU_CORE_* values."""
        self._native.set_core_mask(mask)

    @property
    def sdk_version(self) -> tuple:
        """(api_version, driver_version) as the runtime reports them."""
        return self._native.sdk_version()

    @property
    def custom_string(self) -> str:
        return self._native.custom_string()

    @property
    def last_run_us(self) -> int:
        """The duration of the last run in microseconds (RKNN_QUERY_PERF_RUN)."""
        return self._native.last_run_us()

    @property
    def runtime(self) -> RuntimeInfo:
        return RuntimeInfo(**self._native.runtime())

    def close(self) -> None:
        """Destroys the runtime context now (also done when the object goes); later calls raise Error."""
        self._handle = None

    def __enter__(self) -> "Context":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Binding:
    """Inputs and outputs in runtime memory, seen as numpy arrays inside `with` blocks:

        io = ctx.bind(input_dtype="uint8", output_dtype="float32")
        with io.input_buffer("image") as buf:    # writable; synced to the device when the block ends
            buf[...] = image                      # NHWC rows padded to w_stride are a strided view
        io.run()
        with io.output_buffer("pooled") as out:  # read-only; synced from the device when it starts
            scores = out.copy()

    Use the arrays inside their blocks only: outside them the memory is not synced (and a shape
    switch is refused while a block is open, since it may move the memory)."""

    def __init__(self, native):
        self._native = native

    def input_attr(self, tensor: Union[int, str]) -> TensorAttr:
        """The attributes an input is bound with (type, layout, strides)."""
        return TensorAttr._from_native(self._native.bound(True, tensor))

    def output_attr(self, tensor: Union[int, str]) -> TensorAttr:
        return TensorAttr._from_native(self._native.bound(False, tensor))

    def set_input_shapes(self, group: int) -> int:
        """Switches a dynamic-shape model to a group of its shape set and rebinds every tensor."""
        return self._native.set_input_shapes(group)

    def run(self) -> None:
        self._native.run()

    def input_buffer(self, tensor: Union[int, str]):
        """A writable numpy array over the input's memory, synced to the device when the block ends."""
        return self._window(True, tensor)

    def output_buffer(self, tensor: Union[int, str]):
        """A read-only numpy array over the output's memory, synced from the device when the block starts."""
        return self._window(False, tensor)

    @contextlib.contextmanager
    def _window(self, input: bool, tensor: Union[int, str]):
        window = self._native.open_window(input, tensor)
        try:
            yield window.array()
        finally:
            window.release()
