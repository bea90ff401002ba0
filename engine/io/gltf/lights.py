"""glTF KHR_lights_punctual -> engine lights (engine.scene.light).

The root ``extensions.KHR_lights_punctual.lights`` array defines the lights; a node's
``extensions.KHR_lights_punctual.light`` places one, shining along the node's local -Z
(the engine's convention too), as a child node with no transform of its own::

    directional  DirectionalLight, ``intensity`` in lux
    point        PointLight, ``intensity`` in candela, optional ``range``
    spot         SpotLight with ``spot.innerConeAngle`` (default 0) and
                 ``spot.outerConeAngle`` (default pi / 4), radians

The engine's light unit is the file's divided by pi (engine.render.pbr: a PBR surface's
radiance is ``pi * f * E * N.L``), so the drawn radiance is the extension's
``f * intensity * N.L``; ``color`` is linear RGB as in the engine. A scene with any light
gets no headlight (engine.render.shading.scene_lights), so the file's lights alone light
it; scale them with ``Scene.exposure``.
"""

from __future__ import annotations

import math

from ...scene.light import DirectionalLight, PointLight, SpotLight
from .document import Document

__all__ = ["EXTENSION", "node_light"]

EXTENSION = "KHR_lights_punctual"


def _lights(doc: Document) -> list:
    ext = doc.obj(doc.json, "extensions", "(root)") or {}
    root = ext.get(EXTENSION)
    if root is None:
        return []
    where = f"extensions.{EXTENSION}"
    if not isinstance(root, dict):
        raise doc.error(where, "must be an object")
    return doc.list(root, "lights", where)


def node_light(doc: Document, node: dict, where: str, name: str):
    """The engine light ``node`` (a glTF node object at ``where``) places, or None.
    Raises the document's LoadError naming the field for a bad light."""
    ext = doc.obj(node, "extensions", where) or {}
    placed = ext.get(EXTENSION)
    if placed is None:
        return None
    pw = f"{where}.extensions.{EXTENSION}"
    if not isinstance(placed, dict):
        raise doc.error(pw, "must be an object")
    lights = _lights(doc)
    index = doc.integer(placed, "light", pw)
    if not 0 <= index < len(lights):
        raise doc.error(f"{pw}.light", f"{index} is not an index of the file's "
                        f"{len(lights)} KHR_lights_punctual lights")
    lw = f"extensions.{EXTENSION}.lights[{index}]"
    d = lights[index]
    if not isinstance(d, dict):
        raise doc.error(lw, "must be an object")
    kind = doc.string(d, "type", lw, choices=("directional", "point", "spot"))
    color = doc.numbers(d, "color", lw, 3, default=(1.0, 1.0, 1.0))
    for k, c in enumerate(color):
        if not 0.0 <= c <= 1.0:
            raise doc.error(f"{lw}.color[{k}]", f"must be in [0, 1], got {c:g}")
    intensity = doc.number(d, "intensity", lw, default=1.0, lo=0.0) / math.pi
    label = f"{name} light" if not isinstance(d.get("name"), str) else d["name"]
    if kind == "directional":
        return DirectionalLight(label, color, intensity)
    light_range = doc.number(d, "range", lw, default=None, lo=0.0, lo_open=True)
    if kind == "point":
        return PointLight(label, color, intensity, range=light_range)
    spot = doc.obj(d, "spot", lw) or {}
    sw = f"{lw}.spot"
    outer = doc.number(spot, "outerConeAngle", sw, default=math.pi / 4, lo=0.0, lo_open=True,
                       hi=math.pi / 2)
    inner = doc.number(spot, "innerConeAngle", sw, default=0.0, lo=0.0)
    if inner >= outer:
        raise doc.error(f"{sw}.innerConeAngle", f"must be below outerConeAngle ({outer:g}), "
                        f"got {inner:g}")
    return SpotLight(label, color, intensity, inner, outer, range=light_range)
