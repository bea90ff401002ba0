"""Offline rendering spread over a Dask cluster (``pip install 'frustum[distributed]'``).

- ``render_video(scene, camera, out, motion, ..., client=|scheduler=|workers=)``: one
  clip, its frames rendered by the workers and written in order by this process,
  byte-identical to the single-process render; this is ``engine.render_video``
  (``frustum render ... --workers N | --scheduler ADDR``).
- ``render_many(patterns, out_dir, ManySpec(...), ...)``: one image or turntable clip
  per 3D file, restartable, with an index (``frustum render-many``).
- ``dask_client`` / ``local_cluster``: the embedded LocalCluster on 127.0.0.1 or a
  connection to a running scheduler.

Dask itself is imported only when a cluster is used. See docs/distributed.md (and its
security warning: a Dask scheduler runs code for anyone who can reach it).
"""

from .cluster import dask_client, local_cluster
from .job import RenderJob, SceneSource, render_frame
from .many import ManyResult, ManySpec, render_many
from .video import render_job, render_video

__all__ = ["ManyResult", "ManySpec", "RenderJob", "SceneSource", "dask_client",
           "local_cluster", "render_frame", "render_job", "render_many", "render_video"]
