"""RenderWidget through jupyter_rfb's own protocol, without a browser: the messages a
frontend sends (state updates and custom event messages into the widget's comm
handler) go in, the frame messages jupyter_rfb sends come out (JPEG while moving, the
lossless PNG once settled), scheduled by jupyter_rfb on a running asyncio loop as in a
kernel."""

from __future__ import annotations

import asyncio
import io
import time

import numpy as np
import pytest
from PIL import Image

import engine
from engine.io.sources import load_source
from engine.notebook.widget import RenderWidget


class FrontendComm:
    """Stands in for the kernel comm: records what the widget sends."""

    def __init__(self):
        self.sent = []

    def send(self, data=None, buffers=None, **kw):
        self.sent.append((data, buffers))

    def frames(self):
        out = []
        for data, buffers in self.sent:
            content = data.get("content", {}) if data.get("method") == "custom" else {}
            if content.get("type") == "framebufferdata":
                img = np.asarray(Image.open(io.BytesIO(bytes(buffers[0]))))
                out.append((content["mimetype"], content["index"], img))
        return out


def message(widget, content):
    """A custom message from the frontend (an event) through the comm handler."""
    widget._handle_msg({"content": {"data": {"method": "custom", "content": content}},
                        "buffers": []})


def state(widget, **values):
    widget._handle_msg({"content": {"data": {"method": "update", "state": values}},
                        "buffers": []})


def ack(widget, comm):
    """The frontend confirms the last frame it got (jupyter_rfb's frame feedback)."""
    index = comm.frames()[-1][1]
    now = time.time()
    state(widget, _frame_feedback={"index": index, "timestamp": now, "localtime": now})


def pointer(kind, x, y, button=1):
    return {"type": kind, "x": x, "y": y, "button": button,
            "buttons": () if kind == "pointer_up" else (button,), "modifiers": (),
            "ntouches": 0, "touches": {}, "timestamp": time.time()}


async def settle(seconds=0.0):
    await asyncio.sleep(seconds)
    for _ in range(5):
        await asyncio.sleep(0)


def test_events_in_frames_out_through_jupyter_rfb():
    async def run():
        w = RenderWidget("demo", size=(120, 80), backend="numpy", quality=90)
        comm = FrontendComm()
        w.comm.send = comm.send  # the kernel comm jupyter_rfb sends frames through
        seen = []
        w.on_frame.append(lambda widget, frame: seen.append(frame.shape))
        state(w, _has_visible_views=True)
        message(w, {"type": "resize", "width": 120, "height": 80, "pwidth": 240,
                    "pheight": 160, "ratio": 2.0, "timestamp": time.time()})
        await settle()
        (mime, index, img), = comm.frames()
        assert mime == "image/jpeg" and index == 1
        assert img.shape == (160, 240, 3)  # the framebuffer: CSS size x devicePixelRatio
        assert seen == [(160, 240, 4)]
        # Once settled jupyter_rfb sends the lossless frame: exactly the renderer's pixels.
        await settle(0.45)
        mime, _, png = comm.frames()[-1]
        assert mime == "image/png"
        scene, cam = load_source("demo", 240 / 160)
        expected = engine.Renderer(scene, cam, (240, 160), backend="numpy").render().color
        np.testing.assert_array_equal(png, expected[..., :3])
        ack(w, comm)

        az0 = w.controller.azimuth
        for e in (pointer("pointer_down", 30, 40), pointer("pointer_move", 50, 40),
                  pointer("pointer_move", 70, 40), pointer("pointer_up", 70, 40)):
            message(w, e)
            await settle()
            ack(w, comm)
        assert w.controller.azimuth == pytest.approx(az0 - 40 * 2 * 0.3)
        assert w.view.pointer == (140.0, 80.0)
        frames = comm.frames()
        assert len(frames) >= 3 and frames[-1][2].shape == (160, 240, 3)
        moved = frames[-1][2].astype(int)
        assert np.abs(moved - png.astype(int)).mean() > 1.0  # the view turned
        # wheel: zoom in
        d0 = w.controller.distance
        message(w, {"type": "wheel", "x": 60, "y": 40, "dx": 0, "dy": -100, "buttons": (),
                    "modifiers": (), "timestamp": time.time()})
        await settle()
        assert w.controller.distance == pytest.approx(d0 / 1.1)
        # a held key keeps frames coming until it is released
        ack(w, comm)
        n = len(comm.frames())
        message(w, {"type": "key_down", "key": "ArrowRight", "modifiers": (),
                    "timestamp": time.time()})
        for _ in range(4):
            await settle(0.02)
            ack(w, comm)
        assert len(comm.frames()) >= n + 3
        message(w, {"type": "key_up", "key": "ArrowRight", "modifiers": (),
                    "timestamp": time.time()})
        await settle(0.05)
        ack(w, comm)
        n = len(comm.frames())
        await settle(0.05)
        assert len([f for f in comm.frames()[n:] if f[0] == "image/jpeg"]) == 0
        snap = w.snapshot()
        assert snap.data.shape[:2] == (160, 240)
        w.close()
        assert w.view.closed

    asyncio.run(run())


def test_the_widget_is_exported_and_takes_the_same_sources():
    from engine.notebook import RenderWidget as lazy

    assert engine.RenderWidget is lazy is RenderWidget
    w = RenderWidget("demo", size=(64, 40), controller="fly", backend="numpy",
                     background=(1, 1, 1))
    assert w.css_width == "64px" and w.css_height == "40px"
    assert w.scene.background[:3] == pytest.approx((1, 1, 1))
    assert type(w.controller).__name__ == "FlyController"
    assert w.get_frame().shape == (40, 64, 4)


def test_a_playing_clip_keeps_frames_coming():
    from engine.scene.clips import Clip, TransformTrack

    async def run():
        scene = engine.Scene(background=(0, 0, 0))
        box = scene.add(engine.Node("box", geometry=engine.PointCloud(
            [[0, 0, 0], [0.2, 0.2, 0]], colors="white", point_size=6)))
        scene.add(engine.Node("frame", geometry=engine.PointCloud([[-2, -2, 0], [2, 2, 0]])))
        slide = Clip("slide", [TransformTrack(box, "translation", [0, 1],
                                              [[-1.5, 0, 0], [1.5, 0, 0]])])
        w = RenderWidget(scene, size=(48, 32), backend="numpy")
        comm = FrontendComm()
        w.comm.send = comm.send
        state(w, _has_visible_views=True)
        message(w, {"type": "resize", "width": 48, "height": 32, "ratio": 1.0,
                    "timestamp": time.time()})
        await settle()
        ack(w, comm)
        player = w.play(slide, loop=True, speed=0.5)
        assert w.player is player and w.view.animating
        for _ in range(4):  # no input events: the playing clip asks for the frames
            await settle(0.05)
            ack(w, comm)
        frames = comm.frames()
        assert len(frames) >= 4 and player.clock > 0
        assert not np.array_equal(frames[1][2], frames[-1][2])  # the box slid
        player.playing = False
        assert not w.view.animating
        w.close()

    asyncio.run(run())
