"""The atmosphere stage: the scene's fog and sky (engine.scene.atmosphere) applied to a
resolved frame, in linear light, from its colour and depth.

It runs after the resolve on every backend (``Renderer.render``), on the frame's array
module: NumPy for the host backends and GL (whose colour and depth are read back), CuPy
for a CUDA frame kept on the device. Per pixel, from its centre and window depth::

    ndc     = (2 (x + 0.5) / W - 1, 1 - 2 (y + 0.5) / H, 2 depth - 1)
    view    = P^-1 ndc (divided by w)            the surface point in the view frame
    d       = |view| (perspective), -view.z (orthographic)      the fog distance
    ray     = camera rotation @ view direction   the world direction of the pixel's ray

Covered pixels (depth < 1) keep ``f(d)`` of their colour and take ``1 - f(d)`` of the fog
colour; pixels nothing covers (depth 1) show the sky at their ray's elevation, or with
``Scene.sky = "environment"`` the environment's radiance along their ray
(``environment_sky``). Points,
lines and surfaces are fogged alike, since the stage sees only the frame. Under
multisampling the frame's depth is each pixel's nearest sample (engine.render.frame), so
an edge pixel is fogged by its nearest surface.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import to_host
from ..scene.atmosphere import FOG_MODES
from ..scene.camera import OrthographicCamera
from ..scene.colorspace import linear_to_srgb, srgb_to_linear
from .ibl import sample_equirect
from .tonemap import apply_tone_map

__all__ = ["AtmosphereParameters", "apply_atmosphere", "atmosphere_parameters",
           "environment_sky", "sky_colors"]

# sRGB byte -> linear float32 (IEC 61966-2-1 decode of every 8-bit value)
_DECODE = srgb_to_linear(np.arange(256) / 255.0).astype(np.float32)


def _xp(a):
    if type(a).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


def sky_colors(sky, elevation_deg, xp=np):
    """(..., 3) float32 linear colours of ``sky`` (engine.scene.atmosphere.Sky) for view
    rays at ``elevation_deg`` degrees above the horizontal (an ``xp`` array of shape
    (...)): the horizon colour at 0, the zenith at +90, the ground at -90, mixed linearly
    in the elevation (engine.scene.atmosphere)."""
    e = xp.asarray(elevation_deg, xp.float32)[..., None]
    lin = [xp.asarray(srgb_to_linear(c[:3]), xp.float32) for c in
           (sky.horizon, sky.zenith, sky.ground)]
    up = xp.clip(e / 90.0, 0.0, 1.0)
    down = xp.clip(-e / 90.0, 0.0, 1.0)
    return lin[0] + up * (lin[1] - lin[0]) + down * (lin[2] - lin[0])


def _environment(scene):
    if scene.environment is None:
        raise ValueError('Scene.sky is "environment" but Scene.environment is None: give '
                         "the scene an engine.scene.Environment")
    return scene.environment


def environment_sky(scene, ray, xp=np):
    """(..., 3) float32 linear display colours of ``Scene.sky = "environment"`` for unit
    world view rays ``ray`` (..., 3; an ``xp`` array): the scene's environment radiance
    in each direction (its full-size image, bilinear: engine.render.ibl.sample_equirect)
    through the scene's exposure and tone map (engine.render.tonemap), as its surfaces.

    Raises:
        ValueError: the scene's sky is "environment" but it has no environment.
    """
    env = _environment(scene)
    r = np.asarray(to_host(ray), np.float64)
    lin = apply_tone_map(sample_equirect(env.radiance, r), scene.exposure, scene.tone_map)
    return xp.asarray(lin.astype(np.float32))


def _view_points(camera, size, depth, xp):
    """(view (H, W, 3), ray (H, W, 3)) float32: each pixel centre's surface point in the
    view frame at window ``depth`` (H, W), and its view ray's world direction (unit).
    The camera's projection is the frame's (the renderer set its viewport)."""
    w, h = size
    inv = np.linalg.inv(camera.projection_matrix.astype(np.float64))
    xn = ((2.0 * (np.arange(w) + 0.5) / w) - 1.0).astype(np.float32)
    yn = (1.0 - 2.0 * (np.arange(h) + 0.5) / h).astype(np.float32)
    xn, yn = xp.asarray(xn)[None, :, None], xp.asarray(yn)[:, None, None]
    cols = xp.asarray(inv.T.astype(np.float32))  # row j: inv's column j (4 components)
    # P^-1 (xn, yn, zn, 1) as a sum of columns: no (H, W, 4, 4) temporaries
    base = xn * cols[0] + yn * cols[1] + cols[3]
    zn = (2.0 * depth.astype(xp.float32) - 1.0)[..., None]
    p = base + zn * cols[2]
    view = p[..., :3] / p[..., 3:4]
    if isinstance(camera, OrthographicCamera):
        ray_view = xp.asarray(np.array([0.0, 0.0, -1.0], np.float32))
        ray_view = xp.broadcast_to(ray_view, view.shape)
    else:
        # the near plane's point: the ray through the pixel centre (the far plane's w is
        # 1 / far, 0 in float32 for far / near of about 1e10 and beyond: a black sky)
        near = base - cols[2]
        ray_view = near[..., :3] / near[..., 3:4]
    rot = camera.world_matrix[:3, :3].astype(np.float64)
    rot = rot / np.linalg.norm(rot, axis=0)  # the camera's scale is no direction
    ray = ray_view @ xp.asarray(rot.T.astype(np.float32))
    ray = ray / xp.linalg.norm(ray, axis=-1, keepdims=True)
    return view, ray


class AtmosphereParameters(NamedTuple):
    """What the compiled passes (engine.render.backends.numba_atmosphere, the GL pass
    engine.render.gl.atmosphere) take of a scene's fog and sky and the camera.

    Attributes:
        inverse_projection: (4, 4) float64, the camera's projection matrix inverted.
        camera_rotation: (3, 3) float64 view -> world directions (unit columns).
        orthographic: bool.
        fog_mode: index in engine.scene.atmosphere.FOG_MODES, or -1 for no fog.
        fog: (start, end) for linear fog, (density, 0) otherwise (world units).
        fog_color: (3,) float64 linear fog colour (unused when ``fog_to_sky``).
        fog_to_sky: the fog takes the sky's colour in each pixel's direction.
        sky: (3, 3) float64 linear horizon, zenith and ground rows, or (0, 3) for none
            (and for the environment sky).
        environment: ``Scene.sky = "environment"``: the scene environment's (H, W, 3)
            float32 linear radiance (engine.scene.environment's layout), else None.
        exposure, tone_map: the scene's (the environment sky is displayed through
            them, engine.render.tonemap).
    """

    inverse_projection: np.ndarray
    camera_rotation: np.ndarray
    orthographic: bool
    fog_mode: int
    fog: tuple
    fog_color: np.ndarray
    fog_to_sky: bool
    sky: np.ndarray
    environment: np.ndarray | None = None
    exposure: float = 1.0
    tone_map: str = "none"


def atmosphere_parameters(scene, camera) -> AtmosphereParameters | None:
    """The AtmosphereParameters of ``scene`` seen by ``camera`` (its viewport set to
    the frame's), or None when the scene has neither fog nor sky. The fog colour is
    chosen as the module docstring of engine.scene.atmosphere says."""
    fog, sky = scene.fog, scene.sky
    if fog is None and sky is None:
        return None
    inv = np.linalg.inv(camera.projection_matrix.astype(np.float64))
    rot = camera.world_matrix[:3, :3].astype(np.float64)
    rot = rot / np.linalg.norm(rot, axis=0)  # the camera's scale is no direction
    env = None
    if isinstance(sky, str):  # "environment" (engine.scene.atmosphere.SKY_ENVIRONMENT)
        env = _environment(scene).radiance
    sky_rgb = (np.zeros((0, 3)) if sky is None or env is not None else
               srgb_to_linear(np.array([sky.horizon[:3], sky.zenith[:3], sky.ground[:3]])))
    mode, params, fog_rgb, fog_to_sky = -1, (0.0, 0.0), np.zeros(3), False
    if fog is not None:
        mode = FOG_MODES.index(fog.mode)
        params = ((float(fog.start), float(fog.end)) if fog.mode == "linear"
                  else (float(fog.density), 0.0))
        if fog.color is not None:
            fog_rgb = srgb_to_linear(np.asarray(fog.color[:3], np.float64))
        elif sky is not None:
            fog_to_sky = True
        else:
            fog_rgb = srgb_to_linear(np.asarray(scene.background[:3], np.float64))
    return AtmosphereParameters(inv, rot, isinstance(camera, OrthographicCamera), mode,
                                params, fog_rgb, fog_to_sky, sky_rgb, env,
                                float(scene.exposure), scene.tone_map)


def apply_atmosphere(color, depth, scene, camera) -> None:
    """Apply ``scene.fog`` and ``scene.sky`` to one frame, in place.

    Args:
        color: (H, W, 4) uint8 sRGB-encoded RGBA (NumPy or CuPy), written in place.
        depth: (H, W) float32 window depth in [0, 1], 1 where nothing was drawn.
        scene: the Scene (``fog``, ``sky``, ``background``).
        camera: the camera the frame was drawn from (its projection and world matrix).

    The sky's pixels get alpha 255; fog leaves alpha as it is. Does nothing when the
    scene has neither fog nor sky.
    """
    fog, sky = scene.fog, scene.sky
    if fog is None and sky is None:
        return
    xp = _xp(color)
    h, w = depth.shape
    view, ray = _view_points(camera, (w, h), depth, xp)
    sky_lin = None
    if isinstance(sky, str):
        sky_lin = environment_sky(scene, ray, xp)
    elif sky is not None:
        elevation = xp.degrees(xp.arcsin(xp.clip(ray[..., 1], -1.0, 1.0)))
        sky_lin = sky_colors(sky, elevation, xp)
    empty = depth >= 1.0
    decode = xp.asarray(_DECODE)
    lin = decode[color[..., :3]]
    if fog is not None:
        if isinstance(camera, OrthographicCamera):
            dist = -view[..., 2]
        else:
            dist = xp.linalg.norm(view, axis=-1)
        f = fog.factor(dist, xp)[..., None]
        if fog.color is not None:
            fog_lin = xp.asarray(srgb_to_linear(fog.color[:3]), xp.float32)
        elif sky_lin is not None:
            fog_lin = sky_lin
        else:
            fog_lin = xp.asarray(srgb_to_linear(scene.background[:3]), xp.float32)
        lin = f * lin + (1.0 - f) * fog_lin
    if sky_lin is not None:
        lin = xp.where(empty[..., None], sky_lin, lin)
        color[..., 3][empty] = 255
    out = xp.rint(linear_to_srgb(lin, xp) * 255.0).astype(xp.uint8)
    if sky_lin is None:  # fog without a sky leaves the background's bytes as they are
        out = xp.where(empty[..., None], color[..., :3], out)
    color[..., :3] = out
