#!/usr/bin/env python3
"""A small CNN and its calibration set, for the quantized-model tests (tests/host_runtime/test_int8.cpp).

  make_int8_model.py OUT_DIR

writes, with the hand-made protobuf encoding of tests/fuzz/crafted_onnx.py (no onnx or numpy package):
  OUT_DIR/small_cnn.onnx       image [1,3,8,8] -> Conv 3x3 (8) + Relu -> Conv 1x1 (4) -> y [1,4,8,8]
                                                  -> GlobalAveragePool -> Flatten -> score [1,4]
  OUT_DIR/small_cnn_dyn.onnx   the same with image [1,3,H,W] (dynamic_input chooses H and W)
  OUT_DIR/dataset.txt          16 samples, OUT_DIR/sample_NN.npy (uint8, [1,3,8,8]), relative paths
  OUT_DIR/hybrid_mlp.onnx      x [1,16] -> Gemm (16) + Relu -> h -> Gemm (16) -> z [1,16] -> Gemm (4) -> y [1,4]
                               for automatic hybrid quantization: h's first feature is always 0, and every
                               column of z's weight has an outlier of 200 on that feature: it changes nothing
                               in float, but on the int8 grid of its column (per channel) the other weights
                               round to 0 or +-1.6, so z's layer alone quantizes badly
  OUT_DIR/hybrid_dataset.txt   8 samples, OUT_DIR/hybrid_NN.npy (float32 in [0, 1), [1,16])
"""
import random
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
from crafted_onnx import FLOAT, f_bytes, f_int, key, model, node, tensor, value_info  # noqa: E402

INTS = 7


def float_tensor(name, dims, values):
    """A float32 initializer (TensorProto: dims 1, data_type 2, name 8, raw_data 9)."""
    return (b"".join(f_int(1, d) for d in dims) + f_int(2, FLOAT) + f_bytes(8, name) +
            f_bytes(9, b"".join(struct.pack("<f", v) for v in values)))


def ints_attribute(name, values):
    """AttributeProto: name 1, ints 8, type 20."""
    return f_bytes(5, f_bytes(1, name) + b"".join(f_int(8, v) for v in values) + f_int(20, INTS))


def small_cnn(height, width):
    rng = random.Random(11)
    weights = lambda n, spread: [rng.uniform(-spread, spread) for _ in range(n)]  # noqa: E731
    initializers = [
        float_tensor("w1", [8, 3, 3, 3], weights(8 * 3 * 9, 0.4)),
        float_tensor("b1", [8], weights(8, 0.2)),
        float_tensor("w2", [4, 8, 1, 1], weights(4 * 8, 0.6)),
        float_tensor("b2", [4], weights(4, 0.1)),
    ]
    nodes = [
        node("Conv", ["image", "w1", "b1"], ["c1"], "conv1", ints_attribute("pads", [1, 1, 1, 1])),
        node("Relu", ["c1"], ["r1"], "relu1"),
        node("Conv", ["r1", "w2", "b2"], ["y"], "conv2"),
        node("GlobalAveragePool", ["y"], ["pooled"], "pool"),
        node("Flatten", ["pooled"], ["score"], "flatten"),
    ]
    return model(nodes, initializers, [value_info("image", FLOAT, [1, 3, height, width])],
                 [value_info("y", FLOAT, [1, 4, height, width]), value_info("score", FLOAT, [1, 4])])


def hybrid_mlp():
    rng = random.Random(23)
    weights = lambda n, spread: [rng.uniform(-spread, spread) for _ in range(n)]  # noqa: E731
    b1 = weights(16, 0.2)
    b1[0] = -50.0  # feature 0 of h is always 0 after the Relu
    w2 = weights(16 * 16, 1.0)
    for n in range(16):
        w2[n] = 200.0 if n % 2 == 0 else -200.0  # row 0 ([K, N]): one outlier per column, on feature 0
    initializers = [
        float_tensor("w1", [16, 16], weights(16 * 16, 1.0)),
        float_tensor("b1", [16], b1),
        float_tensor("w2", [16, 16], w2),
        float_tensor("b2", [16], weights(16, 0.2)),
        float_tensor("w3", [16, 4], weights(16 * 4, 1.0)),
        float_tensor("b3", [4], weights(4, 0.2)),
    ]
    nodes = [
        node("Gemm", ["x", "w1", "b1"], ["g1"], "gemm1"),
        node("Relu", ["g1"], ["h"], "relu1"),
        node("Gemm", ["h", "w2", "b2"], ["z"], "gemm2"),
        node("Gemm", ["z", "w3", "b3"], ["y"], "gemm3"),
    ]
    return model(nodes, initializers, [value_info("x", FLOAT, [1, 16])],
                 [value_info("z", FLOAT, [1, 16]), value_info("y", FLOAT, [1, 4])])


def npy(descr, shape, data):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join(f"{d}, " for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def npy_uint8(shape, values):
    return npy("|u1", shape, bytes(values))


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "small_cnn.onnx").write_bytes(small_cnn(8, 8))
    (out / "small_cnn_dyn.onnx").write_bytes(small_cnn("H", "W"))
    rng = random.Random(5)
    lines = []
    for i in range(16):
        name = f"sample_{i:02d}.npy"
        (out / name).write_bytes(npy_uint8([1, 3, 8, 8], [rng.randrange(256) for _ in range(3 * 8 * 8)]))
        lines.append(name)
    (out / "dataset.txt").write_text("\n".join(lines) + "\n")
    (out / "hybrid_mlp.onnx").write_bytes(hybrid_mlp())
    lines = []
    for i in range(8):
        name = f"hybrid_{i:02d}.npy"
        values = [rng.random() for _ in range(16)]
        (out / name).write_bytes(npy("<f4", [1, 16], b"".join(struct.pack("<f", v) for v in values)))
        lines.append(name)
    (out / "hybrid_dataset.txt").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
