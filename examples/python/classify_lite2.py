#!/usr/bin/env python3
"""Image classification written against RKNN-Toolkit-Lite2's interface: on a board it runs with Rockchip's
Lite2 or with rknnxx (vendor runtime); on a PC with rknnxx (host runtime). docs/python.md.

    PYTHONPATH=build/python python3 examples/python/classify_lite2.py MODEL.hrknn IMAGE [--top 5]

IMAGE is a .npy array ([1, H, W, C] or [H, W, C], NHWC) or a picture file (read with Pillow, resized
to the model's input, RGB). The scores printed are the model's first output after a softmax.
"""

import argparse
import sys

import numpy as np
from rknnlite.api import RKNNLite


def load_image(path, height, width):
    if path.endswith(".npy"):
        image = np.load(path)
    else:
        from PIL import Image  # only for picture files
        image = np.asarray(Image.open(path).convert("RGB").resize((width, height)), dtype=np.uint8)
    return image[np.newaxis] if image.ndim == 3 else image


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("image")
    parser.add_argument("--size", type=int, nargs=2, default=(224, 224), metavar=("HEIGHT", "WIDTH"),
                        help="the size a picture file is resized to (default 224 224)")
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()

    rknn_lite = RKNNLite()
    if rknn_lite.load_rknn(args.model) != 0:
        print("Load RKNN model failed")
        return 1
    if rknn_lite.init_runtime() != 0:
        print("Init runtime environment failed")
        return 1
    outputs = rknn_lite.inference(inputs=[load_image(args.image, *args.size)])
    if outputs is None:
        print("Inference failed")
        return 1
    scores = outputs[0].reshape(-1).astype(np.float64)
    scores = np.exp(scores - scores.max())
    scores /= scores.sum()
    print(f"-----TOP {args.top}-----")
    for index in np.argsort(scores)[::-1][:args.top]:
        print(f"[{index:>3d}] score:{scores[index]:.6f}")
    rknn_lite.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
