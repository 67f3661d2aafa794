"""rknnlite.api.RKNNLite: RKNN-Toolkit-Lite2's interface, return codes and messages (docs/python.md)."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rknnlite.api import RKNNLite
from conftest import conv_reference

TOL = dict(rtol=2e-2, atol=2e-2)


def test_core_constants():
    assert (RKNNLite.NPU_CORE_AUTO, RKNNLite.NPU_CORE_0, RKNNLite.NPU_CORE_1, RKNNLite.NPU_CORE_2) == (0, 1, 2, 4)
    assert (RKNNLite.NPU_CORE_0_1, RKNNLite.NPU_CORE_0_1_2, RKNNLite.NPU_CORE_ALL) == (3, 7, 0xFFFF)


def test_the_lite2_sequence(conv_model):
    rknn_lite = RKNNLite(verbose=False)
    assert rknn_lite.load_rknn(conv_model) == 0
    assert rknn_lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0) == 0
    x = np.random.default_rng(5).integers(0, 255, (1, 8, 8, 3)).astype(np.uint8)
    outputs = rknn_lite.inference(inputs=[x])
    assert isinstance(outputs, list) and len(outputs) == 2
    assert all(isinstance(o, np.ndarray) and o.dtype == np.float32 for o in outputs)
    want = conv_reference(x.astype(np.float32).transpose(0, 3, 1, 2))
    np.testing.assert_allclose(outputs[1], want[1], rtol=2e-2, atol=0.5)
    nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    for data_format in ("nchw", ["nchw"]):
        np.testing.assert_allclose(rknn_lite.inference(inputs=[nchw], data_format=data_format)[1], outputs[1], **TOL)
    version = rknn_lite.get_sdk_version()
    assert "API: " in version and "DRV: " in version
    rknn_lite.release()
    assert rknn_lite.inference(inputs=[x]) is None


def test_dynamic_shape_chosen_by_the_call(dynamic_model):
    rknn_lite = RKNNLite()
    assert rknn_lite.load_rknn(dynamic_model) == 0 and rknn_lite.init_runtime() == 0
    for h, w in [(8, 8), (4, 6)]:
        x = np.random.default_rng(h).uniform(-1, 1, (1, 3, h, w)).astype(np.float32)
        outputs = rknn_lite.inference(inputs=[x], data_format=["nchw"])
        assert outputs[0].shape == (1, 4, h, w)
        np.testing.assert_allclose(outputs[1], conv_reference(x)[1], **TOL)


def test_failures_return_codes_and_print_why(conv_model, conv_model_rk3566, tmp_path, capsys):
    rknn_lite = RKNNLite()
    assert rknn_lite.init_runtime() == -1
    assert "load_rknn" in capsys.readouterr().err
    assert rknn_lite.load_rknn(str(tmp_path / "missing.rknn")) == -1
    assert "missing.rknn" in capsys.readouterr().err
    assert rknn_lite.inference(inputs=[np.zeros((1, 8, 8, 3), np.uint8)]) is None
    assert "init_runtime" in capsys.readouterr().err
    assert rknn_lite.get_sdk_version() is None

    garbage = tmp_path / "garbage.rknn"
    garbage.write_bytes(b"not a model")
    assert rknn_lite.load_rknn(str(garbage)) == 0  # Lite2 reads the file here and parses it at init_runtime
    assert rknn_lite.init_runtime() == -1
    assert "rknn_init" in capsys.readouterr().err

    assert rknn_lite.load_rknn(conv_model_rk3566) == 0
    assert rknn_lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0_1_2) == -1
    assert "single NPU core" in capsys.readouterr().err

    assert rknn_lite.load_rknn(conv_model) == 0 and rknn_lite.init_runtime() == 0
    assert rknn_lite.inference(inputs=[np.zeros((1, 5, 5, 3), np.uint8)]) is None
    assert "RKNN_ERR_PARAM_INVALID" in capsys.readouterr().err
    rknn_lite.release()


def test_list_support_target_platform(conv_model, capsys):
    rknn_lite = RKNNLite()
    platforms = rknn_lite.list_support_target_platform(conv_model)
    assert "RK3588" in platforms["support_target_platform"]
    assert "RK3588" in capsys.readouterr().out
    assert rknn_lite.list_support_target_platform("no/such/model.rknn") is None


def test_an_unchanged_lite2_script_runs(conv_model, tmp_path):
    """A script as Lite2's examples write it, import line included, in a fresh interpreter."""
    script = tmp_path / "classify.py"
    script.write_text(textwrap.dedent(f"""
        import numpy as np
        from rknnlite.api import RKNNLite

        rknn_lite = RKNNLite()
        ret = rknn_lite.load_rknn({conv_model!r})
        if ret != 0:
            print('Load RKNN model failed')
            exit(ret)
        ret = rknn_lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0)
        if ret != 0:
            print('Init runtime environment failed')
            exit(ret)
        img = np.full((1, 8, 8, 3), 100, np.uint8)
        outputs = rknn_lite.inference(inputs=[img])
        print('pooled', ' '.join(str(v) for v in outputs[1].reshape(-1)))
        rknn_lite.release()
    """))
    env = dict(os.environ)
    env.pop("RKNNXX_RUNTIME", None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    pooled = [float(v) for v in done.stdout.split("pooled ")[1].split()]
    np.testing.assert_allclose(pooled, conv_reference(np.full((1, 3, 8, 8), 100, np.float32))[1][0], rtol=2e-2, atol=0.5)


def test_the_classification_example(conv_model, tmp_path):
    """examples/python/classify_lite2.py, a Lite2-style script, on the conv model: its top class is
    the reference's (the model's first output, the conv features, flattened)."""
    example = pathlib.Path(os.environ["RKNNXX_EXAMPLES"]) / "classify_lite2.py"
    image = np.random.default_rng(9).integers(0, 4, (1, 8, 8, 3)).astype(np.uint8)
    np.save(tmp_path / "image.npy", image)
    done = subprocess.run([sys.executable, str(example), conv_model, str(tmp_path / "image.npy"), "--top", "1"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    reference = conv_reference(image.astype(np.float32).transpose(0, 3, 1, 2))[0].reshape(-1)
    top = re.search(r"\[\s*(\d+)\] score:", done.stdout)
    assert top, done.stdout
    # The top class, or one the model's float16 storage cannot tell from it.
    assert reference[int(top.group(1))] >= reference.max() - 0.05, (done.stdout, reference.max())
