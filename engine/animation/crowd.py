"""Many copies of one skinned (or morphing) model, each playing a clip at its own time:
a crowd of characters without one Python call per character, joint or vertex.

``Crowd(template, clip, count)`` copies the ``template`` subtree (a model's root: its
skinned meshes and their skeletons) ``count`` times. The copies share the template's
geometry objects (one Mesh, K nodes drawing it), and each copy gets its own skeleton and
``Skin``, so the renderer's vertex stage skins every copy with its own joint matrices in
the one vertex launch (engine.render.deform: all skins' joint matrices are computed
together from the node hierarchy each frame). Each copy hangs under a placement node
(``placements[k]``: where it stands, set with ``set_transforms``), so the clip may
animate the model's root too.

Per frame, ``apply()`` samples every track of the clip at the K clip times at once
(``engine.scene.clips.TransformTrack.values_at``) and writes the K copies of each
animated joint with one ``engine.scene.graph.set_transforms`` call: the Python work per
frame grows with the template's animated joints, not with K (morph ``weights`` tracks
are assigned per copy: one attribute store each). Times wrap as
``engine.animation.clips.clip_time`` does when looping; otherwise a copy holds the clip's
last pose.
"""

from __future__ import annotations

import copy

import numpy as np

from ..scene.clips import Clip
from ..scene.graph import Node, set_transforms
from .instance_clips import per_copy, wrapped_times

__all__ = ["Crowd"]


def copy_subtree(template: Node) -> tuple[Node, dict]:
    """A copy of ``template`` and everything under it (transforms, skins, morph weights,
    draw settings), sharing the geometry objects; returns (copy, {id(original node):
    copied node}). The copy has no parent. Raises ValueError when a skin in the subtree
    has a joint outside it (the copy's skeleton must be its own)."""
    nodes = list(template.traverse())
    inside = {id(n) for n in nodes}
    for n in nodes:
        if n.skin is not None:
            outside = [j.name for j in n.skin.joints if id(j) not in inside]
            if outside:
                raise ValueError(f"{template.name!r}: the skin of {n.name!r} has joints "
                                 f"outside the subtree ({', '.join(map(repr, outside[:3]))}): "
                                 "give the node that holds the mesh and its skeleton")
    memo = {id(template.parent): None} if template.parent is not None else {}
    for n in nodes:
        if n.geometry is not None:
            memo[id(n.geometry)] = n.geometry  # shared, never copied
    clone = copy.deepcopy(template, memo)
    return clone, {id(n): memo[id(n)] for n in nodes}


class Crowd:
    """``count`` copies of ``template`` under ``parent``, playing ``clip`` at their own
    times (see the module docstring).

    Args:
        template: the model's root node (e.g. a loaded glTF's root, or a node holding a
            skinned mesh and its joints). It is left where it is (hide it, or leave it out
            of the scene).
        clip: an ``engine.scene.clips.Clip`` animating nodes of ``template``.
        count: K >= 1 copies.
        parent: the node the placements are added to (e.g. the Scene).
        positions: (K, 3) placements in ``parent``'s frame (default: all at the origin).
        rotations: (K, 4) quaternions (x, y, z, w) or (K, 3) Euler degrees, or None.
        times: starting clip times in seconds, (K,) or one number (default 0).
        speeds: clip seconds per second of ``tick``, (K,) or one number (default 1).
        loop: wrap the times into the clip's duration.

    Attributes:
        copies: the K copied roots; ``placements``: their K parents.
        times, speeds: (K,) float64 arrays (edit them in place).

    Raises:
        TypeError: ``template``/``parent`` not a Node, ``clip`` not a Clip.
        ValueError: count < 1; a clip track animating a node outside ``template``; a
            skin with joints outside it; times/speeds/placements of the wrong shape.
    """

    def __init__(self, template: Node, clip: Clip, count: int, parent: Node,
                 positions=None, rotations=None, times=0.0, speeds=1.0, loop: bool = True):
        if not isinstance(template, Node) or not isinstance(parent, Node):
            raise TypeError("template and parent must be engine Nodes")
        if not isinstance(clip, Clip):
            raise TypeError(f"clip must be an engine.scene.clips.Clip, got {type(clip).__name__}")
        k = int(count)
        if k < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        inside = {id(n) for n in template.traverse()}
        for tr in clip.tracks:
            if id(tr.node) not in inside:
                raise ValueError(f"clip {clip.name!r} animates {tr.node.name!r}, which is "
                                 f"not under {template.name!r}")
        self.clip, self.loop = clip, bool(loop)
        self.times = per_copy(times, k, "times")
        self.speeds = per_copy(speeds, k, "speeds")
        self.placements, self.copies, maps = [], [], []
        for i in range(k):
            holder = parent.add(Node(f"{template.name} #{i}"))
            clone, mapping = copy_subtree(template)
            holder.add(clone)
            self.placements.append(holder)
            self.copies.append(clone)
            maps.append(mapping)
        if positions is not None or rotations is not None:
            set_transforms(self.placements, positions=positions, rotations=rotations)
        # per track: the K copies of the node it animates
        self._targets = [(tr, [m[id(tr.node)] for m in maps]) for tr in clip.tracks]

    @property
    def count(self) -> int:
        return len(self.copies)

    def clip_times(self) -> np.ndarray:
        """(K,) the clip time each copy shows now (wrapped when looping)."""
        return wrapped_times(self.clip, self.times, self.loop)

    def apply(self) -> None:
        """Pose every copy at its clip time: one vectorised sample per track and one
        ``set_transforms`` per animated transform."""
        t = self.clip_times()
        for tr, nodes in self._targets:
            values = tr.values_at(t)
            attr = tr.attribute
            if attr == "morph_weights":
                for node, w in zip(nodes, values):
                    node.morph_weights = w
            else:
                set_transforms(nodes, **{{"position": "positions", "rotation": "rotations",
                                          "scale": "scales"}[attr]: values})

    def tick(self, dt: float) -> None:
        """Advance every copy by ``speeds * dt`` seconds and pose them."""
        self.times += self.speeds * float(dt)
        self.apply()
