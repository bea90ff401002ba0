"""Showing host frames in an X11 window through X shared memory (MIT-SHM), without GL.

On a CPU GL driver (Mesa llvmpipe) the window's GL path uploads the software frame into
a texture and draws a full-screen quad, and llvmpipe shades that quad like any other:
4-5 ms for 1280x720 on the 2-core build machines, about a fifth of the bunny's frame
(docs/performance.md, "First use, GL mode and the window"). Here the frame is instead
copied once into a System V shared-memory segment in the window's pixel layout and the X
server copies it into the window (``XShmPutImage`` of the MIT-SHM extension, which local
Xorg and Xvfb servers have): 1.2-1.7 ms in all; the GL back buffer is left alone.

The only conversion is the channel order: X TrueColor visuals with masks red 0xff0000,
green 0xff00, blue 0xff (what Xorg and Xvfb offer at depth 24 and 32) store each pixel as
the little-endian 32-bit word 0xAARRGGBB, bytes B, G, R, A, so red and blue are swapped
on the copy (a visual with red in the low byte takes the bytes as they are). Frames are
(H, W, 4) uint8 RGBA with row 0 at the top, as X images are, so no row flip is needed.

``SharedImagePresenter.open`` returns None, with the reason, where this cannot work: not
an X11 window (Wayland, headless EGL, macOS, Windows), no MIT-SHM, a display on another
machine (the segment cannot be attached), a visual of another layout.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

import numpy as np

__all__ = ["SharedImagePresenter", "rgba_to_bgra"]

log = logging.getLogger("engine")

_IPC_PRIVATE, _IPC_CREAT, _IPC_RMID = 0, 0o1000, 0
_ZPIXMAP, _LSB_FIRST = 2, 0


class _SegmentInfo(ctypes.Structure):
    """XShmSegmentInfo (X11/extensions/XShm.h)."""

    _fields_ = [("shmseg", ctypes.c_ulong), ("shmid", ctypes.c_int),
                ("shmaddr", ctypes.c_void_p), ("readOnly", ctypes.c_int)]


def rgba_to_bgra(src: np.ndarray, dst: np.ndarray, scratch: tuple[np.ndarray, np.ndarray]):
    """Pixels ``src`` (N,) uint32, each RGBA bytes in memory, into ``dst`` (N,) uint32 as
    BGRA bytes (red and blue swapped, green and alpha kept), through the two (N,) uint32
    ``scratch`` arrays: six whole-array integer operations and no allocation (0.6 ms for
    1280x720 here, where NumPy's per-channel strided copies took 1.4 ms)."""
    a, b = scratch
    np.left_shift(src, 16, out=a)     # bytes 0, 1 -> 2, 3
    np.right_shift(src, 16, out=b)    # bytes 2, 3 -> 0, 1
    np.bitwise_or(a, b, out=a)
    np.bitwise_and(a, 0x00FF00FF, out=a)  # R at byte 2, B at byte 0
    np.bitwise_and(src, 0xFF00FF00, out=dst)  # G and A stay
    np.bitwise_or(dst, a, out=dst)


def _libraries():
    """(libXext, libc) as ctypes libraries with the MIT-SHM, System V shared-memory and
    ``XDestroyImage`` (libX11, set on libXext's handle) signatures set; raises OSError
    when libXext or libX11 is missing."""
    paths = [ctypes.util.find_library(name) for name in ("Xext", "X11")]
    if None in paths:
        raise OSError("libXext or libX11 is not installed")
    xext = ctypes.CDLL(paths[0])
    libc = ctypes.CDLL(None, use_errno=True)
    p = ctypes.c_void_p
    xext.XDestroyImage = ctypes.CDLL(paths[1]).XDestroyImage
    xext.XDestroyImage.argtypes = [p]
    xext.XShmQueryExtension.argtypes = [p]
    xext.XShmQueryExtension.restype = ctypes.c_int
    xext.XShmCreateImage.argtypes = [p, p, ctypes.c_uint, ctypes.c_int, p,
                                     ctypes.POINTER(_SegmentInfo), ctypes.c_uint, ctypes.c_uint]
    xext.XShmCreateImage.restype = p
    xext.XShmAttach.argtypes = [p, ctypes.POINTER(_SegmentInfo)]
    xext.XShmDetach.argtypes = [p, ctypes.POINTER(_SegmentInfo)]
    xext.XShmPutImage.argtypes = [p, ctypes.c_ulong, p, p, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_uint, ctypes.c_uint,
                                  ctypes.c_int]
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmat.argtypes = [ctypes.c_int, p, ctypes.c_int]
    libc.shmat.restype = p
    libc.shmdt.argtypes = [p]
    libc.shmctl.argtypes = [ctypes.c_int, ctypes.c_int, p]
    return xext, libc


class SharedImagePresenter:
    """Puts (H, W, 4) uint8 RGBA frames into one X11 window through a shared segment.

    Made by ``open(window)``; ``draw(color)`` shows a frame and returns once the X
    server has copied it (an ``XSync`` round trip, so the segment is free for the next
    frame and the frame is in the window, as after a buffer swap); ``read()`` gives the
    bytes last shown; ``release()`` detaches and frees the segment.

    Attributes:
        swap_red_blue: whether the window's visual stores red in the high byte.
        allocations: segments made so far (one per frame size).
    """

    def __init__(self, display, drawable, visual, depth: int, swap_red_blue: bool, libs):
        from pyglet.libs.x11 import xlib

        self._xlib = xlib
        self._xext, self._libc = libs
        self._display, self._drawable = display, drawable
        self._visual, self._depth = visual, depth
        self.swap_red_blue = swap_red_blue
        self._gc = xlib.XCreateGC(display, drawable, 0, None)
        self._info = None
        self._image = None
        self._size = None
        self._pixels = np.zeros(0, np.uint32)  # a view of the segment
        self._scratch = (self._pixels, self._pixels)
        self.allocations = 0

    @classmethod
    def open(cls, window) -> tuple[SharedImagePresenter | None, str]:
        """(presenter, "") for pyglet ``window`` (its GL view), or (None, why not)."""
        try:
            from pyglet.libs.x11 import xlib
        except Exception as exc:  # noqa: BLE001 - pyglet raises what the platform gives
            return None, f"no Xlib ({type(exc).__name__}: {exc})"
        display = getattr(window, "_x_display", None)
        drawable = getattr(window, "_view", None)
        if display is None or not drawable:
            return None, "not an X11 window"
        try:
            libs = _libraries()
        except OSError as exc:
            return None, str(exc)
        if not libs[0].XShmQueryExtension(ctypes.cast(display, ctypes.c_void_p)):
            return None, "the X server has no MIT-SHM extension"
        attrs = xlib.XWindowAttributes()
        xlib.XGetWindowAttributes(display, drawable, ctypes.byref(attrs))
        vis = attrs.visual.contents
        masks = (vis.red_mask, vis.green_mask, vis.blue_mask)
        if attrs.depth not in (24, 32) or xlib.XImageByteOrder(display) != _LSB_FIRST or \
                masks not in ((0xFF0000, 0xFF00, 0xFF), (0xFF, 0xFF00, 0xFF0000)):
            return None, (f"visual of depth {attrs.depth}, masks "
                          f"{tuple(hex(m) for m in masks)}: not 8-bit RGB in 32-bit pixels")
        presenter = cls(display, drawable, attrs.visual, attrs.depth,
                        masks[0] == 0xFF0000, libs)
        try:
            presenter._allocate((1, 1))  # attaching fails for a display on another machine
        except OSError as exc:
            presenter.release()
            return None, str(exc)
        return presenter, ""

    def _allocate(self, size):
        """A segment and shared XImage for frames of ``size`` (width, height), attached
        to the server; the previous one released. Raises OSError when the segment cannot
        be made or the server refuses it."""
        self._free_segment()
        w, h = size
        xlib, xext, libc = self._xlib, self._xext, self._libc
        dpy = ctypes.cast(self._display, ctypes.c_void_p)
        info = _SegmentInfo()
        image = xext.XShmCreateImage(dpy, ctypes.cast(self._visual, ctypes.c_void_p),
                                     self._depth, _ZPIXMAP, None, ctypes.byref(info), w, h)
        if not image:
            raise OSError("XShmCreateImage failed")
        ximage = ctypes.cast(image, ctypes.POINTER(xlib.XImage)).contents
        if ximage.bits_per_pixel != 32 or ximage.bytes_per_line != 4 * w:
            xext.XDestroyImage(image)
            raise OSError(f"the server's {self._depth}-bit images have "
                          f"{ximage.bits_per_pixel} bits per pixel, not 32")
        nbytes = 4 * w * h
        info.shmid = libc.shmget(_IPC_PRIVATE, nbytes, _IPC_CREAT | 0o600)
        if info.shmid < 0:
            xext.XDestroyImage(image)
            raise OSError(ctypes.get_errno(), "shmget failed for the window's frame")
        addr = libc.shmat(info.shmid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            libc.shmctl(info.shmid, _IPC_RMID, None)
            xext.XDestroyImage(image)
            raise OSError(ctypes.get_errno(), "shmat failed for the window's frame")
        info.shmaddr = addr
        ximage.data = ctypes.cast(addr, ctypes.c_char_p)
        self._info, self._image, self._size = info, image, (w, h)
        errors = []
        handler = xlib.XErrorHandler(lambda d, event: errors.append(event.contents.error_code) or 0)
        previous = xlib.XSetErrorHandler(handler)
        try:
            attached = xext.XShmAttach(dpy, ctypes.byref(info))
            xlib.XSync(self._display, False)
        finally:
            xlib.XSetErrorHandler(previous)
        # removed now, freed by the kernel once both this process and the server detach
        libc.shmctl(info.shmid, _IPC_RMID, None)
        if not attached or errors:
            self._info.shmid = -1  # never attached: nothing to detach
            self._free_segment()
            raise OSError(f"the X server cannot attach the shared segment (X error "
                          f"{errors[0] if errors else 'none'}): a display on another machine?")
        self._pixels = np.frombuffer((ctypes.c_uint8 * nbytes).from_address(addr),
                                     np.uint32)
        self._scratch = (np.empty(w * h, np.uint32), np.empty(w * h, np.uint32))
        self.allocations += 1

    def draw(self, color: np.ndarray):
        """Show ``color`` ((H, W, 4) uint8 RGBA, row 0 at the top, host memory) at the
        window's top-left corner; returns when the server has copied it.

        Raises ValueError unless ``color`` is (H, W, 4) uint8."""
        if color.dtype != np.uint8 or color.ndim != 3 or color.shape[2] != 4:
            raise ValueError(f"image must be (H, W, 4) uint8, got {tuple(color.shape)} "
                             f"{color.dtype}")
        h, w = int(color.shape[0]), int(color.shape[1])
        if self._size != (w, h):
            self._allocate((w, h))
        src = np.ascontiguousarray(color).reshape(-1).view(np.uint32)
        if self.swap_red_blue:
            rgba_to_bgra(src, self._pixels, self._scratch)
        else:
            np.copyto(self._pixels, src)
        self._xext.XShmPutImage(ctypes.cast(self._display, ctypes.c_void_p), self._drawable,
                                self._gc, self._image, 0, 0, 0, 0, w, h, False)
        self._xlib.XSync(self._display, False)

    def read(self) -> np.ndarray:
        """The last frame shown, (H, W, 4) uint8 RGBA, row 0 at the top: the segment's
        bytes in the frame's channel order (a copy)."""
        if self._size is None:
            raise ValueError("no frame has been shown")
        w, h = self._size
        out = np.empty(w * h, np.uint32)
        if self.swap_red_blue:  # the same swap undoes itself
            rgba_to_bgra(self._pixels, out, self._scratch)
        else:
            np.copyto(out, self._pixels)
        return out.view(np.uint8).reshape(h, w, 4)

    def _free_segment(self):
        if self._image is None:
            return
        xlib = self._xlib
        info = self._info
        if info.shmid >= 0:
            self._xext.XShmDetach(ctypes.cast(self._display, ctypes.c_void_p), ctypes.byref(info))
            xlib.XSync(self._display, False)
        self._pixels = np.zeros(0, np.uint32)
        self._scratch = (self._pixels, self._pixels)
        if info.shmaddr:
            self._libc.shmdt(info.shmaddr)
        # the segment is not the image's to free
        ctypes.cast(self._image, ctypes.POINTER(xlib.XImage)).contents.data = None
        self._xext.XDestroyImage(self._image)
        self._image = self._info = self._size = None

    def release(self):
        """Detach and free the segment and the GC (idempotent)."""
        self._free_segment()
        if self._gc is not None:
            self._xlib.XFreeGC(self._display, self._gc)
            self._gc = None
