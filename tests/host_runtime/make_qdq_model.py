#!/usr/bin/env python3
"""QDQ (quantization-aware) models for tests/host_runtime/test_qdq.cpp, in the form ONNX Runtime's
quantize_static and PyTorch's QAT export write: activations QuantizeLinear -> DequantizeLinear, weights
int8 initializer -> DequantizeLinear (per channel with `axis`, or per tensor), biases int32 -> DequantizeLinear.

  make_qdq_model.py OUT_DIR

writes, with the hand-made protobuf encoding of tests/fuzz/crafted_onnx.py (no onnx or numpy package):
  OUT_DIR/qdq_cnn.onnx    image [1,3,8,8] -> QDQ (int8 zp) -> Conv 3x3 (8, per-channel int8 weights, int32 bias)
                          + Relu -> QDQ (uint8 zp 0) -> Conv 1x1 (4, per-tensor int8 weights, float bias)
                          -> QDQ (int8 zp) -> y [1,4,8,8] -> GlobalAveragePool -> QDQ (uint8 zp 130)
                          -> Flatten -> score [1,4]
  OUT_DIR/qdq_cnn.txt     the pairs' scales and zero points as the int8 model holds them: "NAME SCALE ZERO_POINT"
  and the models an int8 model cannot hold, each refused by the converter:
  OUT_DIR/qdq_per_channel_activation.onnx  the Relu output quantized per channel (axis 1)
  OUT_DIR/qdq_pair_disagrees.onnx          the input's DequantizeLinear with another scale than its QuantizeLinear
  OUT_DIR/qdq_two_scales.onnx              the Relu output quantized twice, with two scales
  OUT_DIR/qdq_partial.onnx                 no pair after the second Conv (pairs around some layers only)
  OUT_DIR/qdq_integer_output.onnx          a QuantizeLinear's integers as a graph output
  OUT_DIR/qdq_orphan_dequantize.onnx       a DequantizeLinear of integers a Cast computed, not a QuantizeLinear
The scales are chosen from a float run of the network over normalized inputs like the test's.
"""
import random
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))
from crafted_onnx import FLOAT, INT8, f_bytes, f_int, model, node, value_info  # noqa: E402

UINT8, INT32 = 2, 6
INT, INTS = 2, 7


def raw_tensor(name, dims, data_type, fmt, values):
    """An initializer (TensorProto: dims 1, data_type 2, name 8, raw_data 9); fmt is a struct code."""
    return (b"".join(f_int(1, d) for d in dims) + f_int(2, data_type) + f_bytes(8, name) +
            f_bytes(9, b"".join(struct.pack("<" + fmt, v) for v in values)))


def floats(name, dims, values):
    return raw_tensor(name, dims, FLOAT, "f", values)


def int_attribute(name, value):
    """AttributeProto: name 1, i 3, type 20."""
    return f_bytes(5, f_bytes(1, name) + f_int(3, value) + f_int(20, INT))


def ints_attribute(name, values):
    return f_bytes(5, f_bytes(1, name) + b"".join(f_int(8, v) for v in values) + f_int(20, INTS))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def round_even(x):
    return round(x)  # Python rounds half to even, as ONNX's QuantizeLinear


# The float network (weights drawn once), quantized below.
rng = random.Random(23)
W1 = [[[[rng.uniform(-0.4, 0.4) for _ in range(3)] for _ in range(3)] for _ in range(3)] for _ in range(8)]
B1 = [rng.uniform(-0.2, 0.2) for _ in range(8)]
W2 = [rng.uniform(-0.6, 0.6) for _ in range(4 * 8)]
B2 = [rng.uniform(-0.1, 0.1) for _ in range(4)]


def affine(lo, hi, unsigned=False):
    """Scale and zero point covering [lo, hi] widened to 0, as a QAT observer would choose them."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = f32((hi - lo) / 255)
    zp = round_even(-lo / scale) + (0 if unsigned else -128)
    return scale, max(0 if unsigned else -128, min(255 if unsigned else 127, zp))


def per_channel_weights(w):
    """Symmetric int8 per output channel (PyTorch's per_channel_symmetric): scale = max|w| / 127.5."""
    scales, q = [], []
    for c in w:
        flat = [v for plane in c for row in plane for v in row]
        s = f32(max(abs(v) for v in flat) / 127.5)
        scales.append(s)
        q.append([max(-128, min(127, round_even(v / s))) for v in flat])
    return scales, q


def forward_ranges(images):
    """Float ranges of the Relu output, the second Conv's output and the pooled values."""
    s_w1, q_w1 = per_channel_weights(W1)
    ranges = {"r1": [0.0, 0.0], "c2": [0.0, 0.0], "pooled": [0.0, 0.0]}
    for img in images:
        r1 = []
        for o in range(8):
            plane = []
            for y in range(8):
                for x in range(8):
                    acc = B1[o]
                    for i in range(3):
                        for ky in range(3):
                            for kx in range(3):
                                yy, xx = y + ky - 1, x + kx - 1
                                if 0 <= yy < 8 and 0 <= xx < 8:
                                    acc += img[i][yy * 8 + xx] * s_w1[o] * q_w1[o][i * 9 + ky * 3 + kx]
                    plane.append(max(acc, 0.0))
            r1.append(plane)
        for o in range(4):
            c2 = [B2[o] + sum(W2[o * 8 + i] * r1[i][p] for i in range(8)) for p in range(64)]
            pooled = sum(c2) / 64
            for key, values in (("r1", r1[o]), ("c2", c2), ("pooled", [pooled])):
                ranges[key][0] = min(ranges[key][0], min(values))
                ranges[key][1] = max(ranges[key][1], max(values))
    return ranges


MEAN, STD = (120, 110, 100), (60, 64, 58)


def normalized_images(count):
    r = random.Random(5)
    return [[[(r.randrange(256) - MEAN[c]) / STD[c] for _ in range(64)] for c in range(3)] for _ in range(count)]


def qdq_cnn(params, variant=None):
    """The QDQ network; `variant` makes one of the refused forms."""
    s_w1, q_w1 = per_channel_weights(W1)
    s_w2 = f32(max(abs(v) for v in W2) / 127.5)
    q_w2 = [max(-128, min(127, round_even(v / s_w2))) for v in W2]
    s_in, zp_in = params["image"]
    s_b1 = [f32(s_in * s) for s in s_w1]
    q_b1 = [round_even(b / s) for b, s in zip(B1, s_b1)]
    s1, zp1 = params["r1"]
    s2, zp2 = params["y"]
    s3, zp3 = params["pooled"]
    inits = [
        floats("s_in", [], [s_in]), raw_tensor("zp_in", [], INT8, "b", [zp_in]),
        floats("s_in_dq", [], [s_in * (1.01 if variant == "pair_disagrees" else 1.0)]),
        raw_tensor("w1_q", [8, 3, 3, 3], INT8, "b", [v for c in q_w1 for v in c]),
        floats("w1_scale", [8], s_w1), raw_tensor("w1_zp", [8], INT8, "b", [0] * 8),
        raw_tensor("b1_q", [8], INT32, "i", q_b1), floats("b1_scale", [8], s_b1),
        raw_tensor("b1_zp", [8], INT32, "i", [0] * 8),
        raw_tensor("w2_q", [4, 8, 1, 1], INT8, "b", q_w2), floats("w2_scale", [], [s_w2]),
        raw_tensor("w2_zp", [], INT8, "b", [0]), floats("b2", [4], B2),
        floats("s1", [], [s1]), raw_tensor("zp1", [], UINT8, "B", [zp1]),
        floats("s1_twice", [], [2 * s1]),
        floats("s1_channels", [8], [s1] * 8), raw_tensor("zp1_channels", [8], UINT8, "B", [zp1] * 8),
        floats("s2", [], [s2]), raw_tensor("zp2", [], INT8, "b", [zp2]),
        floats("s3", [], [s3]), raw_tensor("zp3", [], UINT8, "B", [zp3]),
    ]
    axis0 = int_attribute("axis", 0)
    nodes = [
        node("QuantizeLinear", ["image", "s_in", "zp_in"], ["image_q"], "q_image"),
        node("DequantizeLinear", ["image_q", "s_in_dq", "zp_in"], ["image_dq"], "dq_image"),
        node("DequantizeLinear", ["w1_q", "w1_scale", "w1_zp"], ["w1"], "dq_w1", axis0),
        node("DequantizeLinear", ["b1_q", "b1_scale", "b1_zp"], ["b1"], "dq_b1", axis0),
        node("Conv", ["image_dq", "w1", "b1"], ["c1"], "conv1", ints_attribute("pads", [1, 1, 1, 1])),
        node("Relu", ["c1"], ["r1"], "relu1"),
    ]
    if variant == "per_channel_activation":
        nodes += [node("QuantizeLinear", ["r1", "s1_channels", "zp1_channels"], ["r1_q"], "q_r1", int_attribute("axis", 1)),
                  node("DequantizeLinear", ["r1_q", "s1_channels", "zp1_channels"], ["r1_dq"], "dq_r1",
                       int_attribute("axis", 1))]
    else:
        nodes += [node("QuantizeLinear", ["r1", "s1", "zp1"], ["r1_q"], "q_r1"),
                  node("DequantizeLinear", ["r1_q", "s1", "zp1"], ["r1_dq"], "dq_r1")]
    extra_outputs = []
    if variant == "two_scales":
        nodes += [node("QuantizeLinear", ["r1", "s1_twice", "zp1"], ["r1_q2"], "q_r1_twice"),
                  node("DequantizeLinear", ["r1_q2", "s1_twice", "zp1"], ["r1_coarse"], "dq_r1_twice")]
        extra_outputs.append(value_info("r1_coarse", FLOAT, [1, 8, 8, 8]))
    if variant == "orphan_dequantize":
        nodes += [node("Cast", ["r1"], ["r1_int"], "cast", int_attribute("to", INT8)),
                  node("DequantizeLinear", ["r1_int", "s2", "zp2"], ["r1_from_int"], "dq_cast")]
        extra_outputs.append(value_info("r1_from_int", FLOAT, [1, 8, 8, 8]))
    if variant == "integer_output":
        extra_outputs.append(value_info("r1_q", UINT8, [1, 8, 8, 8]))
    nodes.append(node("DequantizeLinear", ["w2_q", "w2_scale", "w2_zp"], ["w2"], "dq_w2"))
    if variant == "partial":
        nodes.append(node("Conv", ["r1_dq", "w2", "b2"], ["y"], "conv2"))
    else:
        nodes += [node("Conv", ["r1_dq", "w2", "b2"], ["c2"], "conv2"),
                  node("QuantizeLinear", ["c2", "s2", "zp2"], ["c2_q"], "q_c2"),
                  node("DequantizeLinear", ["c2_q", "s2", "zp2"], ["y"], "dq_c2")]
    nodes += [
        node("GlobalAveragePool", ["y"], ["pooled"], "pool"),
        node("QuantizeLinear", ["pooled", "s3", "zp3"], ["pooled_q"], "q_pooled"),
        node("DequantizeLinear", ["pooled_q", "s3", "zp3"], ["pooled_dq"], "dq_pooled"),
        node("Flatten", ["pooled_dq"], ["score"], "flatten"),
    ]
    return model(nodes, inits, [value_info("image", FLOAT, [1, 3, 8, 8])],
                 [value_info("y", FLOAT, [1, 4, 8, 8]), value_info("score", FLOAT, [1, 4])] + extra_outputs)


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    ranges = forward_ranges(normalized_images(8))
    lo_in = min((0 - MEAN[c]) / STD[c] for c in range(3))
    hi_in = max((255 - MEAN[c]) / STD[c] for c in range(3))
    s_in, zp_in = affine(lo_in, hi_in)
    s1, zp1 = affine(*ranges["r1"], unsigned=True)
    s2, zp2 = affine(*ranges["c2"])
    s3, _ = affine(*ranges["pooled"])
    params = {"image": (s_in, zp_in), "r1": (s1, zp1), "y": (s2, zp2), "pooled": (s3, 130)}
    (out / "qdq_cnn.onnx").write_bytes(qdq_cnn(params))
    for variant in ("per_channel_activation", "pair_disagrees", "two_scales", "partial", "integer_output",
                    "orphan_dequantize"):
        (out / f"qdq_{variant}.onnx").write_bytes(qdq_cnn(params, variant))
    # As the int8 model stores them: uint8 zero points shifted by -128.
    expected = {"image": [s_in, zp_in], "r1": [s1, zp1 - 128], "y": [s2, zp2], "pooled": [s3, 130 - 128]}
    (out / "qdq_cnn.txt").write_text("".join(f"{name} {s!r} {zp}\n" for name, (s, zp) in expected.items()))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
