#!/usr/bin/env python3
"""Renders a calibration set for the PaddleOCR v4 models the project makes itself (no downloads):
pages of printed text lines like the demo image (examples/ocr/data/rknnxx_demo.png) for the
detector, and single text lines for the recognizer, with their DATASET.txt files in the toolkit's
format (docs/quantization.md).

  make_calibration_set.py OUT_DIR [--count N (40)] [--seed S (2026)]

OUT_DIR/det/page_NN.png (640x640 and 640x480 pages, 2 to 6 lines each) and OUT_DIR/det.txt;
OUT_DIR/rec/line_NN.png (one line cropped and scaled to 48 pixels high as examples/ocr does, on a 960
wide grey strip: the recognizer's MaxShape in examples/ocr/rec.json) and OUT_DIR/rec.txt. Text, fonts
(DejaVu), sizes, colours and positions vary with the seed; the output is the same for the same seed.
Needs Pillow (Debian python3-pil) and the
DejaVu fonts (fonts-dejavu-core).
"""
import argparse
import random
import string
import sys
from pathlib import Path

try:
    from PIL import Image, ImageDraw, ImageFont
except ImportError:
    sys.exit("make_calibration_set.py: Pillow is missing (apt-get install python3-pil)")

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf", "DejaVuSansCondensed.ttf"]
WORDS = ("Rockchip NPU host runtime model tensor layout quantized float int8 board camera image text line "
         "OCR detector recognizer zero copy memory buffer scale point channel input output shape dynamic "
         "calibration dataset accuracy cosine layer kernel thread engine convert inspect profile bench "
         "the a of on and with for any PC Linux").split()


def text_line(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(2, 5))]
    if rng.random() < 0.5:
        words.insert(rng.randint(0, len(words)), str(rng.randint(0, 9999)))
    if rng.random() < 0.3:
        words.append("".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(rng.randint(2, 6))))
    return " ".join(words)


def colours(rng):
    paper = tuple(rng.randint(200, 255) for _ in range(3))
    ink = tuple(rng.randint(0, 80) for _ in range(3))
    return (ink, paper) if rng.random() < 0.9 else (paper, ink)  # sometimes light text on dark


def font(rng, size):
    fonts = [f for f in FONTS if (FONT_DIR / f).exists()]
    if not fonts:
        sys.exit(f"make_calibration_set.py: no DejaVu fonts in {FONT_DIR} (apt-get install fonts-dejavu-core)")
    return ImageFont.truetype(str(FONT_DIR / rng.choice(fonts)), size)


def page(rng):
    width, height = rng.choice([(640, 640), (640, 480), (640, 360)])
    ink, paper = colours(rng)
    img = Image.new("RGB", (width, height), paper)
    draw = ImageDraw.Draw(img)
    y = rng.randint(10, 40)
    for _ in range(rng.randint(2, 6)):
        f = font(rng, rng.randint(22, 46))
        text = text_line(rng)
        while draw.textlength(text, font=f) > width - 40 and " " in text:
            text = text.rsplit(" ", 1)[0]
        x = rng.randint(10, max(10, width - 20 - int(draw.textlength(text, font=f))))
        if y + f.size > height - 10:
            break
        draw.text((x, y), text, font=f, fill=ink)
        y += int(f.size * rng.uniform(1.6, 2.6))
    return img


def line(rng):
    """A text line as examples/ocr hands it to the recognizer (pipeline.cpp, line_input): the detector's
    box around the text with a small margin, scaled to 48 pixels high, then grey (127) padding up to
    the model's width; 960 here, the MaxShape every calibration image is resized to."""
    ink, paper = colours(rng)
    f = font(rng, rng.randint(28, 46))
    text = text_line(rng)
    left, top, right, bottom = ImageDraw.Draw(Image.new("RGB", (1, 1))).textbbox((0, 0), text, font=f)
    margin = rng.randint(2, 8)
    img = Image.new("RGB", (right - left + 2 * margin, bottom - top + 2 * margin), paper)
    ImageDraw.Draw(img).text((margin - left, margin - top), text, font=f, fill=ink)
    img = img.resize((min(960, round(img.width * 48 / img.height)), 48), Image.BILINEAR)
    strip = Image.new("RGB", (960, 48), (127, 127, 127))
    strip.paste(img, (0, 0))
    return strip


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    # 40: with 20, the w8a8 recognizer read a space after the demo image's first line (README, "int8").
    ap.add_argument("--count", type=int, default=40, help="images per model (default 40)")
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    if a.count < 1:
        sys.exit("make_calibration_set.py: --count must be at least 1")
    rng = random.Random(a.seed)
    for kind, make in (("det", page), ("rec", line)):
        folder = a.out / kind
        folder.mkdir(parents=True, exist_ok=True)
        names = []
        for i in range(a.count):
            name = f"{kind}/{'page' if kind == 'det' else 'line'}_{i:02d}.png"
            make(rng).save(a.out / name)
            names.append(name)
        (a.out / f"{kind}.txt").write_text("\n".join(names) + "\n")
        print(f"{a.out / (kind + '.txt')}: {a.count} images")


if __name__ == "__main__":
    main()
