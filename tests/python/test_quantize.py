"""rknnxx.toolkit.RKNN with quantization: build(do_quantization=True, dataset=...) makes a w8a8 model
(the config's quantized_* keys honoured as in CONFIG.json) that the toolkit, rknnxx.Context and RKNNLite
run with int8 attributes; accuracy_analysis compares it with the float model per tensor."""

import csv
import json
import os
import subprocess

import numpy as np
import onnx
import pytest

import rknnxx
from rknnlite.api import RKNNLite
from rknnxx.toolkit import RKNN, LayerAccuracy
from conftest import OPSET, _conv_graph, conv_reference


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """The conv model's ONNX file and a dataset of 6 .npy samples in [-1, 1] (the model's NCHW shape)."""
    folder = tmp_path_factory.mktemp("quantize")
    model = folder / "conv.onnx"
    onnx.save(onnx.helper.make_model(_conv_graph(8, 8), opset_imports=OPSET), str(model))
    rng = np.random.default_rng(11)
    names = []
    for i in range(6):
        names.append(f"sample_{i}.npy")
        np.save(folder / names[-1], rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
    (folder / "dataset.txt").write_text("\n".join(names) + "\n")  # relative to the dataset's folder
    return str(model), str(folder / "dataset.txt"), folder


def quantized(calibration, target_platform="rk3588", **config):
    model, dataset, _ = calibration
    rknn = RKNN()
    assert rknn.config(target_platform=target_platform, **config) == 0
    assert rknn.load_onnx(model=model) == 0
    assert rknn.build(do_quantization=True, dataset=dataset) == 0
    return rknn


def test_w16a16i_dfp_reports_dfp_with_fl(calibration, tmp_path):
    """int16 dynamic fixed point (rv1106): INT16 tensors with qnt_type DFP, fl, zero point 0 and scale 2^-fl."""
    rknn = quantized(calibration, target_platform="rv1106", quantized_dtype="w16a16i_dfp")
    out = str(tmp_path / "conv_dfp.rknn")
    assert rknn.export_rknn(out) == 0
    rknn.release()
    image = rknnxx.Context(out).inputs[0]
    assert (image.dtype, image.type, image.qnt_type) == ("int16", "INT16", "DFP")
    # The samples span [-1, 1]: 32767 * 2^-14 < 2 holds them, so fl is 14 (or 15 if they stay below 1).
    assert image.fl in (14, 15) and image.zp == 0 and image.scale == 2.0 ** -image.fl


def test_auto_hybrid_keeps_layers_past_the_threshold_in_float16(calibration, tmp_path):
    """build(auto_hybrid=True): a cosine threshold of 1 keeps every quantized layer in float16 (their
    outputs report FP16), one of -1 keeps none (INT8); without quantization it is refused."""
    for thresh, want in ((1.0, "FP16"), (-1.0, "INT8")):
        model, dataset, _ = calibration
        rknn = RKNN()
        assert rknn.config(target_platform="rk3588", auto_hybrid_cos_thresh=thresh) == 0
        assert rknn.load_onnx(model=model) == 0
        assert rknn.build(do_quantization=True, dataset=dataset, auto_hybrid=True) == 0
        out = str(tmp_path / f"conv_hybrid_{thresh}.rknn")
        assert rknn.export_rknn(out) == 0
        rknn.release()
        assert rknnxx.Context(out).outputs[0].type == want
    rknn = RKNN()
    assert rknn.config(target_platform="rk3588") == 0
    assert rknn.load_onnx(model=calibration[0]) == 0
    assert rknn.build(do_quantization=False, auto_hybrid=True) == -1


def close_to_float(outputs, x):
    """w8a8 against the float reference: within a few quantization steps of the output's range."""
    features, pooled = conv_reference(x)
    for got, want in ((outputs[0], features), (outputs[1], pooled)):
        step = (want.max() - min(want.min(), 0)) / 255
        assert np.abs(got.reshape(want.shape) - want).max() <= 4 * step + 1e-3


def test_build_quantized_runs_everywhere(calibration, tmp_path):
    rknn = quantized(calibration, quantized_algorithm="normal", quantized_method="channel")
    out = str(tmp_path / "conv_w8a8.rknn")
    assert rknn.export_rknn(out) == 0
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    assert rknn.init_runtime() == 0
    close_to_float(rknn.inference(inputs=[x], data_format="nchw"), x)
    rknn.release()

    ctx = rknnxx.Context(out)
    image, features = ctx.inputs[0], ctx.outputs[0]
    assert (image.dtype, image.type, image.qnt_type) == ("int8", "INT8", "AFFINE_ASYMMETRIC")
    assert image.quantization is not None and image.scale == image.quantization.scale > 0
    assert -128 <= image.zp <= 127
    # The input's range is the samples' [-1, 1]: 2 / 255 per step, 0 near the middle.
    assert image.scale == pytest.approx(2 / 255, rel=0.05) and abs(image.zp) <= 2
    assert features.qnt_type == "AFFINE_ASYMMETRIC" and features.zp == -128  # after Relu: [0, max]
    close_to_float(ctx.run([x], "nchw"), x)
    # The int8 values the runtime holds, and their dequantization.
    raw = ctx.run([x], "nchw", want_float=False)[0]
    assert raw.dtype == np.int8
    np.testing.assert_allclose((raw.astype(np.float32) - features.zp) * features.scale,
                               ctx.run([x], "nchw")[0].reshape(raw.shape), rtol=1e-5, atol=1e-6)

    lite = RKNNLite()
    assert lite.load_rknn(out) == 0 and lite.init_runtime() == 0
    close_to_float(lite.inference(inputs=[x], data_format="nchw"), x)


@pytest.mark.parametrize("algorithm", ["kl_divergence", "mmse"])
def test_quantized_algorithm_is_honoured(calibration, algorithm):
    """Another range algorithm than normal's min/max chooses other parameters (KL clips the long tails
    after the Relu, MMSE the input's range), and the model records it."""
    def parameters(model):
        ctx = rknnxx.Context(model)
        return [(t.scale, t.zp) for t in ctx.inputs + ctx.outputs]

    normal = parameters(quantized(calibration, quantized_algorithm="normal")._model)
    other_model = quantized(calibration, quantized_algorithm=algorithm)._model
    other = parameters(other_model)
    assert other != normal and all(scale > 0 for scale, _ in other)
    config = json.loads(rknnxx._converter.model_info(other_model)["config_json"])
    assert config["quantized_algorithm"] == algorithm


def test_quantization_refusals_carry_the_toolkits_names(calibration, capsys):
    model, dataset, folder = calibration
    rknn = RKNN()
    assert rknn.config(target_platform="rk3588") == 0 and rknn.load_onnx(model=model) == 0
    assert rknn.build(do_quantization=True) == -1
    assert "dataset" in capsys.readouterr().err
    assert rknn.build(do_quantization=True, dataset=str(folder / "missing.txt")) == -1
    assert "missing.txt" in capsys.readouterr().err
    rknn.config(quantized_dtype="w4a16")
    assert rknn.build(do_quantization=True, dataset=dataset) == -1
    assert "quantized_dtype" in capsys.readouterr().err
    rknn.config(quantized_dtype="w8a8", quantized_algorithm="gdq")
    assert rknn.build(do_quantization=True, dataset=dataset) == -1
    assert "quantized_algorithm" in capsys.readouterr().err
    rknn.config(quantized_algorithm="normal", quantized_method="group128")
    assert rknn.build(do_quantization=True, dataset=dataset) == -1
    assert "quantized_method" in capsys.readouterr().err
    bad = folder / "bad_dataset.txt"
    bad.write_text("sample_0.npy\nnot_there.npy\n")
    rknn.config(quantized_method="layer")
    assert rknn.build(do_quantization=True, dataset=str(bad)) == -1
    err = capsys.readouterr().err
    assert "bad_dataset.txt:2" in err and "not_there.npy" in err
    assert rknn.build(do_quantization=True, dataset=dataset) == 0


def test_accuracy_analysis(calibration, tmp_path):
    _, dataset, folder = calibration
    rknn = quantized(calibration)
    snapshot = tmp_path / "snapshot"
    assert rknn.accuracy_analysis(inputs=[str(folder / "sample_0.npy")], output_dir=str(snapshot)) == 0
    layers = rknn.accuracy_results
    assert [l.name for l in layers] == ["image", "features", "pooled"]  # the Relu is fused into the Conv
    assert all(isinstance(l, LayerAccuracy) for l in layers)
    assert layers[0].op_type == "input" and layers[0].node == ""
    for l in layers:
        assert 0.99 < l.entire.cosine <= 1 and 0.99 < l.single.cosine <= 1
        assert l.entire.euclidean >= 0 and l.single.euclidean >= 0
    # The input is only rounded: entire and single are the same error there.
    assert layers[0].entire == layers[0].single

    rows = list(csv.DictReader((snapshot / "accuracy.csv").open()))
    assert [r["name"] for r in rows] == ["image", "features", "pooled"]
    assert float(rows[1]["entire_cosine"]) == pytest.approx(layers[1].entire.cosine, abs=1e-6)
    report = json.loads((snapshot / "accuracy.json").read_text())
    assert report["quantized_algorithm"] == "normal" and report["quantized_method"] == "channel"
    assert report["calibration_samples"] == 6 and report["dataset"] == dataset
    assert report["layers"][2]["single"]["euclidean"] == pytest.approx(layers[2].single.euclidean)
    assert "features" in (snapshot / "error_analysis.txt").read_text()

    # The report `rknnxx accuracy` writes for the same model, dataset and input (it calibrates again, to the
    # same parameters).
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"target_platform": "rk3588"}))
    tool = subprocess.run([os.environ["RKNNXX_TOOL"], "accuracy", calibration[0], "-c", str(config), "--dataset", dataset,
                           "-i", str(folder / "sample_0.npy"), "-o", str(tmp_path / "tool")], capture_output=True, text=True)
    assert tool.returncode == 0, tool.stdout + tool.stderr
    assert (tmp_path / "tool/accuracy.csv").read_text() == (snapshot / "accuracy.csv").read_text()
    tool_report = json.loads((tmp_path / "tool/accuracy.json").read_text())
    assert tool_report["layers"] == report["layers"]

    # An array is taken as a dataset's .npy array: the same numbers for the same values.
    same = np.load(folder / "sample_0.npy")
    assert rknn.accuracy_analysis(inputs=[same], output_dir=None) == 0
    assert rknn.accuracy_results == layers


def test_accuracy_analysis_refusals(calibration, capsys):
    model, _, folder = calibration
    rknn = RKNN()
    rknn.config(target_platform="rk3588")
    assert rknn.load_onnx(model=model) == 0 and rknn.build(do_quantization=False) == 0
    assert rknn.accuracy_analysis(inputs=[str(folder / "sample_0.npy")]) == -1
    assert "do_quantization=True" in capsys.readouterr().err
    rknn = quantized(calibration)
    assert rknn.accuracy_analysis(inputs=[np.zeros((1, 3, 4, 4), np.float32)], output_dir=None) == -1
    err = capsys.readouterr().err
    assert "inputs: inputs[0] (an array): shape [1, 3, 4, 4], input 'image' is calibrated with shape [1, 3, 8, 8]" in err
    assert rknn.accuracy_analysis(inputs=[], output_dir=None) == -1
    assert "the model has 1 input" in capsys.readouterr().err
    assert rknn.accuracy_analysis(inputs=[str(folder / "nothing.npy")], output_dir=None) == -1
    assert "nothing.npy" in capsys.readouterr().err
    assert rknn.accuracy_results == []
