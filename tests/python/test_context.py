"""rknnxx.Context from Python: numpy in and out, attributes, dynamic shapes, errors, threads."""

import sys
import threading
import time

import numpy as np
import pytest

import rknnxx
from conftest import conv_reference

# The models store float16 (the toolkit's float_dtype): results agree with float32 to fp16 precision.
TOL = dict(rtol=2e-2, atol=2e-2)


def image_nchw(h=8, w=8, seed=1):
    return np.random.default_rng(seed).uniform(-1, 1, (1, 3, h, w)).astype(np.float32)


def test_the_host_runtime_is_found_without_environment(conv_model, monkeypatch):
    monkeypatch.delenv("RKNNXX_RUNTIME", raising=False)
    ctx = rknnxx.Context(conv_model)
    assert ctx.runtime.kind == "host"
    assert ctx.runtime.path.endswith("librknnxx_host.so")
    assert rknnxx.load_runtime("host").kind == "host"


def test_attributes_are_dataclasses(conv_model):
    ctx = rknnxx.Context(conv_model)
    assert ctx.num_inputs == 1 and ctx.num_outputs == 2
    image = ctx.inputs[0]
    assert isinstance(image, rknnxx.TensorAttr)
    assert (image.name, image.dims, image.format) == ("image", (1, 8, 8, 3), "NHWC")
    names = [o.name for o in ctx.outputs]
    assert names == ["features", "pooled"]
    assert ctx.outputs[1].dims == (1, 4)
    with pytest.raises(Exception):
        image.name = "other"  # frozen
    assert ctx.is_dynamic is False and ctx.shape_set is None


@pytest.mark.parametrize("layout", ["nhwc", "nchw"])
def test_float32_in_both_layouts(conv_model, layout):
    ctx = rknnxx.Context(conv_model)
    x = image_nchw()
    given = x.transpose(0, 2, 3, 1) if layout == "nhwc" else x
    features, pooled = ctx.run([given], data_format=layout)
    want_features, want_pooled = conv_reference(x)
    assert features.dtype == np.float32 and features.shape == (1, 4, 8, 8)
    np.testing.assert_allclose(features, want_features, **TOL)
    np.testing.assert_allclose(pooled, want_pooled, **TOL)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float64])
def test_other_input_types_are_converted_by_the_runtime(conv_model, dtype):
    ctx = rknnxx.Context(conv_model)
    values = np.random.default_rng(3).integers(0 if dtype == np.uint8 else -3, 4, (1, 8, 8, 3))
    given = values.astype(dtype)
    features, pooled = ctx.run(given)  # one array, NHWC by default
    want_features, want_pooled = conv_reference(values.astype(np.float32).transpose(0, 3, 1, 2))
    np.testing.assert_allclose(features, want_features, rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(pooled, want_pooled, rtol=2e-2, atol=5e-2)


def test_an_input_type_the_board_does_not_convert_is_refused(conv_model):
    """A float16 input takes uint8, float16 and float32 (docs/c-interface.md#input-conversions), not int8."""
    ctx = rknnxx.Context(conv_model)
    with pytest.raises(rknnxx.Error, match="the model's FP16 input does not take INT8 data"):
        ctx.run(np.zeros((1, 8, 8, 3), np.int8))


def test_a_static_model_is_not_asked_for_a_shape_set(conv_model, capfd):
    """The runtime logs a warning and an error when a static model is asked for its shape set: a
    run with the right shapes does not ask."""
    ctx = rknnxx.Context(conv_model)
    capfd.readouterr()
    ctx.run([np.zeros((1, 8, 8, 3), np.uint8)])
    assert "DYNAMIC_RANGE" not in capfd.readouterr().err


def test_non_contiguous_arrays_are_taken(conv_model):
    ctx = rknnxx.Context(conv_model)
    x = image_nchw()
    view = np.asfortranarray(x)
    np.testing.assert_allclose(ctx.run([view], "nchw")[1], conv_reference(x)[1], **TOL)


def test_native_outputs(conv_model):
    ctx = rknnxx.Context(conv_model)
    outs = ctx.run([image_nchw()], "nchw", want_float=False)
    assert [o.dtype.name for o in outs] == [a.dtype for a in ctx.outputs]


def test_inputs_by_name(two_inputs_model):
    ctx = rknnxx.Context(two_inputs_model)
    a = np.arange(10, dtype=np.float32).reshape(2, 5)
    b = np.full((2, 5), 0.5, np.float32)
    total, product = ctx.run({"b": b, "a": a})
    np.testing.assert_allclose(total, a + b, **TOL)
    np.testing.assert_allclose(product, a * b, **TOL)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run({"a": a, "c": b})
    assert "'c'" in str(e.value) and "missing 'b'" in str(e.value)
    assert e.value.code == rknnxx.error_codes["RKNN_ERR_PARAM_INVALID"]


def test_errors_carry_the_runtime_code_and_message(conv_model, tmp_path):
    ctx = rknnxx.Context(conv_model)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([np.zeros((1, 9, 9, 3), np.float32)])
    assert isinstance(e.value, RuntimeError)
    assert e.value.code == -5 and e.value.code_name == "RKNN_ERR_PARAM_INVALID"
    assert e.value.call == "rknn_inputs_set" and "[1, 9, 9, 3]" in str(e.value)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([np.zeros((1, 8, 8, 3), np.complex64)])
    assert "complex64" in str(e.value)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([np.zeros((1, 8, 8, 3), np.float32)] * 2)
    assert "2 inputs given, the model has 1" in str(e.value)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([np.zeros((1, 8, 8, 3), np.float32)], data_format="hwcn")
    assert "hwcn" in str(e.value)
    not_a_model = tmp_path / "garbage.hrknn"
    not_a_model.write_bytes(b"\x00garbage")
    with pytest.raises(rknnxx.Error) as e:
        rknnxx.Context(str(not_a_model))
    assert e.value.call == "rknn_init" and e.value.code < 0
    assert "the runtime says" in str(e.value)  # the host runtime's own explanation


def test_model_from_bytes(conv_model):
    with open(conv_model, "rb") as f:
        ctx = rknnxx.Context(f.read(), runtime="host")
    assert ctx.runtime.kind == "host"
    np.testing.assert_allclose(ctx.run([image_nchw()], "nchw")[1], conv_reference(image_nchw())[1], **TOL)


def test_dynamic_shapes_follow_the_arrays(dynamic_model):
    ctx = rknnxx.Context(dynamic_model)
    assert ctx.is_dynamic
    assert ctx.shape_set.groups == (((1, 8, 8, 3),), ((1, 4, 6, 3),))
    assert ctx.shape_set.nchw() == (((1, 3, 8, 8),), ((1, 3, 4, 6),))
    assert ctx.current_group is None
    for h, w, group in [(4, 6, 1), (8, 8, 0), (4, 6, 1)]:
        x = image_nchw(h, w, seed=h)
        features, pooled = ctx.run([x], "nchw")
        assert ctx.current_group == group and features.shape == (1, 4, h, w)
        np.testing.assert_allclose(pooled, conv_reference(x)[1], **TOL)
    assert ctx.set_input_shapes([(1, 3, 8, 8)], order="nchw") == 0
    assert ctx.inputs[0].dims == (1, 8, 8, 3)
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([image_nchw(5, 5)], "nchw")
    assert "not in the model's shape set" in str(e.value) and "[1, 4, 6, 3]" in str(e.value)


def test_core_mask(conv_model, conv_model_rk3566):
    rknnxx.Context(conv_model).set_core_mask(3)  # NPU_CORE_0_1 on RK3588
    with pytest.raises(rknnxx.Error) as e:
        rknnxx.Context(conv_model_rk3566).set_core_mask(1)
    assert "single NPU core" in str(e.value)


def test_threads_share_a_context_and_run_duplicates(conv_model):
    ctx = rknnxx.Context(conv_model)
    contexts = [ctx, ctx, ctx.dup(), ctx.dup()]
    inputs = [image_nchw(seed=s) for s in range(len(contexts))]
    want = [conv_reference(x)[1] for x in inputs]
    errors = []

    def work(i):
        try:
            for _ in range(20):
                np.testing.assert_allclose(contexts[i].run([inputs[i]], "nchw")[1], want[i], **TOL)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(contexts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_versions_and_close(conv_model):
    with rknnxx.Context(conv_model) as ctx:
        api, driver = ctx.sdk_version
        assert api and "rknnxx" in driver
        ctx.run([image_nchw()], "nchw")
        assert ctx.last_run_us >= 0
    with pytest.raises(rknnxx.Error) as e:
        ctx.run([image_nchw()], "nchw")
    assert "closed" in str(e.value)
    assert rknnxx.__version__


def test_the_gil_is_released_while_the_runtime_runs(conv_model):
    """With a switch interval longer than the test, a thread gives up the GIL only where it blocks. The
    worker runs inferences until the main thread has run a line of Python (or for 20 s): the main thread
    can get the GIL while the worker is still running only if run() releases it. A race on a fixed
    number of runs is not enough: a small model's run can end before the waiting thread wakes up."""
    ctx = rknnxx.Context(conv_model)
    x = np.zeros((1, 8, 8, 3), np.uint8)
    runs, stopped_by_main = [0], [False]
    started, main_ran = threading.Event(), threading.Event()

    def work():
        started.set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if main_ran.is_set():
                stopped_by_main[0] = True
                return
            ctx.run([x])
            runs[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(100)
    try:
        worker = threading.Thread(target=work)
        worker.start()
        started.wait()
        main_ran.set()
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert stopped_by_main[0], f"the main thread did not run during {runs[0]} runs"
