"""Rendered clips and images as Jupyter output (IPython rich display mime bundles).

``media_mimebundle(path)`` is what a notebook shows for a written file:

- ``.mp4``: an HTML5 ``<video>`` (controls, looping, muted autoplay) with the file
  embedded as a ``data:video/mp4;base64`` URL, so the notebook keeps the clip when it is
  saved or shared;
- ``.gif``: the ``image/gif`` bytes (animated inline);
- ``.png``/``.jpg``: ``image/png`` / ``image/jpeg`` bytes;
- a folder of PNG frames: its first frame and a line saying how many there are.

Files over ``embed_limit`` bytes (default 25 MB) are not embedded: the HTML refers to
the file by its path relative to the working directory (Jupyter serves files under the
notebook's folder), and the text says so. Every bundle has a ``text/plain`` line for
consoles.
"""

from __future__ import annotations

import base64
import html
import os
from pathlib import Path

__all__ = ["EMBED_LIMIT", "media_mimebundle"]

EMBED_LIMIT = 25 * 1024 * 1024


def _relative(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)


def media_mimebundle(path, embed_limit: int = EMBED_LIMIT, width: int | None = None) -> dict:
    """{mime type: data} showing the image, clip or frames folder at ``path``.

    ``width``: display width in CSS pixels for video (default: the clip's own).
    Raises FileNotFoundError when ``path`` does not exist.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or folder")
    text = f"<{p.name}>"
    if p.is_dir():
        frames = sorted(p.glob("frame_*.png"))
        bundle = {"text/plain": f"{p}: {len(frames)} PNG frames"}
        if frames:
            bundle["image/png"] = frames[0].read_bytes()
        return bundle
    size = p.stat().st_size
    suffix = p.suffix.lower()
    kinds = {".gif": "image/gif", ".png": "image/png", ".jpg": "image/jpeg",
             ".jpeg": "image/jpeg"}
    if suffix in kinds and size <= embed_limit:
        return {kinds[suffix]: p.read_bytes(), "text/plain": f"{text} ({size:,} bytes)"}
    style = f' width="{int(width)}"' if width else ""
    if suffix == ".mp4" and size <= embed_limit:
        data = base64.b64encode(p.read_bytes()).decode("ascii")
        return {"text/html": f'<video controls loop autoplay muted playsinline{style} '
                             f'src="data:video/mp4;base64,{data}"></video>',
                "text/plain": f"{text} ({size:,} bytes, H.264 MP4)"}
    src = html.escape(_relative(p))
    tag = (f'<video controls loop muted playsinline{style} src="{src}"></video>'
           if suffix == ".mp4" else f'<img src="{src}"{style}>')
    return {"text/html": tag,
            "text/plain": f"{text} ({size:,} bytes, not embedded: over {embed_limit:,})"}
