"""rknnxx.toolkit.RKNN: RKNN-Toolkit2's conversion interface over the host converter, so that a toolkit
conversion script makes a host model with only its import line changed
(`from rknnxx.toolkit import RKNN`). docs/python.md lists what each method does here.

The toolkit's conventions are kept: 0 on success, -1 on failure after a printed line (inference
returns None); nothing raises.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
from typing import List, Optional

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


@dataclasses.dataclass(frozen=True)
class Similarity:
    """How close the quantized values of a tensor are to the float ones: cosine similarity (1: the same
    direction) and euclidean distance (sqrt of the summed squared differences). NaN for non-finite values."""
    cosine: float
    euclidean: float


@dataclasses.dataclass(frozen=True)
class LayerAccuracy:
    """One tensor of accuracy_analysis, in execution order (graph inputs first). entire: the quantized
    model run end to end (the error of every layer before it included); single: the layer run quantized on
    the float values of its inputs (its own error)."""
    index: int
    name: str
    op_type: str   # the operator producing the tensor; 'input' for a graph input
    node: str      # the producing node's name; '' for a graph input
    entire: Similarity
    single: Similarity


def _csv_field(text: str) -> str:
    if not any(c in text for c in ',"\n\r'):
        return text
    return '"' + text.replace('"', '""') + '"'


def _json_number(value: float):
    return value if math.isfinite(value) else None  # JSON has no NaN


class RKNN(ScriptInterface):
    _name = "RKNN"

    def __init__(self, verbose: bool = False, verbose_file: Optional[str] = None):
        super().__init__(verbose, verbose_file)
        self._config: dict = {}
        self._onnx: Optional[bytes] = None
        self._onnx_path: Optional[str] = None
        self._dataset: Optional[str] = None
        self._quantized: Optional[bytes] = None  # what build(do_quantization=True) made
        self.accuracy_results: List[LayerAccuracy] = []  # what the last accuracy_analysis measured

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
        self._onnx_path = model
        return 0

    def build(self, do_quantization: bool = True, dataset: Optional[str] = None, rknn_batch_size=None,
              auto_hybrid: bool = False) -> int:
        """Converts the loaded model with the config into a host model: float16 (the toolkit's float_dtype),
        or with do_quantization=True w8a8 calibrated on the dataset's samples (a text file, one sample per
        line: one .jpg/.png/.bmp image or .npy array per model input; relative paths from the file's folder),
        with the config's quantized_dtype, quantized_algorithm and quantized_method, as
        `rknnxx convert --dataset` does. auto_hybrid=True keeps in float16 the layers whose output falls
        past the config's auto_hybrid_cos_thresh (or auto_hybrid_euc_thresh), as `--auto-hybrid` does."""
        if _converter is None:
            return self._fail("build: this rknnxx was built without the host runtime, which holds the converter")
        if self._onnx is None:
            return self._fail("build: no model is loaded: call load_onnx first")
        if rknn_batch_size not in (None, 1):
            return self._fail(f"build: rknn_batch_size={rknn_batch_size} is not supported")
        if auto_hybrid and not do_quantization:
            return self._fail("build: auto_hybrid=True quantizes: it needs do_quantization=True and a dataset")
        if do_quantization:
            if dataset is None:
                return self._fail("build: do_quantization=True needs a dataset (a text file listing the calibration "
                                  "samples), or call build(do_quantization=False)")
            if not os.path.isfile(dataset):
                return self._fail(f"build: the dataset {dataset!r} does not exist")
        dataset = os.fspath(dataset) if do_quantization else None
        try:
            model = _converter.convert(self._onnx, json.dumps(self._config), dataset, auto_hybrid)
        except (RuntimeError, ValueError) as e:
            self._model = self._quantized = None  # what an earlier build made is not this config's
            return self._fail(f"build: {e}")
        self._model = model
        self._quantized = model if do_quantization else None
        self._dataset = dataset
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

    def accuracy_analysis(self, inputs, output_dir: Optional[str] = "./snapshot", target: Optional[str] = None,
                          device_id: Optional[str] = None) -> int:
        """Compares the quantized model build() made with the float model, per tensor, on one input set:
        inputs lists one file per model input (an image or an .npy array, as a dataset line) or numpy arrays
        (the model's shape, NCHW for images, taken as a dataset's .npy arrays: before mean/std). Writes
        accuracy.csv, accuracy.json and error_analysis.txt into output_dir (None: nothing written) and keeps
        the numbers in self.accuracy_results (a list of LayerAccuracy). Returns 0, or -1 after printing why."""
        self.accuracy_results = []
        if _converter is None:
            return self._fail("accuracy_analysis: this rknnxx was built without the host runtime, which holds the "
                              "quantizer")
        if self._quantized is None:
            return self._fail("accuracy_analysis: the model is not quantized: call build(do_quantization=True, "
                              "dataset=...) first")
        if target is not None or device_id is not None:
            self._log("W", "accuracy_analysis: target and device_id are ignored: the quantized model is compared "
                           "with the float model on the host")
        items = [inputs] if isinstance(inputs, (str, os.PathLike, np.ndarray)) else list(inputs)
        with tempfile.TemporaryDirectory(prefix="rknnxx_accuracy_") as scratch:
            files = []
            for i, item in enumerate(items):
                if isinstance(item, np.ndarray):
                    path = os.path.join(scratch, f"input_{i}.npy")
                    np.save(path, np.ascontiguousarray(item))
                    files.append(path)
                elif isinstance(item, (str, os.PathLike)):
                    files.append(os.fspath(item))
                else:
                    return self._fail(f"accuracy_analysis: inputs[{i}] is a {type(item).__name__}, not a file path "
                                      "or a numpy array")
            try:
                report = _converter.accuracy(self._quantized, json.dumps(self._config), files)
            except (RuntimeError, ValueError) as e:
                message = str(e)
                for i, (item, path) in enumerate(zip(items, files)):  # the arrays by their place, not the scratch file
                    if isinstance(item, np.ndarray):
                        message = message.replace(path, f"inputs[{i}] (an array)")
                return self._fail(f"accuracy_analysis: {message}")
        self.accuracy_results = [
            LayerAccuracy(i, name, op, node, Similarity(ec, ee), Similarity(sc, se))
            for i, (name, op, node, ec, ee, sc, se) in enumerate(report["layers"])]
        input_names = [os.fspath(f) if isinstance(f, (str, os.PathLike)) else f"<array {i}>"
                       for i, f in enumerate(items)]
        table = self._accuracy_table(report, input_names)
        if self.verbose:
            print(table, end="")
        if output_dir is not None:
            return self._write_accuracy(output_dir, report, input_names, table)
        return 0

    def _accuracy_table(self, report: dict, input_names: List[str]) -> str:
        """The table `rknnxx accuracy` prints."""
        layers = self.accuracy_results
        name_width = max([4] + [min(len(l.name), 48) for l in layers])
        op_width = max([7] + [len(l.op_type) for l in layers])
        short = lambda text: text if len(text) <= 48 else text[:45] + "..."
        samples = report["samples"]
        lines = [f"w8a8 ({report['algorithm']}, {report['method']}) against float32, calibrated on {samples} "
                 f"sample{'' if samples == 1 else 's'}; inputs: {' '.join(input_names)}",
                 f"  {'#':>5}  {'name':<{name_width}}  {'op_type':<{op_width}}  {'entire cos':>12}  {'entire euc':>12}  "
                 f"{'single cos':>12}  {'single euc':>12}"]
        for l in layers:
            lines.append(f"  {l.index:>5}  {short(l.name):<{name_width}}  {l.op_type:<{op_width}}  "
                         f"{l.entire.cosine:>12.6f}  {l.entire.euclidean:>12.5g}  {l.single.cosine:>12.6f}  "
                         f"{l.single.euclidean:>12.5g}")
        return "\n".join(lines) + "\n"

    def _write_accuracy(self, output_dir: str, report: dict, input_names: List[str], table: str) -> int:
        """accuracy.csv and accuracy.json with the columns and keys `rknnxx accuracy` writes, and the table
        as error_analysis.txt (the toolkit's file name)."""
        csv_path = os.path.join(output_dir, "accuracy.csv")
        json_path = os.path.join(output_dir, "accuracy.json")
        text_path = os.path.join(output_dir, "error_analysis.txt")
        csv = ["index,name,op_type,node,entire_cosine,entire_euclidean,single_cosine,single_euclidean"]
        for l in self.accuracy_results:
            csv.append(f"{l.index},{_csv_field(l.name)},{_csv_field(l.op_type)},{_csv_field(l.node)},"
                       f"{l.entire.cosine:.6f},{l.entire.euclidean:.6g},{l.single.cosine:.6f},{l.single.euclidean:.6g}")
        similarity = lambda s: {"cosine": _json_number(s.cosine), "euclidean": _json_number(s.euclidean)}
        document = {
            "model": self._onnx_path, "config": self._config, "dataset": self._dataset,
            "quantized_dtype": "w8a8", "quantized_algorithm": report["algorithm"],
            "quantized_method": report["method"], "calibration_samples": report["samples"], "inputs": input_names,
            "layers": [{"index": l.index, "name": l.name, "op_type": l.op_type, "node": l.node,
                        "entire": similarity(l.entire), "single": similarity(l.single)}
                       for l in self.accuracy_results],
            "files": {"csv": csv_path, "json": json_path, "txt": text_path},
        }
        try:
            os.makedirs(output_dir, exist_ok=True)
            with open(csv_path, "w", encoding="utf-8") as f:
                f.write("\n".join(csv) + "\n")
            with open(json_path, "w", encoding="utf-8") as f:
                f.write(json.dumps(document, indent=2) + "\n")
            with open(text_path, "w", encoding="utf-8") as f:
                f.write(table)
        except OSError as e:
            return self._fail(f"accuracy_analysis: cannot write the results into {output_dir!r}: {e}")
        self._log("I", f"accuracy_analysis: written {csv_path}, {json_path}, {text_path}")
        return 0
