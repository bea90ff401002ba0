"""Entities: spawn/despawn through VertexBatch slots and free lists, without repacks."""

import numpy as np
import pytest
from conftest import backend_params

from engine import Node, PerspectiveCamera, PointCloud, Renderer, Scene
from engine.arrays import to_host
from engine.render.batch import VertexBatch


def blob(rng, n, color):
    pts = rng.uniform(-0.2, 0.2, (n, 3)).astype(np.float32)
    return PointCloud(pts, colors=np.tile(color, (n, 1)).astype(np.uint8), point_size=2)


def base_scene(seed=0):
    rng = np.random.default_rng(seed)
    scene = Scene(background=(0, 0, 0))
    for i in range(4):
        scene.add(Node(f"static{i}", position=(i - 1.5, -1, 0), geometry=blob(rng, 300, (200, 200, 200))))
    cam = scene.add(PerspectiveCamera(fov_y=60, position=(0, 0, 6), near=0.5, far=50))
    return scene, cam


def fresh_render(scene, cam, backend):
    """Reference: a new Renderer packs the scene from scratch (full repack path)."""
    return Renderer(scene, cam, (160, 120), backend=backend).render()


@pytest.mark.parametrize("backend", backend_params())
def test_spawn_and_despawn_match_a_fresh_pack_without_repacking(backend):
    scene, cam = base_scene()
    r = Renderer(scene, cam, (160, 120), backend=backend)
    r.render()
    b = r.batch
    assert b.repacks == 1
    rng = np.random.default_rng(1)
    spawned = []
    for i in range(6):
        node = Node(f"e{i}", position=(i - 2.5, 1.0, 0), geometry=blob(rng, 50 + 10 * i, (255, 0, i * 40)))
        spawned.append(b.spawn(node))
    frame = r.render()
    assert b.repacks == 1 and b.spawns == 6 and b.object_count == 10
    assert node.parent is scene
    np.testing.assert_array_equal(frame.color, fresh_render(scene, cam, backend).color)
    # Red pixels exist where the entities are.
    assert np.count_nonzero(frame.color[..., 0] == 255) > 50
    for node in spawned[::2]:
        b.despawn(node)
    frame = r.render()
    assert b.repacks == 1 and b.despawns == 3 and b.object_count == 7
    assert all(n.parent is None for n in spawned[::2])
    np.testing.assert_array_equal(frame.color, fresh_render(scene, cam, backend).color)


def test_freed_vertices_point_at_the_zero_null_slot_and_are_not_visible():
    scene, cam = base_scene()
    r = Renderer(scene, cam, (160, 120), backend="numpy")
    r.render()
    b = r.batch
    rng = np.random.default_rng(2)
    a = b.spawn(Node("a", geometry=blob(rng, 40, (255, 0, 0))))
    c = b.spawn(Node("c", geometry=blob(rng, 40, (0, 255, 0))))
    start, stop = b.ranges[a]
    b.despawn(a)
    p = r.project()
    oid = to_host(b.object_id)
    assert np.all(oid[start:stop] == b.null_slot)
    assert np.all(to_host(b.model)[b.null_slot] == 0)
    vis = to_host(p.visible)
    assert not vis[start:stop].any()
    assert np.isfinite(to_host(p.screen_xy)).all() and np.isfinite(to_host(p.depth)).all()
    assert b.node_for_vertex(start) is None and b.node_for_vertex(b.ranges[c][0]) is c
    # The next spawn of the same size reuses the hole and the freed slot.
    d = b.spawn(Node("d", geometry=blob(rng, 40, (0, 0, 255))))
    assert b.ranges[d] == (start, stop)
    assert b.slot_nodes.index(d) < b.slot_nodes.index(c)
    assert b.vertex_count == b.live_vertex_count


@pytest.mark.parametrize("backend", [p for p in backend_params() if p.id != "numpy"])
def test_random_churn_keeps_every_live_vertex_where_a_fresh_pack_puts_it(backend):
    scene, cam = base_scene()
    r = Renderer(scene, cam, (200, 150), backend=backend)
    r.project()
    b = r.batch
    rng = np.random.default_rng(3)
    live = []
    for step in range(300):
        if live and rng.random() < 0.45:
            b.despawn(live.pop(int(rng.integers(len(live)))))
        else:
            pos = rng.uniform(-2, 2, 3)
            live.append(b.spawn(Node(f"e{step}", position=pos,
                                     geometry=blob(rng, int(rng.integers(1, 80)), (255, 255, 0)))))
        if step % 50 == 49:
            for n in live[: len(live) // 3]:
                n.position = n.position + 0.1  # moving entities upload their model rows
            p = r.project()
            xy, vis = to_host(p.screen_xy), to_host(p.visible)
            assert np.isfinite(xy).all()
            ref = Renderer(scene, cam, (200, 150), backend="numpy")
            q = ref.project()
            for node in live + list(scene.children[:4]):
                s, e = b.ranges[node]
                rs, re_ = ref.batch.ranges[node]
                np.testing.assert_allclose(xy[s:e], to_host(q.screen_xy)[rs:re_], atol=1e-3)
                np.testing.assert_array_equal(vis[s:e], to_host(q.visible)[rs:re_])
            # Everything not owned by a live node is not visible.
            owned = np.zeros(b.vertex_count, bool)
            for s, e in b.ranges.values():
                owned[s:e] = True
            assert not vis[~owned].any()
            assert int(owned.sum()) == b.live_vertex_count
    # Compaction may run (holes above half the range) but far less often than changes.
    assert b.repacks <= 3 and b.spawns + b.despawns >= 300


def test_growth_is_geometric_and_compaction_is_rare():
    scene = Scene()
    scene.add(Node("big", geometry=PointCloud(np.zeros((5000, 3), np.float32))))
    b = VertexBatch(scene)
    b.sync()
    nodes = [b.spawn(Node(f"s{i}", geometry=PointCloud(np.ones((20, 3), np.float32))))
             for i in range(2000)]
    assert b.repacks == 1 and b.vertex_count == 5000 + 40000
    # Growth x1.5: vertices 5,000 -> 45,000 and slots 64 -> 2,001 take about
    # log_1.5(9) + log_1.5(31) + 2 ~ 16 reallocations, against 2,000 spawns.
    steps = np.log(45000 / 5000) / np.log(1.5) + np.log(2001 / 64) / np.log(1.5) + 2
    assert b.growths <= np.ceil(steps) + 1
    for n in nodes[::2]:
        b.despawn(n)
    # 1,000 holes of 20 vertices (20,000) stay below half of N = 45,000: no compaction.
    assert b.repacks == 1 and b.vertex_count == 45000
    assert b.live_vertex_count == 5000 + 20000
    for n in nodes[1::2][:700]:
        b.despawn(n)
    # Compaction repacks once holes pass half of N: after 126 more frees (22,520 >
    # 22,500), leaving N = 22,480, and again after 563 of the next frees (> 11,240).
    assert b.repacks == 3 and b.despawns == 1700
    assert b.vertex_count - b.live_vertex_count <= b.vertex_count // 2
    assert b.live_vertex_count == 5000 + 300 * 20 and b.object_count == 301


def test_spawn_under_a_moving_parent_and_despawn_of_a_subtree():
    scene, cam = base_scene()
    r = Renderer(scene, cam, (160, 120), backend="numpy")
    r.render()
    b = r.batch
    rng = np.random.default_rng(4)
    ship = Node("ship", position=(0, 0, 0))
    ship.add(Node("hull", geometry=blob(rng, 30, (255, 0, 0))))
    ship.add(Node("wing", position=(0.5, 0, 0), geometry=blob(rng, 30, (0, 255, 0))))
    b.spawn(ship)
    assert b.object_count == 6 and b.repacks == 1
    ship.position = (1, 0.5, 0)
    np.testing.assert_array_equal(r.render().color, fresh_render(scene, cam, "numpy").color)
    b.despawn(ship)
    assert b.object_count == 4 and b.live_vertex_count == 1200
    np.testing.assert_array_equal(r.render().color, fresh_render(scene, cam, "numpy").color)


def test_pending_structure_change_falls_back_to_one_repack():
    scene, cam = base_scene()
    r = Renderer(scene, cam, (160, 120), backend="numpy")
    r.render()
    b = r.batch
    scene.children[0].visible = False  # an ordinary structure change
    e = b.spawn(Node("e", geometry=blob(np.random.default_rng(5), 10, (255, 0, 0))))
    r.render()
    assert b.repacks == 2 and e in b.ranges and scene.children[0] not in b.ranges


def test_despawn_rejects_nodes_outside_the_tree():
    scene, _ = base_scene()
    b = VertexBatch(scene)
    b.sync()
    with pytest.raises(ValueError, match="not a spawned node"):
        b.despawn(Node("stray"))
    with pytest.raises(ValueError, match="not a spawned node"):
        b.despawn(scene)
    with pytest.raises(ValueError, match="is not under"):
        b.spawn(Node("x"), parent=Node("elsewhere"))


def test_spawning_an_already_drawn_node_moves_it_without_a_ghost():
    from engine import Node, PointCloud, Scene, VertexBatch

    scene = Scene()
    a = scene.add(Node("a", position=(5, 0, 0)))
    b = VertexBatch(scene)
    b.sync()
    thing = b.spawn(Node("thing", geometry=PointCloud(np.zeros((4, 3)))))
    b.sync()
    b.spawn(thing, parent=a)  # reparent through spawn
    b.sync()
    assert b.object_count == 1 and b.live_vertex_count == 4
    assert [n for n in b.slot_nodes if n is not None] == [thing]
    runs = b.runs
    assert runs[0, 0] == 0 and runs[-1, 1] == b.vertex_count  # still tiles every vertex
