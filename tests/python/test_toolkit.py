"""rknnxx.toolkit.RKNN: a toolkit-style conversion script makes a host model that the C interface
(through rknnxx.Context) and the Lite2 interface both run."""

import numpy as np
import onnx
import pytest

import rknnxx
from rknnlite.api import RKNNLite
from rknnxx.toolkit import RKNN
from conftest import OPSET, _conv_graph, conv_reference

TOL = dict(rtol=2e-2, atol=2e-2)


@pytest.fixture(scope="module")
def conv_onnx(tmp_path_factory):
    path = tmp_path_factory.mktemp("toolkit") / "conv.onnx"
    onnx.save(onnx.helper.make_model(_conv_graph(8, 8), opset_imports=OPSET), str(path))
    return str(path)


def test_the_toolkit_sequence(conv_onnx, tmp_path):
    rknn = RKNN(verbose=False)
    assert rknn.config(mean_values=[[0, 0, 0]], std_values=np.array([[1.0, 1.0, 1.0]]), target_platform="rk3588",
                       custom_string="made by test_toolkit") == 0
    assert rknn.load_onnx(model=conv_onnx) == 0
    assert rknn.build(do_quantization=False) == 0
    out = str(tmp_path / "conv.rknn")
    assert rknn.export_rknn(out) == 0
    assert rknn.init_runtime() == 0
    x = np.random.default_rng(2).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    outputs = rknn.inference(inputs=[x], data_format="nchw")
    np.testing.assert_allclose(outputs[1], conv_reference(x)[1], **TOL)
    rknn.release()

    ctx = rknnxx.Context(out)
    assert ctx.custom_string == "made by test_toolkit"
    np.testing.assert_allclose(ctx.run([x], "nchw")[1], conv_reference(x)[1], **TOL)
    lite = RKNNLite()
    assert lite.load_rknn(out) == 0 and lite.init_runtime() == 0
    np.testing.assert_allclose(lite.inference(inputs=[x], data_format=["nchw"])[1], conv_reference(x)[1], **TOL)
    assert lite.list_support_target_platform(out)["filled_target_platform"] == ["RK3588"]


def test_failures_name_the_problem(conv_onnx, tmp_path, capsys):
    rknn = RKNN()
    assert rknn.build(do_quantization=False) == -1
    assert "load_onnx" in capsys.readouterr().err
    assert rknn.load_onnx(model=str(tmp_path / "missing.onnx")) == -1
    assert rknn.load_onnx(model=conv_onnx, inputs=["image"], input_size_list=[[1, 3, 8, 8]]) == -1
    assert "input_size_list" in capsys.readouterr().err
    assert rknn.load_onnx(model=conv_onnx) == 0
    assert rknn.build(do_quantization=True, dataset=str(tmp_path / "dataset.txt")) == -1
    assert "dataset.txt' does not exist" in capsys.readouterr().err
    rknn.config(target_platform="rk9999")
    assert rknn.build(do_quantization=False) == -1
    assert "target_platform" in capsys.readouterr().err
    assert rknn.export_rknn(str(tmp_path / "x.rknn")) == -1
    assert rknn.init_runtime() == -1
