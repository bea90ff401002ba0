"""examples/notebook.ipynb runs top to bottom in a real Jupyter kernel (nbclient +
ipykernel, in a scratch folder) and every output cell holds what it should: PNGs of the
right size, an embedded MP4 and a GIF that decode to the right frames, the interactive
widget's view."""

from __future__ import annotations

import base64
import io

import imageio.v2 as iio
import nbformat
import numpy as np
import pytest
from conftest import ROOT
from nbclient import NotebookClient
from PIL import Image

pytestmark = pytest.mark.timeout(300)

NOTEBOOK = ROOT / "examples" / "notebook.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    from jupyter_client.manager import KernelManager

    work = tmp_path_factory.mktemp("notebook")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    km = KernelManager(kernel_name="python3", transport="ipc",
                       ip=str(work / "kernel-ipc"))
    NotebookClient(nb, km=km, timeout=240, resources={"metadata": {"path": str(work)}}).execute()
    return nb, work


def outputs(nb, tag):
    (cell,) = [c for c in nb.cells if tag in c.metadata.get("tags", [])]
    errors = [o for o in cell.outputs if o.output_type == "error"]
    assert not errors, errors
    return cell.outputs


def image(output, mime="image/png"):
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(output.data[mime]))))


def test_the_notebook_is_committed_without_outputs():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def test_every_cell_shows_what_it_should(executed):
    nb, work = executed
    assert "('torus', children=2)" in outputs(nb, "frustum-model")[0].text  # a Model node
    (show,) = [o for o in outputs(nb, "frustum-show") if "image/png" in o.get("data", {})]
    img = image(show)
    assert img.shape == (450, 800, 4)
    assert (np.any(img != img[0, 0], axis=2)).mean() > 0.05  # the model fills the view
    (frame,) = outputs(nb, "frustum-frame")
    assert frame.output_type == "execute_result" and image(frame).shape == (270, 480, 4)

    (video,) = outputs(nb, "frustum-video")
    html = video.data["text/html"]
    assert html.startswith("<video") and "data:video/mp4;base64," in html
    mp4 = base64.b64decode(html.split("base64,")[1].split('"')[0])
    assert mp4 == (work / "orbit.mp4").read_bytes()
    decoded = work / "decoded.mp4"
    decoded.write_bytes(mp4)
    reader = iio.get_reader(decoded, format="FFMPEG")
    try:
        frames = [f for f in reader]  # not list(): its length hint is inf
    finally:
        reader.close()
    assert len(frames) == 30 and frames[0].shape == (270, 480, 3)
    assert np.abs(frames[0].astype(int) - frames[15].astype(int)).mean() > 1.0  # it orbits

    (gif,) = [o for o in outputs(nb, "frustum-gif") if "image/gif" in o.get("data", {})]
    with Image.open(io.BytesIO(base64.b64decode(gif.data["image/gif"]))) as im:
        assert im.n_frames == 30 and im.size == (240, 136)

    widget = [o for o in outputs(nb, "frustum-widget") if WIDGET_MIME in o.get("data", {})]
    assert widget and all(o.data[WIDGET_MIME]["model_id"] for o in widget)
    state = outputs(nb, "frustum-widget-state")[0].text
    assert state.startswith("azimuth 35.0 deg, elevation 25.0 deg")
