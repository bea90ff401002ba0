"""The compiled fast path of the per-frame matrix work (engine.render.backends.numba_world)
gives the same bits as the NumPy reference (engine.scene.world, engine.render.batch),
compared as raw bit patterns, on a deep hierarchy with instances while things move."""

import numpy as np
import pytest

from engine import (
    Instances,
    Node,
    PerspectiveCamera,
    PointCloud,
    Scene,
    VertexBatch,
    set_transforms,
)
from engine.render.backends import numba_world
from engine.scene import WorldMatrices


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint64 if a.dtype == np.float64 else np.uint32)


def deep_scene(rng, n=150):
    scene = Scene()
    nodes = []
    for i in range(n):
        parent = scene if i < 8 else nodes[rng.integers(max(0, i - 10), i)]
        geo = PointCloud(rng.normal(size=(2, 3)) + (rng.normal(size=3) * 1e5 if i % 9 == 0
                                                     else 0))  # georeferenced origins too
        nodes.append(parent.add(Node(f"n{i}", position=rng.normal(size=3) * 50,
                                     rotation=rng.normal(size=4),
                                     scale=rng.uniform(0.1, 4, 3), geometry=geo)))
    inst = nodes[40].add(Instances(PointCloud(rng.normal(size=(3, 3))),
                                   positions=rng.normal(size=(64, 3)) * 20,
                                   rotations=rng.normal(size=(64, 4)),
                                   scales=rng.uniform(0.5, 2, (64, 3))))
    return scene, nodes, inst


def test_compiled_world_matrices_are_the_numpy_bits():
    rng = np.random.default_rng(11)
    scene, nodes, _ = deep_scene(rng)
    order = list(scene.traverse())[1:]
    pair = [WorldMatrices(scene), WorldMatrices(scene, kernel=numba_world.update_worlds)]
    for w in pair:
        w.extend(order)
    for step in range(5):
        masks = [w.update() for w in pair]
        assert masks[0].tolist() == masks[1].tolist()
        assert np.array_equal(bits(pair[0].world), bits(pair[1].world))
        if step == 2:
            scene.position = (3, 1, -2)  # the root moves everything
        moved = nodes[step::5]
        set_transforms(moved, positions=rng.normal(size=(len(moved), 3)),
                       rotations=rng.normal(size=(len(moved), 4)))
    assert masks[0].sum() > 10  # subtrees really moved


@pytest.mark.parametrize("rebase", [False, True])
def test_compiled_model_matrices_are_the_numpy_bits(rebase):
    rng = np.random.default_rng(12)
    scene, nodes, inst = deep_scene(rng)
    batches = [VertexBatch(scene, transforms=t) for t in ("numpy", "numba")]
    assert [b.transforms for b in batches] == ["numpy", "numba"]
    for step in range(4):
        for b in batches:
            b.sync()
            if rebase:  # a camera far away moves the origin: every matrix is recomposed
                far = PerspectiveCamera(position=(1e4 * (step + 1), 0, 0), near=0.5)
                b.sync(far)
                assert np.array_equal(b.origin, far.world_position)
        assert np.array_equal(bits(batches[0].model_host), bits(batches[1].model_host))
        nodes[step * 7].position = rng.normal(size=3) * 10
        inst.positions[step::3] += 1.5
        inst.rotations[5] = rng.normal(size=4)  # not unit: normalised alike on both
        inst.active[step * 4] = False
    assert not np.any(batches[1].model_host[batches[1].slots_of(inst)[0]])
