"""A minified "pbr" data map is filtered as its sampler says (glTF 2.0, section 5.26: a
texture's sampler, minFilter included, applies to every texture of a material). Found by
the independent GL reference (benchmarks/gl_reference.py): the engine read the
metallic-roughness, occlusion and emissive maps at their full-size level with the
magnification filter on every backend, so a detailed map seen from afar aliased where
its base colour texture would not. Each map now has a mip chain of its own (the data
maps' of their stored values, the emissive map's in linear light, as the base colour's)
and is read at the level of detail of its own UV set and size.

Each test body runs on every backend: NumPy (the reference), Numba, CUDA (the .cu
kernels compiled by the host compiler behind the stand-in device,
tests/render/stand_in_device.py) and GL (Mesa llvmpipe through ``raster="gl"``); the
parity matrix (tests/render/test_parity.py, ``minified_data_maps``) compares them on a
floor to the horizon."""

from __future__ import annotations

import numpy as np
import pytest
import stand_in_device

from engine import (
    AmbientLight,
    DirectionalLight,
    Material,
    Mesh,
    Node,
    OrthographicCamera,
    Renderer,
    Scene,
    Texture,
)
from engine.scene.colorspace import linear_to_srgb
from engine.scene.material import Sampler

BACKENDS = ("numpy", "numba", "cuda", "gl")
DRAWN_BY = {"numpy": "numpy", "numba": "numba", "cuda": "cupy", "gl": "gl"}
QUAD = np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]], np.float32)
# 0.9 x 128 texels across 16 pixels: level of detail log2(7.2) = 2.85, pixel centres off
# the texel grid
UV = np.array([[0, 0.9], [0.9, 0.9], [0.9, 0], [0, 0]], np.float32)


def _checker(low=0, high=255, n=128):
    """(n, n) uint8 one-texel checker of ``low`` and ``high``."""
    return np.where(np.indices((n, n)).sum(axis=0) % 2 == 1, high, low).astype(np.uint8)


def _wall(material, ambient=0.5, uvs=UV, uvs1=None):
    """An orthographic 16 x 16 view of a wall filling it, under an ambient light only."""
    scene = Scene(background=(0, 0, 0))
    scene.add(Node("wall", geometry=Mesh(QUAD, [[0, 1, 2], [0, 2, 3]], uvs=uvs, uvs1=uvs1,
                                         material=material)))
    if ambient:
        scene.add(AmbientLight(intensity=ambient))
    camera = scene.add(OrthographicCamera(height=4, position=(0, 0, 5)))
    return scene, camera


def _occluded_wall():
    """A white dielectric wall whose occlusion map is a one-texel 0 / 255 checker (default
    sampler: trilinear)."""
    occlusion = Texture(np.dstack([_checker()] * 3))
    wall = Material(color=(1, 1, 1), shading="pbr", metallic=0.0, roughness=1.0,
                    maps={"occlusion": occlusion})
    return _wall(wall)


@pytest.fixture
def renderer_on(monkeypatch, native_dir):
    """backend name -> a function making that backend's Renderer (the arguments of
    Renderer after the backend's own)."""
    def make(backend, *args, **kwargs):
        if backend == "gl":
            return Renderer(*args, backend="numba", raster="gl", **kwargs)
        if backend == "cuda":
            stand_in_device.install(monkeypatch, native_dir)
            return Renderer(*args, backend="cupy", **kwargs)
        return Renderer(*args, backend=backend, **kwargs)
    return make


def _render(make, scene, camera, backend):
    r = make(backend, scene, camera, (16, 16), msaa=1)
    color = r.render().color
    assert r.drawn_by == DRAWN_BY[backend]  # that backend's stages, not a fallback
    return color[2:14, 2:14]


def _encoded(linear):
    return 255 * float(linear_to_srgb(np.float64(linear)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_minified_occlusion_map_reads_its_mip_levels(backend, renderer_on):
    img = _render(renderer_on, *_occluded_wall(), backend)[..., 0]
    # from level 1 on every texel of the chain is the checker's mean, occlusion 0.5: one
    # uniform value, the ambient 0.5 x (c_diff 1 + F0 0.04) x 0.5 = 0.26 in linear light
    want = 1.055 * 0.26 ** (1 / 2.4) - 0.055
    assert img.std() < 1.0 and abs(float(img.mean()) - 255 * want) <= 2, (img.std(),
                                                                           img.mean())


@pytest.mark.parametrize("backend", BACKENDS)
def test_magnified_occlusion_map_keeps_its_texels(backend, renderer_on):
    """The same checker 8 texels across 16 pixels: magnified, nearest, each texel's own
    occlusion (0 or 1), not a level's mean."""
    occlusion = Texture(np.dstack([_checker(n=8)] * 3),
                        Sampler("repeat", "repeat", "nearest", "nearest_mipmap_nearest"))
    wall = Material(color=(1, 1, 1), shading="pbr", metallic=0.0, roughness=1.0,
                    maps={"occlusion": occlusion})
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    img = renderer_on(backend, *_wall(wall, uvs=uv), (16, 16), msaa=1).render().color
    # ambient 0.5 x 1.04 x occlusion: texel (i, j) covers pixels 2i..2i+1, 2j..2j+1
    want = np.where(_checker(n=8).repeat(2, 0).repeat(2, 1) > 0, _encoded(0.52), 0)
    np.testing.assert_allclose(img[..., 0], want, atol=1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_minified_metallic_roughness_map_averages_stored_values(backend, renderer_on):
    """A metalness checker of stored 0 and 128 (B): the chain averages the stored values
    (metal 64 / 255, as GL filters a plain RGBA8 texture), not linear light (which would
    give sRGB-decoded 128 / 2 = 0.108)."""
    mr = np.dstack([np.zeros((128, 128), np.uint8), np.full((128, 128), 255, np.uint8),
                    _checker(0, 128)])
    wall = Material(color=(1, 1, 1), shading="pbr", metallic=1.0, roughness=1.0,
                    maps={"metallic_roughness": Texture(mr)})
    img = _render(renderer_on, *_wall(wall), backend)[..., 0]
    m = 64 / 255
    # ambient A (c_diff + F0) with c = 1: A ((1 - m) + 0.04 (1 - m) + m)
    want = _encoded(0.5 * (1.04 * (1 - m) + m))
    assert img.std() < 1.0 and abs(float(img.mean()) - want) <= 1, (img.std(), img.mean(),
                                                                    want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_minified_emissive_map_averages_linear_light(backend, renderer_on):
    """An emissive black / white checker on a black metal in the dark: the emissive map
    is a colour (sRGB), its chain averages linear light, 0.5, sRGB 188."""
    em = Texture(np.dstack([_checker()] * 3))
    wall = Material(color=(0, 0, 0), shading="pbr", metallic=1.0, roughness=1.0,
                    emissive=(1, 1, 1), maps={"emissive": em})
    img = _render(renderer_on, *_wall(wall, ambient=0), backend)[..., :3]
    assert img.std() < 1.0 and abs(float(img.mean()) - _encoded(0.5)) <= 1, (img.std(),
                                                                             img.mean())


@pytest.mark.parametrize("backend", BACKENDS)
def test_texcoord1_map_takes_its_own_derivatives(backend, renderer_on):
    """An occlusion map on the second UV set (spanning the checker) beside a uv0 that is
    one point everywhere (no derivative: the base colour's level of detail would
    magnify): the map reads its chain, occlusion 0.5."""
    occlusion = Texture(np.dstack([_checker()] * 3))
    wall = Material(color=(1, 1, 1), shading="pbr", metallic=0.0, roughness=1.0,
                    maps={"occlusion": occlusion}, tex_coords={"occlusion": 1})
    uv0 = np.full((4, 2), 0.25, np.float32)
    img = _render(renderer_on, *_wall(wall, uvs=uv0, uvs1=UV), backend)[..., 0]
    assert img.std() < 1.0 and abs(float(img.mean()) - _encoded(0.26)) <= 1, (img.std(),
                                                                              img.mean())


@pytest.mark.parametrize("backend", BACKENDS)
def test_minified_normal_map_reads_its_mean_normal(backend, renderer_on):
    """A normal map whose texels tilt the normal 30 degrees towards +u and -u in a
    one-texel checker, minified on a Lambert wall lit head-on: its levels average the
    stored values to the untilted normal (R 127.5 / 255 -> X 0), so the wall is as
    bright as without a map (the full-size level would give cos 30 of it)."""
    s, c = np.sin(np.radians(30)), np.cos(np.radians(30))
    texel = lambda x: np.rint((np.array([x, 0.0, c]) + 1) / 2 * 255)
    tilt = np.where((_checker() > 0)[..., None], texel(s), texel(-s)).astype(np.uint8)
    walls = []
    for maps in ({"normal": Texture(tilt)}, {}):
        wall = Material(color=(1, 1, 1), specular=0.0, maps=maps)
        scene, camera = _wall(wall, ambient=0)
        scene.add(DirectionalLight(intensity=0.5))     # along -Z: head-on
        walls.append(_render(renderer_on, scene, camera, backend)[..., 0].astype(float))
    mapped, plain = walls
    assert abs(plain.mean() - _encoded(0.5)) <= 1 and plain.std() < 1.0, plain.mean()
    assert np.abs(mapped - plain).max() <= 1, (mapped.mean(), plain.mean())
