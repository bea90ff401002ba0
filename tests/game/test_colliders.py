"""Colliders: overlap thresholds computed by hand, closest points against dense sampling,
and the character controller walking a height field and stopping at a wall."""

import math

import numpy as np
import pytest

from engine import Instances
from engine.game.closest import segment_box, segment_segment, segment_triangles
from engine.game.colliders import (
    AABBCollider,
    BoxCollider,
    CapsuleCollider,
    MeshCollider,
    SphereCollider,
    contact,
    move_and_slide,
    overlap,
)
from engine.game.collision import height_at
from engine.scene import Node
from engine.scene.procedural import heightfield, plane


def at(x=0.0, y=0.0, z=0.0, **kw):
    return Node("n", position=(x, y, z), **kw)


def test_sphere_sphere_and_capsule_thresholds():
    a = SphereCollider(1.0, node=at())
    assert overlap(a, SphereCollider(0.5, node=at(1.5)))  # touching counts
    assert not overlap(a, SphereCollider(0.5, node=at(1.5001)))
    # scaled node: the radius scales with it
    assert overlap(a, SphereCollider(0.25, node=at(1.5, scale=2.0)))
    # two capsules along Y offset in x by d touch when d <= r1 + r2, whatever their heights
    c1 = CapsuleCollider(0.5, 3.0, node=at())
    assert overlap(c1, CapsuleCollider(0.3, 1.0, node=at(0.8, 1.0)))
    assert not overlap(c1, CapsuleCollider(0.3, 1.0, node=at(0.81, 1.0)))
    # crossed capsules (one turned to lie along X), separated in z: skew segments
    lying = CapsuleCollider(0.25, 2.0, node=at(0, 0, 0.75, rotation=(0, 0, 90)))
    assert overlap(c1, lying) and not overlap(CapsuleCollider(0.49, 3.0, node=at()), lying)


def test_boxes_by_separating_axes():
    a = BoxCollider((1, 1, 1), node=at())
    # B turned 45 degrees about Y reaches d - sqrt(2)/2 in x; A ends at 0.5
    edge = 0.5 + math.sqrt(0.5)
    assert overlap(a, BoxCollider((1, 1, 1), node=at(edge - 1e-9, rotation=(0, 45, 0))))
    assert not overlap(a, BoxCollider((1, 1, 1), node=at(edge + 1e-6, rotation=(0, 45, 0))))
    # an AABB ignores its node's rotation: at x = 1.0 + 1e-6 it misses A
    assert not overlap(a, AABBCollider((1, 1, 1), node=at(1.0 + 1e-6, rotation=(0, 45, 0))))
    assert overlap(a, AABBCollider((1, 1, 1), node=at(1.0, rotation=(0, 45, 0))))
    # scaled oriented box: scale 3 along its x, turned 90 degrees about Y: spans z +- 1.5
    long = BoxCollider((1, 1, 1), node=at(0, 0, 2.0, rotation=(0, 90, 0), scale=(3, 1, 1)))
    assert overlap(a, long)
    long.node.position = (0, 0, 2.0 + 1e-6)
    assert not overlap(a, long)


def test_sphere_and_box_corner():
    box = BoxCollider((2, 2, 2), node=at(rotation=(0, 30, 0)))
    corner = box.node.world_matrix[:3, :3] @ np.array([1.0, 1.0, 1.0])
    out = corner / np.linalg.norm(corner)
    assert overlap(SphereCollider(0.5, node=at(*(corner + 0.5 * out))), box)
    assert not overlap(SphereCollider(0.5, node=at(*(corner + 0.5001 * out))), box)
    c = contact(SphereCollider(0.5, node=at(*(corner + 0.25 * out))), box)
    np.testing.assert_allclose(c.normal, out, atol=1e-6)
    assert c.depth == pytest.approx(0.25, abs=1e-6)


def test_shapes_against_a_mesh():
    ground = MeshCollider(Node("floor", position=(0, 2, 0), geometry=plane((10, 10), 4)))
    assert overlap(SphereCollider(0.5, node=at(1.3, 2.5, -2)), ground)
    assert not overlap(SphereCollider(0.5, node=at(1.3, 2.5001, -2)), ground)
    assert not overlap(SphereCollider(0.5, node=at(5.6, 2.0, 0)), ground)  # past its edge
    tilted = BoxCollider((1, 1, 1), node=at(0, 2.5 + 1e-6, 0))
    assert not overlap(tilted, ground)
    tilted.node.rotation = (0, 0, 45)  # a corner dips to y = 2.5 - 0.5 * sqrt(2) + 1e-6
    assert overlap(tilted, ground)
    with pytest.raises(TypeError, match="static"):
        overlap(ground, ground)
    with pytest.raises(TypeError, match="Mesh"):
        MeshCollider(Node("empty"))
    with pytest.raises(TypeError, match="Instances"):
        MeshCollider(Instances(plane(), count=3, name="tiles"))


def test_closest_points_match_dense_sampling():
    rng = np.random.default_rng(4)
    s = np.linspace(0, 1, 201)
    bary = np.array([(i, j) for i in s[::4] for j in s[::4] if i + j <= 1])
    for _ in range(20):
        a, b = rng.normal(0, 2, 3), rng.normal(0, 2, 3)
        v = rng.normal(0, 2, (3, 3))
        dist, q, p = segment_triangles(a, b, v[None, 0], v[None, 1], v[None, 2])
        seg = a + s[:, None] * (b - a)
        tri = v[0] + bary[:, :1] * (v[1] - v[0]) + bary[:, 1:] * (v[2] - v[0])
        sampled = np.min(np.linalg.norm(seg[:, None] - tri[None], axis=2))
        assert dist[0] <= sampled + 1e-12  # never longer than any sampled pair
        assert dist[0] == pytest.approx(sampled, abs=0.05)  # and as short as the samples
        assert np.linalg.norm(q[0] - p[0]) == pytest.approx(dist[0], abs=1e-9)
        c, d = rng.normal(0, 2, 3), rng.normal(0, 2, 3)
        u, w = segment_segment(a, b, c, d)
        other = c + s[:, None] * (d - c)
        best = np.min(np.linalg.norm(seg[:, None] - other[None], axis=2))
        assert np.linalg.norm(a + u * (b - a) - (c + w * (d - c))) <= best + 1e-12
    # segment-box by hand: (2 + 2s, 3 - 4s, 0) against [-1, 1]^3 has squared distance
    # (1 + 2s)^2 + (2 - 4s)^2 for s <= 1/2, least at s = 0.3 (derivative 40 s - 12)
    t = segment_box((2, 3, 0), (4, -1, 0), (0, 0, 0), np.eye(3), (1, 1, 1))
    assert t == pytest.approx(0.3, abs=1e-7)
    turned = np.array([[0.0, 0, 1], [0, 1, 0], [-1, 0, 0]])  # the same box turned: same t
    assert segment_box((2, 3, 0), (4, -1, 0), (0, 0, 0), turned, (1, 1, 1)) == \
        pytest.approx(0.3, abs=1e-7)


def rolling_terrain():
    x = np.linspace(-20, 20, 81)
    z = np.linspace(-10, 10, 41)
    h = 1.5 * np.sin(x[None, :] / 3) * np.cos(z[:, None] / 4)
    return Node("ground", geometry=heightfield(h, size=(40, 20))), math.atan(0.5)


def test_a_capsule_walks_on_a_height_field_and_stops_at_a_wall():
    """Tolerance: a capsule of radius r resting on a slope of angle a touches it off its
    axis, so its bottom point stands r (1/cos a - 1) above the ground under its centre;
    this terrain's steepest slope is atan(0.5) (|dh/dx| <= 1.5/3), so the gap must stay
    in [-1e-3, r (1/cos a - 1) + 1e-3]."""
    ground, steepest = rolling_terrain()
    radius, height = 0.4, 1.8
    player = Node("player", position=(-15, 5, 0))
    me = CapsuleCollider(radius, height, node=player)
    wall = Node("wall", position=(12, 1, 0), rotation=(0, 10, 0))
    wall_box = BoxCollider((1, 6, 30), node=wall)
    world = [me, MeshCollider(ground), wall_box]
    v, dt = np.zeros(3), 1 / 60
    gaps, floors = [], 0
    for i in range(600):
        v[0], v[2] = 4.0, 0.5
        v[1] -= 9.81 * dt
        result = move_and_slide(me, v, dt, world, snap=0.3)
        v = result.velocity
        p = result.position
        if i >= 60:  # landed from the drop at the start
            floors += result.on_floor
            gaps.append(p[1] - height / 2 - height_at(ground, p[0], p[2]))
    bound = radius * (1 / math.cos(steepest) - 1)
    assert min(gaps) >= -1e-3 and max(gaps) <= bound + 1e-3
    assert floors == len(gaps)  # on the floor the whole walk, downhill too (snap)
    # against the wall: the centre stays r from its -x face, and it slid along it (+z)
    centre, axes, half = wall_box.box()
    face_distance = -(p - centre) @ axes[:, 0] - half[0]
    assert face_distance == pytest.approx(radius, abs=1e-6)
    assert p[2] > 6.0  # 10 s at 0.5 m/s in z, less the time before the wall


def test_a_fast_fall_does_not_tunnel_through_a_thin_floor():
    floor = MeshCollider(Node("floor", geometry=plane((10, 10))))
    ball = SphereCollider(0.2, node=at(0, 3, 0))
    result = move_and_slide(ball, (0, -200.0, 0), 1 / 30, [floor])  # 6.7 m in one call
    assert result.on_floor and result.position[1] == pytest.approx(0.2, abs=1e-9)
    assert result.velocity[1] == 0.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="radius"):
        SphereCollider(-1)
    with pytest.raises(ValueError, match="twice its radius"):
        CapsuleCollider(1.0, 1.0)
    with pytest.raises(ValueError, match="box size"):
        BoxCollider((1, 0, 1))
    with pytest.raises(TypeError, match="SphereCollider or CapsuleCollider"):
        move_and_slide(BoxCollider((1, 1, 1), node=at()), (1, 0, 0), 0.1, [])
    with pytest.raises(ValueError, match="velocity"):
        move_and_slide(SphereCollider(1, node=at()), (np.nan, 0, 0), 0.1, [])
    with pytest.raises(ValueError, match="dt"):
        move_and_slide(SphereCollider(1, node=at()), (1, 0, 0), -1, [])


def test_on_floor_jump_and_snap():
    """Standing: on_floor. A jump (v_y > 0) leaves the floor on a free ballistic step
    (y + v_y dt with v_y already reduced by gravity), and snap does not pull it back;
    walking off a 0.2-high step with snap 0.3 keeps it on the floor, without snap it
    falls free."""
    floor = MeshCollider(Node("floor", geometry=plane((20, 20))))
    ball = SphereCollider(0.5, node=at(0, 0.5, 0))
    dt = 1 / 60
    assert move_and_slide(ball, (0, -9.81 * dt, 0), dt, [floor], snap=0.3).on_floor
    assert ball.on_floor
    vy = 5.0 - 9.81 * dt
    result = move_and_slide(ball, (0, vy, 0), dt, [floor], snap=0.3)
    assert not result.on_floor and not ball.on_floor
    assert result.position[1] == pytest.approx(0.5 + vy * dt, abs=1e-12)
    # a step down: the floor beyond x = 0 is 0.2 lower
    low = MeshCollider(Node("low", position=(10.0, -0.2, 0), geometry=plane((20, 20))))
    high = MeshCollider(Node("high", position=(-10.0, 0, 0), geometry=plane((20, 20))))
    for snap, stays in ((0.3, True), (0.0, False)):
        ball = SphereCollider(0.5, node=at(-0.6, 0.5, 0))
        move_and_slide(ball, (0, -0.1, 0), dt, [low, high], snap=snap)  # stands on "high"
        assert ball.on_floor
        result = move_and_slide(ball, (120.0, 0, 0), dt, [low, high], snap=snap)  # 2 units on
        assert result.on_floor is stays
        assert result.position[0] == pytest.approx(1.4, abs=1e-9)
        # on the low floor (-0.2 + radius), or still at the height it left the step
        assert result.position[1] == pytest.approx(0.3 if stays else 0.5, abs=1e-9)
