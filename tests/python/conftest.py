"""Models for the Python tests: small ONNX graphs made here, converted with the rknnxx tool
(RKNNXX_TOOL, set by tests/python/meson.build), each with a numpy reference."""

import json
import os
import pathlib
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

OPSET = [helper.make_opsetid("", 13)]

# The conv model's weights: fixed, so that the reference is the same in every process.
_rng = np.random.default_rng(7)
CONV_W = _rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5
CONV_B = _rng.standard_normal(4).astype(np.float32) * 0.1


def conv_reference(nchw: np.ndarray):
    """features = relu(conv3x3(x, pad 1)) [1,4,H,W] and pooled = mean over H, W [1,4]."""
    x = np.pad(nchw.astype(np.float32), ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, w = nchw.shape[2], nchw.shape[3]
    out = np.zeros((1, 4, h, w), np.float32)
    for dy in range(3):
        for dx in range(3):
            out += np.einsum("oc,nchw->nohw", CONV_W[:, :, dy, dx], x[:, :, dy:dy + h, dx:dx + w])
    features = np.maximum(out + CONV_B[None, :, None, None], 0)
    return features, features.mean(axis=(2, 3))


def _conv_graph(h, w):
    nodes = [
        helper.make_node("Conv", ["image", "w", "b"], ["conv"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv"], ["features"]),
        helper.make_node("ReduceMean", ["features"], ["pooled"], axes=[2, 3], keepdims=0),
    ]
    return helper.make_graph(
        nodes, "conv",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, h, w])],
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 4, h, w]),
         helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(CONV_W, "w"), numpy_helper.from_array(CONV_B, "b")])


def _two_inputs_graph():
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["a", "b"], ["product"])]
    return helper.make_graph(
        nodes, "two_inputs",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, [2, 5]),
         helper.make_tensor_value_info("product", TensorProto.FLOAT, [2, 5])])


def _convert(work: pathlib.Path, name: str, graph, config: dict) -> str:
    tool = os.environ.get("RKNNXX_TOOL")
    if not tool:
        pytest.fail("RKNNXX_TOOL is not set: run the tests through `meson test --suite python`")
    onnx_path = work / f"{name}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=OPSET), str(onnx_path))
    config_path = work / f"{name}.json"
    config_path.write_text(json.dumps(config))
    out = work / f"{name}.hrknn"
    done = subprocess.run([tool, "convert", str(onnx_path), "-c", str(config_path), "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"rknnxx convert {name} failed:\n{done.stdout}\n{done.stderr}"
    return str(out)


@pytest.fixture(scope="session")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def conv_model(work):
    """[1,3,8,8] image -> features [1,4,8,8], pooled [1,4], for RK3588 (3 cores)."""
    return _convert(work, "conv", _conv_graph(8, 8), {"target_platform": "rk3588"})


@pytest.fixture(scope="session")
def conv_model_rk3566(work):
    """The conv model for a one-core platform."""
    return _convert(work, "conv_rk3566", _conv_graph(8, 8), {"target_platform": "rk3566"})


@pytest.fixture(scope="session")
def dynamic_model(work):
    """The conv model with a shape set: 8x8 and 4x6 (NCHW, as the toolkit's dynamic_input lists them)."""
    return _convert(work, "conv_dynamic", _conv_graph("h", "w"),
                    {"target_platform": "rk3588",
                     "dynamic_input": [[[1, 3, 8, 8]], [[1, 3, 4, 6]]]})


@pytest.fixture(scope="session")
def two_inputs_model(work):
    return _convert(work, "two_inputs", _two_inputs_graph(), {"target_platform": "rk3588"})


def pytest_terminal_summary(terminalreporter):
    """The closing line scripts/count_tests.py reads."""
    stats = terminalreporter.stats
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line(f"{len(stats.get('passed', []))} passed, {failed} failed")
