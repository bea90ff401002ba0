"""The GPU frame stays on the GPU: launches, host<->device copies and host waits per
frame on the cupy backend, counted with a stand-in device (tests/render/stand_in_device.py)
whose kernels are the host builds of shaders/*.cuh, so every frame is also compared with
the Numba renderer (bit for bit: the CUDA build rounds like the CPU backends).

Per steady frame of a scene with mixed point sizes, counted with this stand-in:

    software raster, host frame   launches  uploads  copies back  waits
      before (commit 8466a95)        12        2          4         4
      now                             4        0          2         1   (1 copy: depth=False)
      now, device frame (host=False)  4        0          0         0
    GL raster (GL_POINTS)
      before                          1        2          4         4
      now, CUDA-GL interop            1        0          0         0
      now, interop unavailable        1        0          3         3   (host fallback)

Before, the per-point sizes were uploaded and checked (8 small launches, 2 blocking
scalar reads) and the view-projection uploaded every frame, and colour and depth came
back into fresh pageable arrays; in GL mode xy, depth, visible and sizes went through the
host every frame.
"""

from __future__ import annotations

import ctypes
import enum
import logging

import numpy as np
import pytest
import stand_in_device

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def device(monkeypatch, native_dir):
    return stand_in_device.install(monkeypatch, native_dir)


def mixed_scene(n=600, seed=0):
    rng = np.random.default_rng(seed)
    scene = Scene("mixed", background=(0.1, 0.2, 0.3))
    for i, size in enumerate((1.0, 3.0, 2.0)):
        pts = rng.uniform(-1, 1, (n, 3)).astype(np.float32)
        cols = rng.integers(0, 256, (n, 4), dtype=np.uint8)
        scene.add(Node(f"cloud{i}", geometry=PointCloud(pts, cols, point_size=size,
                                                               point_shape="square"),
                       position=(0.3 * i, 0.0, 0.0)))
    cam = scene.add(PerspectiveCamera(fov_y=60.0, position=(0.2, 0.3, 4.0)))
    return scene, cam


def per_frame(device, fn):
    device.reset()
    out = fn()
    return device.snapshot(), out


def test_steady_frame_counts_and_image(device):
    scene, cam = mixed_scene()
    r = Renderer(scene, cam, (96, 64), backend="cupy")
    r.render()  # first frame: packing, uploads, sizes converted once
    assert r.projector.name == "cupy" and not np.isscalar(r.batch.point_size)
    counts, frame = per_frame(device, r.render)
    assert counts == {"launches": 4, "h2d": 0, "d2h": 2, "syncs": 1}
    assert device.kernels == ["project_points", "clear_keys", "splat_points", "resolve_keys"]
    ref = Renderer(scene, cam, (96, 64), backend="numba").render()
    np.testing.assert_array_equal(frame.color, ref.color)
    np.testing.assert_array_equal(frame.depth.view(np.uint32), ref.depth.view(np.uint32))
    assert (frame.depth < 1).mean() > 0.05
    # Owned arrays by default; copy=False gives views of the reused pinned buffers.
    again = r.render()
    assert not np.shares_memory(frame.color, again.color)
    a, b = r.render(copy=False), r.render(copy=False)
    assert np.shares_memory(a.color, b.color)
    assert device.pinned_allocations == 0  # the pinned buffers were made on frame one


def test_depth_is_optional_and_device_frames_do_not_wait(device):
    scene, cam = mixed_scene()
    r = Renderer(scene, cam, (64, 48), backend="cupy")
    full = r.render()
    counts, frame = per_frame(device, lambda: r.render(depth=False))
    assert counts == {"launches": 4, "h2d": 0, "d2h": 1, "syncs": 1}
    assert frame.depth is None
    np.testing.assert_array_equal(frame.color, full.color)
    counts, frame = per_frame(device, lambda: r.render(host=False))
    assert counts == {"launches": 4, "h2d": 0, "d2h": 0, "syncs": 0}
    assert isinstance(frame.color, stand_in_device.DeviceArray)
    np.testing.assert_array_equal(frame.color.view(np.ndarray), full.color)


def test_moving_camera_uploads_nothing_moving_node_uploads_its_matrix(device):
    scene, cam = mixed_scene()
    r = Renderer(scene, cam, (64, 48), backend="cupy")
    r.render()
    cam.position = (0.0, 0.5, 4.5)
    counts, _ = per_frame(device, lambda: r.render(depth=False))
    assert counts["h2d"] == 0  # the view-projection travels by value with the launch
    scene.children[0].position = (0.1, 0.1, 0.0)
    counts, _ = per_frame(device, lambda: r.render(depth=False))
    assert counts["h2d"] == 1  # the changed model rows, in one copy


def test_sizes_are_converted_once_per_vertex_revision(device):
    scene, cam = mixed_scene()
    r = Renderer(scene, cam, (64, 48), backend="cupy")
    r.render()
    extra = Node("extra", geometry=PointCloud(np.zeros((5, 3), np.float32), point_size=5.0,
                                                 point_shape="square"))
    r.batch.spawn(extra)
    counts, _ = per_frame(device, lambda: r.render(depth=False))
    assert counts["h2d"] >= 1 and counts["syncs"] >= 2  # new sizes: uploaded and checked
    counts, frame = per_frame(device, lambda: r.render(depth=False))
    assert counts == {"launches": 4, "h2d": 0, "d2h": 1, "syncs": 1}
    ref = Renderer(scene, cam, (64, 48), backend="numba").render()
    np.testing.assert_array_equal(frame.color, ref.color)


# --- CUDA-GL interop, with a stand-in for cuda.bindings.runtime ---------------------------

class FakeRuntime:
    """cuda.bindings.runtime's graphics-resource calls over the stand-in device: the
    "device" pointers are host addresses, so a copy into a mapped GL object writes the
    bytes with GL, and frames drawn through interop are real images."""

    class cudaError_t(enum.IntEnum):
        cudaSuccess = 0
        cudaErrorOperatingSystem = 304

    class cudaGraphicsRegisterFlags(enum.IntEnum):
        cudaGraphicsRegisterFlagsNone = 0
        cudaGraphicsRegisterFlagsWriteDiscard = 2

    class cudaMemcpyKind(enum.IntEnum):
        cudaMemcpyDeviceToDevice = 3

    def __init__(self, objects, refuse=False):
        self.objects = objects  # callable: () -> GL objects that may be registered
        self.refuse = refuse
        self.calls = []
        self.mapped = {}

    def _obj(self, glo):
        return next(o for o in self.objects() if o.glo == glo)

    def cudaGraphicsGLRegisterBuffer(self, glo, flags):
        self.calls.append("register")
        if self.refuse:
            return (self.cudaError_t.cudaErrorOperatingSystem, None)
        return (self.cudaError_t.cudaSuccess, ("res", glo))

    def cudaGraphicsGLRegisterImage(self, glo, target, flags):
        assert target == 0x0DE1
        return self.cudaGraphicsGLRegisterBuffer(glo, flags)

    def cudaGraphicsMapResources(self, count, res, stream):
        assert count == 1
        self.calls.append("map")
        self.mapped[res[1]] = True
        return (self.cudaError_t.cudaSuccess,)

    def cudaGraphicsUnmapResources(self, count, res, stream):
        self.calls.append("unmap")
        self.mapped.pop(res[1])
        return (self.cudaError_t.cudaSuccess,)

    def cudaGraphicsResourceGetMappedPointer(self, res):
        # Mapped buffer pointers: GL name << 40, so a copy can find its buffer and offset.
        obj = self._obj(res[1])
        return (self.cudaError_t.cudaSuccess, res[1] << 40, obj.size)

    def cudaGraphicsSubResourceGetMappedArray(self, res, index, level):
        return (self.cudaError_t.cudaSuccess, ("array", res[1]))

    def cudaMemcpyAsync(self, dst, src, n, kind, stream):
        self.calls.append("copy")
        glo, offset = dst >> 40, dst & ((1 << 40) - 1)
        assert self.mapped.get(glo) and kind == self.cudaMemcpyKind.cudaMemcpyDeviceToDevice
        self._obj(glo).write(ctypes.string_at(src, n), offset=offset)
        return (self.cudaError_t.cudaSuccess,)

    def cudaGraphicsUnregisterResource(self, res):
        self.calls.append("unregister")
        return (self.cudaError_t.cudaSuccess,)

    def cudaMemcpy2DToArrayAsync(self, dst, wo, ho, src, spitch, width, height, kind, stream):
        self.calls.append("copy")
        tex = self._obj(dst[1])
        assert self.mapped.get(dst[1]) and width == spitch == tex.size[0] * 4
        tex.write(ctypes.string_at(src, spitch * height), alignment=1)
        return (self.cudaError_t.cudaSuccess,)


def _gl_renderer(monkeypatch, runtime_for):
    from engine.render.gl import interop

    scene, cam = mixed_scene(n=300)
    r = Renderer(scene, cam, (64, 48), backend="cupy", raster="gl")
    holder = {}
    monkeypatch.setattr(interop, "load_runtime", lambda: holder["rt"])
    holder["rt"] = runtime_for(lambda: list(r.gl.painter._buffers.values()))
    return r, holder["rt"], scene, cam


def test_gl_mode_on_cupy_copies_device_to_gl_without_the_host(device, monkeypatch):
    r, rt, scene, cam = _gl_renderer(monkeypatch, FakeRuntime)
    try:
        first = r.render()  # colours (once per revision) + xy, depth, visible by interop
        painter = r.gl.painter
        assert painter.interop is not None and painter.host_uploads == 1  # the sizes, once
        counts, frame = per_frame(device, r.render)
        assert counts == {"launches": 1, "h2d": 0, "d2h": 0, "syncs": 0}  # projection only
        assert painter.host_uploads == 1
        assert rt.calls[-9:] == ["map", "copy", "unmap"] * 3  # xy, depth, visible
        np.testing.assert_array_equal(frame.color, first.color)
        ref = Renderer(scene, cam, (64, 48), backend="numba", raster="gl")
        try:
            np.testing.assert_array_equal(frame.color, ref.render().color)
        finally:
            ref.close()
    finally:
        r.close()
    assert "unregister" in rt.calls


def test_gl_mode_falls_back_to_host_copies_when_interop_is_refused(device, monkeypatch, caplog):
    r, rt, scene, cam = _gl_renderer(
        monkeypatch, lambda objects: FakeRuntime(objects, refuse=True))
    try:
        with caplog.at_level(logging.INFO, logger="engine"):
            frame = r.render()
            r.render()
        assert sum("CUDA-GL interop unavailable" in m for m in caplog.messages) == 1
        assert r.gl.painter.interop is None and rt.calls.count("register") == 1
        counts, again = per_frame(device, r.render)
        assert counts["d2h"] == 3 and counts["h2d"] == 0  # xy, depth, visible via the host
        ref = Renderer(scene, cam, (64, 48), backend="numba", raster="gl")
        try:
            np.testing.assert_array_equal(frame.color, ref.render().color)
        finally:
            ref.close()
        np.testing.assert_array_equal(again.color, frame.color)
    finally:
        r.close()


def test_gl_fallback_with_the_real_cuda_bindings_and_no_driver(device, monkeypatch):
    """cuda-python is installed here but there is no driver: registration fails with an
    error code, and the painter draws through the host."""
    import cuda.bindings.runtime  # noqa: F401 - the dev extra installs it (never skipped)
    scene, cam = mixed_scene(n=200)
    r = Renderer(scene, cam, (48, 32), backend="cupy", raster="gl")
    try:
        frame = r.render()
        assert r.gl.painter.interop is None
        assert "cudaGraphicsGLRegisterBuffer failed" in r.gl.painter._interop.unavailable
        ref = Renderer(scene, cam, (48, 32), backend="numba", raster="gl")
        try:
            np.testing.assert_array_equal(frame.color, ref.render().color)
        finally:
            ref.close()
    finally:
        r.close()


def test_image_blit_takes_device_frames_by_interop(device, monkeypatch):
    from engine.display.blit import ImageBlit
    from engine.render.gl import create_egl_context, interop

    ctx = create_egl_context()
    fbo = ctx.simple_framebuffer((40, 30))
    fbo.use()
    blit = ImageBlit(ctx)
    holder = {}
    monkeypatch.setattr(interop, "load_runtime", lambda: holder["rt"])
    holder["rt"] = FakeRuntime(lambda: [blit._texture])
    rng = np.random.default_rng(2)
    img = rng.integers(0, 256, (30, 40, 4), dtype=np.uint8)
    try:
        counts, _ = per_frame(device, lambda: blit.draw(img.copy().view(
            stand_in_device.DeviceArray)))
        assert counts["d2h"] == 0 and blit.host_uploads == 0
        assert holder["rt"].calls == ["register", "map", "copy", "unmap"]
        shown = np.frombuffer(fbo.read(components=4, alignment=1), np.uint8).reshape(30, 40, 4)
        np.testing.assert_array_equal(shown[::-1], img)
        blit.draw(img)  # host images still go through texture.write
        assert blit.host_uploads == 1
    finally:
        blit.release()
        fbo.release()
        ctx.release()


def test_gl_surfaces_on_cupy_take_the_vertex_stage_by_interop(device, monkeypatch, ref_assets):
    """GL mode with surfaces on the cupy backend: the surface vertex stage runs on the
    device and its clip-space positions, batch-frame positions and normals reach GL's
    buffers device to device: nothing comes back to the host per frame."""
    from engine.cli.commands import load_source
    from engine.render.gl import interop

    scene, cam = load_source(str(ref_assets / "classic/suzanne.obj"), 4 / 3)
    holder = {}
    monkeypatch.setattr(interop, "load_runtime", lambda: holder["rt"])
    r = Renderer(scene, cam, (96, 72), backend="cupy", raster="gl")
    holder["rt"] = FakeRuntime(lambda: list(r.gl._surface_painter._buffers.values()))
    try:
        first = r.render()
        painter = r.gl._surface_painter
        assert painter.interop is not None and painter.host_uploads == 0
        counts, frame = per_frame(device, r.render)
        assert counts["d2h"] == 0 and counts["syncs"] == 0
        assert rt_copies(holder["rt"]) >= 3  # clip, positions, normals
        np.testing.assert_array_equal(frame.color, first.color)
        ref = Renderer(scene, cam, (96, 72), backend="numba", raster="gl")
        try:
            want = ref.render()
        finally:
            ref.close()
        covered = (want.depth < 1) | (frame.depth < 1)
        close = np.abs(frame.color.astype(int) - want.color.astype(int)).max(axis=-1) <= 2
        assert (close & covered).sum() >= 0.995 * covered.sum() and covered.sum() > 500
    finally:
        r.close()


def rt_copies(rt):
    return rt.calls.count("copy")


def test_cuda_surfaces_frame_counts(device, ref_assets):
    """A surfaces frame on the cupy backend: one launch per stage, and back to the host
    only the count of triangles to clip (usually 0) and the finished frame."""
    from engine.cli.commands import load_source

    scene, cam = load_source(str(ref_assets / "classic/suzanne.obj"), 4 / 3)
    r = Renderer(scene, cam, (96, 72), backend="cupy")
    r.render()
    counts, frame = per_frame(device, r.render)
    kernels = [k for k in device.kernels if not k.startswith("_")]
    for name in ("clear_keys", "surface_vertices", "classify_triangles", "raster_triangles",
                 "resolve_surfaces"):
        assert kernels.count(name) == 1, kernels
    # back: the list of triangles to clip on the host, colour, depth (each a wait); up:
    # per-frame matrices (mvp, model, normal matrices) and the lights, camera, background
    # (18 launches: the front-facing flags are computed once, in setup, for the resolve)
    assert counts == {"launches": 18, "h2d": 10, "d2h": 3, "syncs": 3}
    want = Renderer(scene, cam, (96, 72), backend="numpy").render()
    np.testing.assert_array_equal(frame.depth, want.depth)
    np.testing.assert_allclose(frame.color, want.color, atol=1, rtol=0)
