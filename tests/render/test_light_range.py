"""A ranged point light's falloff against KHR_lights_punctual's recommended attenuation,
``max(min(1 - (d / range)^4, 1), 0) / d^2`` (the extension's README, "Range Property"),
evaluated here. Found by the independent GL reference (benchmarks/gl_reference.py), which
follows the extension: the engine squared the window (``clamp(1 - (d / range)^4, 0,
1)^2``, the form of Karis's UE4 notes), so every ranged light was dimmer than the
extension's near its range (at d = 0.8 range: 0.35 against 0.59)."""

from __future__ import annotations

import numpy as np
import pytest
import stand_in_device

from engine import Material, Mesh, Node, OrthographicCamera, PointLight, Renderer, Scene


def _linear(srgb8):
    c = np.asarray(srgb8, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _centre_radiance(light_range, backend, monkeypatch, native_dir):
    """Linear red radiance at the centre of a grey PBR wall, 1 below a point light, drawn
    by ``backend`` (numpy, numba, cuda: the .cu kernels built for the CPU, or gl)."""
    scene = Scene(background=(0, 0, 0))
    quad = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]], np.float32)
    wall = Material(color=(0.5, 0.5, 0.5), shading="pbr", metallic=0.0, roughness=1.0)
    scene.add(Node("wall", geometry=Mesh(quad, [[0, 1, 2], [0, 2, 3]], material=wall)))
    scene.add(PointLight(intensity=2.5, range=light_range, position=(0, 0, 1)))
    camera = scene.add(OrthographicCamera(height=4, position=(0, 0, 5)))
    kw = {"backend": backend}
    if backend == "cuda":
        count = stand_in_device.install(monkeypatch, native_dir)
        kw = {"backend": "cupy"}
    elif backend == "gl":
        kw = {"backend": "numba", "raster": "gl"}
    with Renderer(scene, camera, (33, 33), msaa=1, **kw) as r:
        img = r.render().color
        assert r.drawn_by == {"cuda": "cupy"}.get(backend, backend)
    if backend == "cuda":
        assert "resolve_surfaces" in count.kernels
    return float(_linear(img[16, 16, 0]))


@pytest.mark.parametrize("backend", ["numpy", "numba", "cuda", "gl"])
def test_ranged_point_light_follows_the_extension_attenuation(backend, monkeypatch,
                                                              native_dir):
    unlimited = _centre_radiance(None, backend, monkeypatch, native_dir)
    assert 0.2 < unlimited < 0.9  # not clipped, not black: the ratio below is measurable
    d, light_range = 1.0, 1.25
    window = min(max(1 - (d / light_range) ** 4, 0.0), 1.0)  # 0.5904
    ratio = _centre_radiance(light_range, backend, monkeypatch, native_dir) / unlimited
    assert ratio == pytest.approx(window, rel=0.03), ratio  # the squared window gave 0.349
