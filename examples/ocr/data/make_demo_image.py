# Renders the OCR demo image (kept out of the repo's scripts: the PNG is committed).
from PIL import Image, ImageDraw, ImageFont
W, H = 640, 360
img = Image.new("RGB", (W, H), (246, 243, 235))
d = ImageDraw.Draw(img)
font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 38)
bold = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", 44)
lines = [("Rockchip NPU 2026", bold, (40, 40)), ("rknnxx runs on any PC", font, (40, 140)), ("OCR on the host runtime", font, (40, 240))]
for text, f, pos in lines:
    d.text(pos, text, font=f, fill=(30, 30, 40))
img.save("/work/main/examples/ocr/data/rknnxx_demo.png", optimize=True)
