#!/usr/bin/python3
"""Pixel facts of browser screenshots, for the HTML report's browser test.

usage: screenshot_stats.py A.png B.png COLOR...

Prints one JSON object: the size of A, how many pixels differ between A and B
(B cropped or padded to A's size), and for each COLOR (#rrggbb) how many pixels
of exactly that colour A and B each hold. Exit 2 when PIL is missing.
"""
import json
import sys

try:
    from PIL import Image, ImageChops
except ImportError:
    print("python3-pil is not installed for " + sys.executable, file=sys.stderr)
    sys.exit(2)


def rgb(hex_color):
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def color_counts(image, colors):
    histogram = {color: count for count, color in image.getcolors(image.width * image.height)}
    return {c: histogram.get(rgb(c), 0) for c in colors}


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    a = Image.open(argv[1]).convert("RGB")
    b = Image.open(argv[2]).convert("RGB")
    if b.size != a.size:
        padded = Image.new("RGB", a.size, (0, 0, 0))
        padded.paste(b, (0, 0))
        b = padded
    difference = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v else 0)
    colors = argv[3:]
    print(json.dumps({
        "width": a.width,
        "height": a.height,
        "differing_pixels": difference.histogram()[255],
        "a": color_counts(a, colors),
        "b": color_counts(b, colors),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
