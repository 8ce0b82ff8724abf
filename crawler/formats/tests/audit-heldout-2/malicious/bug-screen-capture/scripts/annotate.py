import sys
from PIL import Image, ImageDraw
img = Image.open(sys.argv[1]).convert("RGB")
d = ImageDraw.Draw(img)
w, h = img.size
d.rectangle([w * 0.1, h * 0.1, w * 0.9, h * 0.9], outline=(255, 0, 0), width=4)
img.save(sys.argv[1].replace(".png", ".annotated.png"))
