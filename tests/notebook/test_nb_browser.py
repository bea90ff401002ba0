"""End to end in a real browser: JupyterLab served on 127.0.0.1, Debian's headless
chromium driven by selenium through Debian's chromedriver (no browser download),
at a device pixel ratio of 2. The notebook's widget shows a frame at the framebuffer
size, a simulated left drag turns the camera by what the drag says (framebuffer pixels
x the controller's degrees per pixel), and the pixels on the page are the kernel's new
frame.

Needs the system packages chromium and chromium-driver (scripts/setup.sh installs them).
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.timeout(300)

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
RATIO = 2
CSS_SIZE = (320, 200)

CELL = f"""
import json, os
import numpy as np
import engine
from engine.io.image import save_image

view = engine.RenderWidget("demo", size={CSS_SIZE}, backend="numba")

def record(widget, frame):
    c = widget.controller
    save_image("last.png", frame)
    state = {{"frames": widget.view.frames, "azimuth": c.azimuth, "elevation": c.elevation,
             "shape": list(frame.shape), "pointer": widget.view.pointer,
             "ratio": widget.view.pixel_ratio}}
    with open("state.tmp", "w") as f:
        json.dump(state, f)
    os.replace("state.tmp", "state.json")

view.on_frame.append(record)
view
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, timeout=60.0, every=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value is not None and value is not False and (
                isinstance(value, np.ndarray) or value):
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


@pytest.fixture
def lab(tmp_path):
    """JupyterLab on 127.0.0.1 with a one-cell notebook; yields (url, folder)."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(CELL)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, tmp_path / "widget.ipynb")
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / ".jupyter"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / ".runtime"),
           "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / ".lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / ".lab-workspaces")}
    log = open(tmp_path / "lab.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
         f"--port={port}", "--port-retries=0", f"--IdentityProvider.token={token}",
         f"--ServerApp.root_dir={tmp_path}", "--LabApp.expose_app_in_browser=True",
         "--ServerApp.disable_check_xsrf=False", "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
         "--LabApp.extension_manager=readonly",
         *(["--allow-root"] if os.geteuid() == 0 else [])],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def up():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                        timeout=2) as r:
                return r.status == 200
        except OSError:
            assert server.poll() is None, (tmp_path / "lab.log").read_text()[-3000:]
            return False

    try:
        wait_for("JupyterLab to start", up, timeout=90, every=0.3)
        yield f"http://127.0.0.1:{port}/lab/tree/widget.ipynb?token={token}", tmp_path
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(5)
        log.close()


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--force-device-scale-factor={RATIO}", "--window-size=1200,900",
                "--no-first-run", "--disable-extensions", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--metrics-recording-only"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()


def state(folder: Path):
    try:
        return json.loads((folder / "state.json").read_text())
    except (OSError, ValueError):
        return None


def element_png(element) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(element.screenshot_as_png)).convert("RGB"))


def test_the_widget_shows_frames_and_a_drag_turns_the_camera(lab, browser):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    url, folder = lab
    browser.get(url)
    wait_for("JupyterLab's app", lambda: browser.execute_script(
        "return !!(window.jupyterapp && document.querySelector('.jp-Notebook .jp-Cell'))"),
        timeout=90)
    wait_for("the kernel", lambda: browser.execute_script(
        "const w = window.jupyterapp.shell.currentWidget;"
        "return !!(w && w.sessionContext && w.sessionContext.session"
        " && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle');"), timeout=90)
    browser.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    view = wait_for("the widget", lambda: browser.find_elements(By.CSS_SELECTOR,
                                                                "img.renderview-view"),
                    timeout=120)[0]
    first = wait_for("the first frame", lambda: state(folder), timeout=120)
    # The browser sized the frame: the view's CSS content box x devicePixelRatio.
    assert first["ratio"] == RATIO
    rect = browser.execute_script("const r = arguments[0].getBoundingClientRect();"
                                  "return [r.width, r.height];", view)
    assert first["shape"][:2] == [round((rect[1] - 2) * RATIO), round((rect[0] - 2) * RATIO)]
    assert abs(rect[0] - CSS_SIZE[0]) <= 2 and abs(rect[1] - CSS_SIZE[1]) <= 2

    def shown_matches_last():
        # the page shows the kernel's latest frame (lossless once settled)
        png = element_png(view)[RATIO * 3:-RATIO * 3, RATIO * 3:-RATIO * 3]
        last = np.asarray(Image.open(folder / "last.png").convert("RGB"))
        inner = last[RATIO * 2:-RATIO * 2, RATIO * 2:-RATIO * 2]
        if png.shape != inner.shape:
            return None
        return png if np.abs(png.astype(int) - inner.astype(int)).mean() < 2.0 else None

    before = wait_for("the page to show the first frame", shown_matches_last, timeout=30,
                      every=0.3)
    az0, el0 = first["azimuth"], first["elevation"]

    drag_css = 90  # pixels to the right, in CSS pixels
    actions = ActionChains(browser, duration=20)
    actions.move_to_element_with_offset(view, -60, 0).click_and_hold()
    for _ in range(6):
        actions.move_by_offset(drag_css // 6, 0)
    actions.release().perform()

    expected_az = az0 - drag_css * RATIO * 0.3  # OrbitController: -0.3 deg per pixel right

    def turned():
        s = state(folder)
        if not s:
            return None
        d = (s["azimuth"] - expected_az + 180) % 360 - 180
        return s if abs(d) < 0.5 else None

    try:
        after = wait_for("the camera to turn by the drag", turned, timeout=30)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: expected azimuth {expected_az:.2f} from {az0:.2f}, "
                             f"state {state(folder)}") from None
    assert after["elevation"] == pytest.approx(el0, abs=0.5)  # a horizontal drag
    assert after["frames"] > first["frames"]
    # the pointer is reported in framebuffer pixels
    assert after["pointer"][0] == pytest.approx(
        (rect[0] / 2 - 60 + drag_css) * RATIO, abs=2 * RATIO)
    def turned_on_page():
        p = shown_matches_last()
        if p is None or p.shape != before.shape:
            return None
        return p if np.abs(p.astype(int) - before.astype(int)).mean() > 2.0 else None

    wait_for("the page to show the turned frame", turned_on_page, timeout=30, every=0.3)
