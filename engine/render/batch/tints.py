"""The batch's vertex colours: geometry colours times the node's ``color`` tint and, for
an Instances node, each instance's colour, rounded to uint8 RGBA."""

from __future__ import annotations

import numpy as np

from ...scene.instances import Instances
from .storage import to_module

# Geometry without colours is opaque white, so a node tint gives exactly its colour.
DEFAULT_COLOR = np.array([255, 255, 255, 255], np.uint8)


def base_colors(geometry, xp):
    """(n, 4) uint8 colours of ``geometry`` on ``xp`` (``DEFAULT_COLOR`` without any)."""
    if geometry.colors is not None:
        return to_module(geometry.colors, xp)
    return xp.broadcast_to(xp.asarray(DEFAULT_COLOR), (geometry.vertex_count, 4))


def node_colors(node, xp, instances=None):
    """(copies * n, 4) uint8 vertex colours of ``node`` on ``xp`` (of ``instances``
    only, for an Instances node): geometry colours x node tint x instance colours."""
    base = base_colors(node.geometry, xp)
    tint = node.color
    if isinstance(node, Instances):
        c = node.colors if instances is None else node.colors[instances]
        c = c.astype(np.float64)
        if tint is not None:
            c = c * np.asarray(tint)
        if np.all(c == 1.0):
            return xp.tile(base, (len(c), 1))
        out = xp.rint(base[None].astype(np.float32) * xp.asarray(c, np.float32)[:, None])
        return xp.clip(out, 0, 255).astype(np.uint8).reshape(-1, 4)
    if tint is None:
        return base
    out = xp.rint(base.astype(np.float32) * xp.asarray(tint, np.float32))
    return xp.clip(out, 0, 255).astype(np.uint8)


def recolor_nodes(color_revs: dict, ranges: dict, col, snapshots: dict, xp) -> bool:
    """Rewrite in ``col`` (the batch's (N, 4) colours) the vertex colours of the nodes
    whose ``color`` revision differs from ``color_revs`` (node -> revision drawn, then
    updated); ``snapshots`` (Instances node -> InstanceSnapshot) take the new instance
    colours too. Returns True when any colour changed."""
    changed = False
    for node, rev in list(color_revs.items()):
        if node._color_rev != rev:
            s, e = ranges[node]
            col[s:e] = node_colors(node, xp)
            color_revs[node] = node._color_rev
            if node in snapshots:
                snapshots[node].color_changes(node)
            changed = True
    return changed


def recolor_instances(node: Instances, snapshot, start: int, col, xp) -> bool:
    """Rewrite in ``col`` the vertex colours of the instances of ``node`` (its range
    starting at ``start``) whose colour changed since ``snapshot``. Returns True when
    any did."""
    idx = snapshot.color_changes(node)
    if len(idx) == 0:
        return False
    n = node.geometry.vertex_count
    cols = node_colors(node, xp, idx).reshape(len(idx), n, 4)
    if len(idx) == len(snapshot.slots):
        col[start:start + n * len(idx)] = cols.reshape(-1, 4)
    else:
        for j, i in enumerate(idx.tolist()):
            col[start + i * n:start + (i + 1) * n] = cols[j]
    return True
