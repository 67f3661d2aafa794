"""Zero-copy I/O from Python: Context.bind, buffers as numpy arrays inside sync windows."""

import numpy as np
import pytest

import rknnxx
from conftest import conv_reference

TOL = dict(rtol=2e-2, atol=0.5)


def test_buffers_in_bound_types(conv_model):
    ctx = rknnxx.Context(conv_model)
    io = ctx.bind(input_dtype="uint8", output_dtype="float32", output_format="nchw")
    bound = io.input_attr("image")
    assert (bound.dtype, bound.format, bound.dims) == ("uint8", "NHWC", (1, 8, 8, 3))
    image = np.random.default_rng(4).integers(0, 255, (1, 8, 8, 3)).astype(np.uint8)
    with io.input_buffer("image") as buf:
        assert buf.shape == (1, 8, 8, 3) and buf.dtype == np.uint8
        buf[...] = image  # rows padded to w_stride, if any, are skipped by the view's strides
    io.run()
    want_features, want_pooled = conv_reference(image.astype(np.float32).transpose(0, 3, 1, 2))
    with io.output_buffer("pooled") as out:
        assert not out.flags.writeable
        np.testing.assert_allclose(out, want_pooled, **TOL)
    with io.output_buffer(0) as out:
        assert out.shape == (1, 4, 8, 8)
        np.testing.assert_allclose(out, want_features, **TOL)


def test_windows_guard_the_memory(dynamic_model):
    ctx = rknnxx.Context(dynamic_model)
    io = ctx.bind(input_dtype="float32", output_dtype="float32")
    with io.input_buffer(0):
        with pytest.raises(rknnxx.Error) as e:
            io.set_input_shapes(1)
        assert "window" in str(e.value)
    assert io.set_input_shapes(1) == 1
    assert io.input_attr(0).dims == (1, 4, 6, 3)
    x = np.random.default_rng(6).uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)
    with io.input_buffer(0) as buf:
        buf[...] = x.transpose(0, 2, 3, 1)
    io.run()
    with io.output_buffer("pooled") as out:
        np.testing.assert_allclose(out, conv_reference(x)[1], rtol=2e-2, atol=2e-2)
    with pytest.raises(rknnxx.Error):
        io.input_attr("no_such_input")
    with pytest.raises(rknnxx.Error):
        ctx.bind(input_dtype="complex64")


def test_native_layouts(conv_model):
    """native=True binds NC1HWC2 outputs: [N, C1, H, W, C2] with the channels in blocks of C2."""
    ctx = rknnxx.Context(conv_model)
    io = ctx.bind(native=True)
    image = np.random.default_rng(8).uniform(-1, 1, (1, 8, 8, 3)).astype(np.float16)
    assert io.input_attr(0).dtype == "float16"
    with io.input_buffer(0) as buf:
        buf[...] = image
    io.run()
    features = io.output_attr("features")
    assert features.format == "NC1HWC2"
    with io.output_buffer("features") as out:
        n, c1, h, w, c2 = out.shape
        nchw = out.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c2, h, w)[:, :4]
        want = conv_reference(image.astype(np.float32).transpose(0, 3, 1, 2))[0]
        np.testing.assert_allclose(nchw, want, rtol=2e-2, atol=5e-2)
