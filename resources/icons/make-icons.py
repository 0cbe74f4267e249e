#!/usr/bin/env python3
"""Draws the program's icon, wavefront-studio-SIZE.png, at the hicolor theme's sizes: a converging
spherical wavefront (three arcs) and the point-spread function it makes at focus (an Airy pattern on a
fourth-root stretch, in viridis). Run once by hand; the PNGs are kept in the repository:
    /usr/bin/python3 resources/icons/make-icons.py resources/icons
Needs numpy only."""
import struct
import sys
import zlib
from pathlib import Path

import numpy as np

SIZES = (16, 32, 48, 64, 128, 256)
SUPERSAMPLE = 4
# viridis at ten even steps (matplotlib's table)
VIRIDIS = np.array([[0x44, 0x01, 0x54], [0x48, 0x28, 0x78], [0x3e, 0x49, 0x89], [0x31, 0x68, 0x8e],
                    [0x26, 0x82, 0x8e], [0x1f, 0x9e, 0x89], [0x35, 0xb7, 0x79], [0x6e, 0xce, 0x58],
                    [0xb5, 0xde, 0x2b], [0xfd, 0xe7, 0x25]], dtype=float) / 255
BACKGROUND = np.array([0x14, 0x18, 0x30]) / 255
WAVE = np.array([0xe6, 0xef, 0xff]) / 255


def bessel_j1(x):
    # J1(x) = (1/pi) int_0^pi cos(t - x sin t) dt, by the midpoint rule (exact enough for a picture).
    t = (np.arange(200) + 0.5) * np.pi / 200
    return np.cos(t[None, :] - x.reshape(-1, 1) * np.sin(t)[None, :]).mean(axis=1).reshape(x.shape)


def viridis(v):
    v = np.clip(v, 0, 1) * (len(VIRIDIS) - 1)
    i = np.minimum(v.astype(int), len(VIRIDIS) - 2)
    f = (v - i)[..., None]
    return VIRIDIS[i] * (1 - f) + VIRIDIS[i + 1] * f


def draw(size):
    n = size * SUPERSAMPLE
    c = (np.arange(n) + 0.5) / n * 2 - 1          # -1 .. 1 across the icon, y up
    x, y = np.meshgrid(c, -c)
    # A rounded square, 6 % margin.
    half, radius = 0.94, 0.28
    qx, qy = np.maximum(np.abs(x) - (half - radius), 0), np.maximum(np.abs(y) - (half - radius), 0)
    inside = (np.hypot(qx, qy) <= radius).astype(float)

    focus = np.array([0.30, 0.0])
    r = np.hypot(x - focus[0], y - focus[1])
    arg = np.maximum(r * (3.8317 / 0.17), 1e-9)  # first dark ring at r = 0.17
    airy = (2 * bessel_j1(arg) / arg) ** 2
    shown = airy ** 0.22 * np.clip(1 - r / 0.78, 0, 1) ** 0.3
    rgb = BACKGROUND * (1 - shown[..., None]) + viridis(shown) * shown[..., None]

    # Three arcs of the spherical wave converging on the focus, on its left.
    angle = np.abs(np.arctan2(y - focus[1], -(x - focus[0])))   # 0 towards -x
    for radius_k, alpha in ((0.80, 1.0), (0.97, 0.75), (1.14, 0.5)):
        ring = (np.abs(r - radius_k) < 0.04) & (angle < 0.55)
        rgb = np.where(ring[..., None], rgb * (1 - alpha) + WAVE * alpha, rgb)

    rgba = np.concatenate([rgb, inside[..., None]], axis=2)
    rgba[..., :3] *= rgba[..., 3:4]             # average premultiplied, then undo
    rgba = rgba.reshape(size, SUPERSAMPLE, size, SUPERSAMPLE, 4).mean(axis=(1, 3))
    a = rgba[..., 3:4]
    rgba[..., :3] = np.where(a > 0, rgba[..., :3] / np.maximum(a, 1e-9), 0)
    return np.round(np.clip(rgba, 0, 1) * 255).astype(np.uint8)


def write_png(path, rgba):
    h, w, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[row].tobytes() for row in range(h))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
                     + chunk(b"IEND", b""))


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    for size in SIZES:
        write_png(out / f"wavefront-studio-{size}.png", draw(size))


if __name__ == "__main__":
    main()
