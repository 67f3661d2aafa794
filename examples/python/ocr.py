#!/usr/bin/env python3
"""OCR with PaddleOCR v4 (text detection + recognition) written against RKNN-Toolkit-Lite2's interface: the
Python form of examples/ocr (the same steps, the same numbers), with numpy and the standard library only.
On a board it runs with Rockchip's Lite2 or with rknnxx (vendor runtime, .rknn models); on a PC with rknnxx
(host runtime, .hrknn models from `rknnxx convert`). docs/python.md.

    PYTHONPATH=build/python python3 examples/python/ocr.py IMAGE [--models DIR] [--det M] [--rec M] [--dict F]
                                                          [--cls M]

IMAGE is a PNG (8-bit, not interlaced) or a .npy array (H x W x 3 uint8, RGB). DIR defaults to
build/models/ocr-converted (where ./scripts/demo.sh puts det.hrknn, rec.hrknn and dict.txt). Both models are
converted with a dynamic_input shape set and mean/std (examples/ocr/det.json, rec.json, read here for their
shapes): the script feeds uint8 RGB NHWC, picks the detector's shape nearest the image's aspect and, per text
line, the narrowest recognizer width that holds it; the runtime takes the shape from the array. With --cls
(PaddleOCR's direction classifier, converted with examples/python/cls.json) upside-down lines are turned before
they are read, as PaddleOCR's use_angle_cls does.
Prints one line per text line read: "  [   x,   y    wxh  ] confidence  text", as examples/ocr does.
"""

import argparse
import json
import math
import pathlib
import struct
import sys
import time
import zlib

import numpy as np
from rknnlite.api import RKNNLite

CONFIGS = pathlib.Path(__file__).resolve().parents[1] / "ocr"  # examples/ocr: det.json, rec.json


# ---- images: numpy arrays H x W x C of uint8 ----------------------------------------------------------------

def read_png(path):
    """An 8-bit PNG (gray, gray+alpha, RGB, RGBA or palette; not interlaced) as H x W x C uint8."""
    data = pathlib.Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, palette, header = 8, [], None, None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError(f"{path}: no IHDR chunk")
    width, height, depth, color, _, _, interlace = header
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"{path}: only 8-bit, non-interlaced PNGs are read here (bit depth {depth}, colour type "
                         f"{color}, interlace {interlace})")
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8)
    stride = width * channels
    if raw.size != height * (stride + 1):
        raise ValueError(f"{path}: {raw.size} bytes of image data for {width}x{height}")
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), np.uint8)
    previous = np.zeros(stride, np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            current = line
        elif kind == 2:
            current = (line + previous) & 0xFF
        elif kind == 1:  # Sub: a running sum per channel
            current = np.cumsum(line.reshape(width, channels), axis=0).reshape(stride) & 0xFF
        elif kind in (3, 4):  # each byte depends on the one decoded `channels` bytes before it
            up, raw_line = previous.tolist(), line.tolist()
            decoded = [(raw_line[x] + (up[x] >> 1 if kind == 3 else up[x])) & 0xFF for x in range(channels)]
            for x in range(channels, stride):
                left, above, upper_left = decoded[x - channels], up[x], up[x - channels]
                if kind == 3:
                    predictor = (left + above) >> 1
                else:  # Paeth: of left, above and upper-left, the one nearest left + above - upper-left
                    pa, pb, pc = abs(above - upper_left), abs(left - upper_left), abs(left + above - 2 * upper_left)
                    predictor = left if pa <= pb and pa <= pc else above if pb <= pc else upper_left
                decoded.append((raw_line[x] + predictor) & 0xFF)
            current = np.array(decoded, np.int32)
        else:
            raise ValueError(f"{path}: row {y} has the unknown filter {kind}")
        out[y] = current
        previous = current
    image = out.reshape(height, width, channels)
    if color == 3:
        if palette is None:
            raise ValueError(f"{path}: a palette image without a PLTE chunk")
        image = palette[image[..., 0]]
    return image


def to_rgb(image):
    """Gray and alpha images to RGB, alpha composited over white (as examples/ocr/image.cpp)."""
    if image.ndim == 2:
        image = image[..., np.newaxis]
    channels = image.shape[2]
    if channels == 3:
        return image
    color = image[..., :1].repeat(3, axis=2) if channels <= 2 else image[..., :3]
    alpha = image[..., -1:].astype(np.int32) if channels in (2, 4) else np.full(image.shape[:2] + (1,), 255)
    return ((color.astype(np.int32) * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def read_image(path):
    if str(path).endswith(".npy"):
        image = np.load(path)
        if image.dtype != np.uint8 or image.ndim not in (2, 3):
            raise ValueError(f"{path}: an image array is H x W x C uint8 (this one is {image.dtype} {image.shape})")
        return to_rgb(image)
    return to_rgb(read_png(path))


def lround(value):
    """C's lround: halves away from zero (Python's round() goes to even)."""
    return int(math.copysign(math.floor(abs(value) + 0.5), value))


def resize(image, width, height):
    """Bilinear with pixel centres at half-integers (OpenCV's INTER_LINEAR), as examples/ocr/image.cpp."""
    src_h, src_w = image.shape[:2]
    fy = np.clip((np.arange(height) + 0.5) * (src_h / height) - 0.5, 0.0, src_h - 1.0)
    fx = np.clip((np.arange(width) + 0.5) * (src_w / width) - 0.5, 0.0, src_w - 1.0)
    y0, x0 = fy.astype(np.int64), fx.astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, src_h - 1), np.minimum(x0 + 1, src_w - 1)
    wy, wx = (fy - y0)[:, None, None], (fx - x0)[None, :, None]
    img = image.astype(np.float64)
    top = img[y0][:, x0] * (1 - wx) + img[y0][:, x1] * wx
    bottom = img[y1][:, x0] * (1 - wx) + img[y1][:, x1] * wx
    return np.floor(np.clip(top * (1 - wy) + bottom * wy, 0.0, 255.0) + 0.5).astype(np.uint8)


# ---- detection: DB post-processing -------------------------------------------------------------------------

def letterbox(rgb, width, height, fill):
    """The image scaled (aspect kept) into the top-left corner of a width x height input, the rest `fill`.
    Returns the input and the scale (input coordinates / scale = image coordinates)."""
    scale = min(width / rgb.shape[1], height / rgb.shape[0])
    w = min(max(lround(rgb.shape[1] * scale), 1), width)
    h = min(max(lround(rgb.shape[0] * scale), 1), height)
    out = np.empty((height, width, 3), np.uint8)
    out[...] = fill
    out[:h, :w] = rgb if (w, h) == (rgb.shape[1], rgb.shape[0]) else resize(rgb, w, h)
    return out, scale


def connected_boxes(mask):
    """The bounding boxes (x0, y0, x1, y1, inclusive) of the 8-connected regions of a boolean map, from runs
    of set pixels per row joined with the overlapping runs of the row above (union-find)."""
    parent = []

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    runs, previous = [], []  # runs: (y, x_start, x_end exclusive, id)
    for y in range(mask.shape[0]):
        row = np.concatenate(([0], mask[y].view(np.int8), [0]))
        edges = np.flatnonzero(np.diff(row))
        current = []
        for start, end in zip(edges[::2].tolist(), edges[1::2].tolist()):
            parent.append(len(parent))
            run = (y, start, end, len(parent) - 1)
            for _, p_start, p_end, p_id in previous:
                if p_start <= end and start <= p_end:  # touching or diagonal neighbours
                    a, b = find(run[3]), find(p_id)
                    if a != b:
                        parent[max(a, b)] = min(a, b)
            current.append(run)
        runs.extend(current)
        previous = current
    boxes = {}
    for y, start, end, run_id in runs:
        root = find(run_id)
        x0, y0, x1, y1 = boxes.get(root, (start, y, end - 1, y))
        boxes[root] = (min(x0, start), min(y0, y), max(x1, end - 1), max(y1, y))
    return sorted(boxes.values(), key=lambda b: (b[1], b[0]))


def find_text_boxes(probability, threshold=0.3, box_threshold=0.6, unclip_ratio=1.5, min_size=3):
    """PaddleOCR's DBPostProcess with axis-aligned boxes, as examples/ocr/pipeline.cpp: regions of
    probability > threshold, kept when their box's mean probability >= box_threshold, grown by the unclip
    rule, in reading order. Returns [(x, y, width, height, score)] in probability-map coordinates."""
    boxes = []
    for x0, y0, x1, y1 in connected_boxes(probability > threshold):
        bw, bh = x1 - x0 + 1, y1 - y0 + 1
        if min(bw, bh) < min_size:
            continue
        score = float(probability[y0:y1 + 1, x0:x1 + 1].astype(np.float64).mean())
        if score < box_threshold:
            continue
        d = bw * bh * unclip_ratio / (2 * (bw + bh))  # pyclipper's offset of a rectangle
        ew, eh = bw + 2 * d, bh + 2 * d
        if min(ew, eh) < min_size + 2:
            continue
        boxes.append((lround(x0 - d), lround(y0 - d), lround(ew), lround(eh), score))
    boxes.sort(key=lambda b: (b[1], b[0]))
    # Boxes whose tops are within half a line height of each other are one line, read left to right.
    for i in range(1, len(boxes)):
        for j in range(i, 0, -1):
            a, b = boxes[j - 1], boxes[j]
            if abs(b[1] - a[1]) * 2 < min(a[3], b[3]) and b[0] < a[0]:
                boxes[j - 1], boxes[j] = b, a
            else:
                break
    return boxes


def to_image(box, scale, width, height):
    """A box of the probability map in the coordinates of the image the letterbox was made from."""
    x0, y0 = min(max(lround(box[0] / scale), 0), width), min(max(lround(box[1] / scale), 0), height)
    x1 = min(max(lround((box[0] + box[2]) / scale), 0), width)
    y1 = min(max(lround((box[1] + box[3]) / scale), 0), height)
    return x0, y0, x1 - x0, y1 - y0


# ---- recognition: CTC --------------------------------------------------------------------------------------

def load_dictionary(path):
    """PaddleOCR's characters: class 0 is the CTC blank, class i line i of the file, the last class a space."""
    lines = pathlib.Path(path).read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [l[:-1] if l.endswith("\r") else l for l in lines]
    if not lines:
        raise ValueError(f"{path}: the dictionary is empty")
    return [""] + lines + [" "]


def ctc_greedy_decode(probabilities, characters):
    """The most likely class per step, repeats merged, blanks dropped; confidence: the mean probability of the
    characters kept."""
    best = probabilities.argmax(axis=1)
    keep = (best != 0) & (best != np.concatenate(([0], best[:-1])))
    text = "".join(characters[c] for c in best[keep])
    confidence = float(probabilities[np.arange(len(best)), best][keep].astype(np.float64).mean()) if keep.any() else 0.0
    return text, confidence


def line_input(crop, height, widths):
    """A text crop scaled to `height` (aspect kept) into the narrowest of `widths` that holds it (or squeezed
    into the widest), padded right with grey 127 (0 after the recognizer's mean/std, as PaddleOCR pads)."""
    needed = max(1, math.ceil(height * crop.shape[1] / max(1, crop.shape[0])))
    chosen = min([w for w in widths if w >= needed], default=max(widths))
    out = np.full((height, chosen, 3), 127, np.uint8)
    w = min(needed, chosen)
    out[:, :w] = resize(crop, w, height)
    return out


def upright(cls, crop, threshold=0.9):
    """PaddleOCR's text direction classifier: the crop scaled to 48 high (aspect kept) into a 192-wide input
    padded with grey; classes '0' and '180'. Returns the crop turned upright when the classifier says it is
    upside down with a probability above `threshold`, and that probability."""
    height, width = 48, 192
    w = min(width, max(1, math.ceil(height * crop.shape[1] / max(1, crop.shape[0]))))
    image = np.full((height, width, 3), 127, np.uint8)
    image[:, :w] = resize(crop, w, height)
    outputs = cls.inference(inputs=[image[np.newaxis]])
    if outputs is None:
        raise RuntimeError("direction classification failed (see above)")
    probabilities = outputs[0].reshape(-1)
    if probabilities.argmax() == 1 and probabilities[1] > threshold:
        return crop[::-1, ::-1], float(probabilities[1])
    return crop, float(probabilities[0])


# ---- the pipeline ------------------------------------------------------------------------------------------

def shapes_of(config_path):
    """The (height, width) of each dynamic_input group of a conversion config, and its mean_values."""
    config = json.loads(pathlib.Path(config_path).read_text())
    return [(group[0][2], group[0][3]) for group in config["dynamic_input"]], config["mean_values"][0]


def open_model(path):
    model = RKNNLite()
    if model.load_rknn(str(path)) != 0 or model.init_runtime() != 0:
        raise RuntimeError(f"{path}: cannot be loaded (see above)")
    return model


def run(args):
    started = time.perf_counter()
    rgb = read_image(args.image)
    characters = load_dictionary(args.dict)
    det_shapes, det_mean = shapes_of(args.det_config)
    rec_shapes, _ = shapes_of(args.rec_config)
    det, rec = open_model(args.det), open_model(args.rec)
    cls = open_model(args.cls) if args.cls else None
    print(det.get_sdk_version().replace("\n", ", "))

    # Detection: the shape whose aspect is nearest the image's (of equal aspects, the largest).
    t0 = time.perf_counter()
    aspect = math.log(rgb.shape[0] / rgb.shape[1])
    det_h, det_w = min(det_shapes, key=lambda s: abs(math.log(s[0] / s[1]) - aspect) * 1e6 - s[0] * s[1])
    fill = [lround(m) for m in det_mean]  # the padding normalises to ~0
    boxed, scale = letterbox(rgb, det_w, det_h, fill)
    outputs = det.inference(inputs=[boxed[np.newaxis]])
    if outputs is None:
        raise RuntimeError("detection failed (see above)")
    boxes = find_text_boxes(outputs[0].reshape(det_h, det_w))
    det_ms = (time.perf_counter() - t0) * 1e3

    # Recognition: each box cropped, scaled to the recognizer's height and the narrowest width that holds it.
    t0 = time.perf_counter()
    rec_h = rec_shapes[0][0]
    widths = [w for _, w in rec_shapes]
    print(f"{len(boxes)} text box{'' if len(boxes) == 1 else 'es'} in {args.image} ({rgb.shape[1]}x{rgb.shape[0]}; "
          f"detector input {det_w}x{det_h})")
    results = []
    for box in boxes:
        x, y, w, h = to_image(box, scale, rgb.shape[1], rgb.shape[0])
        if w < 2 or h < 2:
            continue
        crop = rgb[y:y + h, x:x + w]
        if cls is not None:
            crop, _ = upright(cls, crop)
        outputs = rec.inference(inputs=[line_input(crop, rec_h, widths)[np.newaxis]])
        if outputs is None:
            raise RuntimeError("recognition failed (see above)")
        probabilities = outputs[0].reshape(outputs[0].shape[-2], outputs[0].shape[-1])
        if probabilities.shape[1] != len(characters):
            raise RuntimeError(f"the recognizer outputs {probabilities.shape[1]} classes, the dictionary {args.dict} "
                               f"has {len(characters)} (blank + lines + space)")
        text, confidence = ctc_greedy_decode(probabilities, characters)
        if not text:
            continue
        results.append(((x, y, w, h), confidence, text))
        print(f"  [{x:4d},{y:4d} {w:4d}x{h:<3d}] {confidence:.3f}  {text}")
    rec_ms = (time.perf_counter() - t0) * 1e3
    print(f"{len(results)} line{'' if len(results) == 1 else 's'} read; detection {det_ms:.0f} ms, recognition "
          f"{rec_ms:.0f} ms, total {(time.perf_counter() - started) * 1e3:.0f} ms")
    for model in (det, rec, cls):
        if model is not None:
            model.release()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("image")
    parser.add_argument("--models", default="build/models/ocr-converted",
                        help="folder with det.hrknn, rec.hrknn and dict.txt (default: build/models/ocr-converted)")
    parser.add_argument("--det", help="detection model (default: MODELS/det.hrknn)")
    parser.add_argument("--rec", help="recognition model (default: MODELS/rec.hrknn)")
    parser.add_argument("--dict", help="the recognizer's dictionary (default: MODELS/dict.txt)")
    parser.add_argument("--cls", help="the text direction classifier (PaddleOCR's cls model, converted with "
                                      "examples/python/cls.json): turns upside-down lines before recognition")
    parser.add_argument("--det-config", default=str(CONFIGS / "det.json"),
                        help="the detector's conversion config, for its shapes (default: examples/ocr/det.json)")
    parser.add_argument("--rec-config", default=str(CONFIGS / "rec.json"),
                        help="the recognizer's conversion config, for its widths (default: examples/ocr/rec.json)")
    args = parser.parse_args()
    models = pathlib.Path(args.models)
    args.det = args.det or str(models / "det.hrknn")
    args.rec = args.rec or str(models / "rec.hrknn")
    args.dict = args.dict or str(models / "dict.txt")
    try:
        needed = [(args.image, "image"), (args.det, "detection model"), (args.rec, "recognition model"),
                  (args.dict, "dictionary")] + ([(args.cls, "direction classifier")] if args.cls else [])
        for path, what in needed:
            if not pathlib.Path(path).is_file():
                raise FileNotFoundError(f"{path}: no such file (the {what})")
        run(args)
    except (OSError, ValueError, RuntimeError, KeyError) as e:
        sys.stdout.flush()
        print(f"ocr: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
