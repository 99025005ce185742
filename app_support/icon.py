"""The dashboard's favicon, drawn here (a hysteresis loop on the project's blue) so that no icon is fetched
from a font or emoji CDN: the lab network may be offline."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from PIL import Image

SIZE = 64


def favicon(size: int = SIZE) -> NDArray[np.uint8]:
    """RGBA image (size × size × 4): a white hysteresis loop on a rounded blue square."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float64)
    c = (size - 1) / 2.0
    img = np.zeros((size, size, 4), dtype=np.uint8)
    # rounded square background
    r = 0.22 * size
    dx = np.maximum(np.abs(xx - c) - (c - r), 0.0)
    dy = np.maximum(np.abs(yy - c) - (c - r), 0.0)
    inside = dx**2 + dy**2 <= r**2
    img[inside] = (31, 95, 139, 255)
    # a loop x = sin(t), y = sin(t − φ): the force lags the displacement
    t = np.linspace(0.0, 2 * np.pi, 400)
    px = c + 0.62 * c * np.sin(t)
    py = c - 0.62 * c * np.sin(t - 0.9)
    d2 = np.min((xx[..., None] - px) ** 2 + (yy[..., None] - py) ** 2, axis=-1)
    line = d2 <= (0.055 * size) ** 2
    img[line & inside] = (255, 255, 255, 255)
    return img


def favicon_image(size: int = SIZE) -> Image.Image:
    """:func:`favicon` as a PIL image: what ``st.set_page_config(page_icon=...)`` takes (a numpy array fails
    its ``page_icon == "random"`` test)."""
    return Image.fromarray(favicon(size))
