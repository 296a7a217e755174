"""Opens a chart written by `foresight plot` / `cache-curve` with real
parsers and prints what it holds as one JSON line, for plot_cli_test.

SVG: parsed with xml.etree; reports the texts (titles, axis labels, legend
entries) and the distinct colours of the data lines (PLplot draws them 2
units wide; axes, ticks and grid are 1 wide), then renders the file with
rsvg-convert when it is installed ("rendered": true/false).
PNG: checks the signature and every chunk's CRC, inflates the IDAT stream,
undoes the scanline filters and reports the size and the number of pixels
of each distinct colour.
Exit status 1 with a message on stderr when the file does not parse.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"


def check_svg(path):
    root = ET.parse(path).getroot()
    if root.tag != SVG + "svg":
        raise ValueError("root element is %s, not svg" % root.tag)
    texts = ["".join(t.itertext()).strip() for t in root.iter(SVG + "text")]
    colours = set()
    for line in root.iter(SVG + "polyline"):
        if float(line.get("stroke-width", "1")) >= 1.5:
            colours.add(line.get("stroke").upper())
    out = {"format": "svg", "texts": texts, "line_colours": sorted(colours), "rendered": False}
    rsvg = shutil.which("rsvg-convert")
    if rsvg:
        with tempfile.TemporaryDirectory() as tmp:
            png = os.path.join(tmp, "r.png")
            subprocess.run([rsvg, "-o", png, path], check=True, capture_output=True)
            out["rendered"] = True
            out["render"] = check_png(png, decode=False)
    return out


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def check_png(path, decode=True):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError("bad CRC in chunk %r" % kind)
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    width, height, depth, colour_type, _, _, interlace = header
    if not decode:
        return {"format": "png", "width": width, "height": height}
    channels = {2: 3, 6: 4, 0: 1, 4: 2}.get(colour_type)
    if depth != 8 or channels is None or interlace != 0:
        raise ValueError("unexpected PNG layout %r" % (header,))
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    counts = {}
    for y in range(height):
        row = raw[y * (stride + 1):(y + 1) * (stride + 1)]
        kind, line = row[0], bytearray(row[1:])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 255
        for x in range(0, stride, channels):
            key = "#%02X%02X%02X" % tuple(line[x:x + 3]) if channels >= 3 else "#%02X" % line[x]
            counts[key] = counts.get(key, 0) + 1
        prev = line
    return {"format": "png", "width": width, "height": height, "colours": counts}


def main():
    path = sys.argv[1]
    try:
        out = check_svg(path) if path.endswith(".svg") else check_png(path)
    except Exception as e:  # any parse failure fails the test with its reason
        print("%s: %s" % (path, e), file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
