"""Geometry data edits (``engine.scene.Geometry.update``) carried into the batch in place.

Each drawn node remembers the data revisions of its geometry when it was packed
(``data_revisions``: the vertex count and every field's ``field_revision``). When
``engine.scene.geometry.data_epoch`` moves, ``rewrite_geometry`` compares them for the
nodes drawing the geometries that changed (``engine.scene.geometry.changed_since``): changed positions and
colours are copied into the node's vertex range (once per instance for an Instances
node), changed normals, UVs, indices or a replaced material are only reported (the
surface attributes and the primitive assembly are rebuilt from the geometry by their own
caches, keyed on the batch's revisions). A changed vertex count cannot be rewritten in place: the caller
repacks.
"""

from __future__ import annotations

from .storage import to_module
from .tints import node_colors

__all__ = ["data_revisions", "rewrite_geometry"]


def data_revisions(geometry) -> tuple:
    """(vertex count, (field, revision) pairs) of ``geometry`` now."""
    fields = geometry.FIELDS + geometry.INDEX_FIELDS + ("material",)
    return geometry.vertex_count, tuple((f, geometry.field_revision(f)) for f in fields)


def rewrite_geometry(drawn: dict, ranges: dict, verts, xp, copies, nodes=None):
    """Bring the batch's vertex arrays ``verts`` up to date with edited geometries.

    Args:
        drawn: node -> ``data_revisions`` of its geometry as drawn (updated here).
        nodes: the drawn nodes to check (those whose geometry changed,
            ``engine.scene.geometry.changed_since``), or None for all of ``drawn``.
        ranges: node -> (start, stop) vertex range in the batch.
        verts: the batch's ``VertexArrays``.
        xp: the batch's array module.
        copies: ``copies(node)`` -> copies of the geometry in the node's range.

    Returns:
        None when some geometry's vertex count changed (nothing is rewritten: the batch
        must repack), else (kinds, ranges): the set of what changed, "positions",
        "colors", "attributes" (normals, UVs) and/or "index" (faces, segments), and the
        (start, stop) vertex ranges of the nodes whose data changed; both empty when
        nothing did.
    """
    stale = []
    for node in drawn if nodes is None else nodes:
        revs = drawn[node]
        now = data_revisions(node.geometry)
        if now != revs:
            if now[0] != revs[0]:
                return None
            stale.append((node, dict(revs[1]), now))
    changed, rewritten = set(), []
    for node, before, now in stale:
        g = node.geometry
        s, e = ranges[node]
        k = copies(node)
        for field, rev in now[1]:
            if before.get(field) == rev:
                continue
            if field == "positions":
                pos = to_module(g.positions, xp)
                verts.pos[s:e] = xp.tile(pos, (k, 1)) if k != 1 else pos
                changed.add("positions")
            elif field == "colors":
                verts.col[s:e] = node_colors(node, xp)
                changed.add("colors")
            elif field in g.INDEX_FIELDS or field == "material":
                changed.add("index")  # the primitive assembly is rebuilt
            else:
                changed.add("attributes")
        drawn[node] = now
        rewritten.append((s, e))
    return changed, rewritten
