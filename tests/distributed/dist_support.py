"""Shared by the distributed tests: a Dask LocalCluster of 2 worker processes x 1 thread
(engine.distributed.local_cluster: everything on 127.0.0.1, no dashboard) and small files."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh


@pytest.fixture(scope="module")
def dask_cluster():
    from engine.distributed import local_cluster

    cluster = local_cluster(2)
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def dask_client(dask_cluster):
    from distributed import Client

    with Client(dask_cluster, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def write_mesh(path, seed=0, sections=24):
    """A small lit, vertex-coloured torus as a 3D file (suffix picks the format)."""
    mesh = trimesh.creation.torus(1.0, 0.35, major_sections=sections, minor_sections=12)
    rng = np.random.default_rng(seed)
    mesh.apply_transform(trimesh.transformations.random_rotation_matrix(rng.random(3)))
    mesh.visual.vertex_colors = rng.integers(40, 255, (len(mesh.vertices), 4), np.uint8)
    mesh.visual.vertex_colors[:, 3] = 255
    path.parent.mkdir(parents=True, exist_ok=True)
    mesh.export(path)
    return path


@pytest.fixture(scope="module")
def mesh_file(tmp_path_factory):
    return write_mesh(tmp_path_factory.mktemp("mesh") / "torus.ply")
