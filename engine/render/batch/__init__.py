"""The vertex batch: every visible node's geometry packed into contiguous arrays.

Layout (N vertices, K object slots, on the projector's array module, NumPy or CuPy)::

    positions  (N, 3) float32, each object's local frame
    colors     (N, 4) uint8 RGBA (geometry colours times the node's ``color`` tint and,
               for instances, the instance's colour)
    object_id  (N,)   uint32, the object's slot k into ``model``
    model      (K + 1, 4, 4) float32 model matrices; the last row is the *null slot*
    runs       (R, 3) int64 host array of (start, stop, k): vertices [start, stop) use slot k

An ordinary node with geometry takes one slot and one vertex range. An
``engine.scene.Instances`` node takes one slot per instance and one range holding its
geometry once per instance (instance i at ``start + i * n``), so the projection stays
one launch over every vertex; inactive instances get an all-zero model matrix (clip
w = 0), which every backend culls.

Any structure change made directly on the scene graph (add/remove, reparent, hide/show,
geometry replaced) repacks the whole batch on the next ``sync``: the nodes in traversal
order, with a re-centred precision origin. Entities use ``spawn`` / ``despawn`` instead,
which change the batch in place without a repack: a spawned subtree gets free model
slots and a free vertex range, a despawned one gives them back (its vertices point at
the all-zero null slot, which the projection contract of ``engine.render.backends.base``,
w <= 1e-7 is not visible, culls on every backend). Capacity grows geometrically (x1.5),
and when free holes exceed half of the packed range the batch compacts itself with one
repack (amortised over the frees). An Instances node that grows past its capacity is
re-laid out the same way (old range freed, a new one allocated), never by a repack.

Geometry data edited with ``Geometry.update`` (same vertex count) is rewritten in the
node's range on the next ``sync``, without a repack; a new vertex count repacks.

Per frame (``sync``) the world matrices come from the scene's
``engine.scene.world.WorldMatrices`` (array operations only: the nodes whose transform
stamps changed and their descendants, level by level), Instances nodes are compared
with what was drawn last, and the model matrices of the slots whose world changed are
rebased and uploaded as one contiguous row range. With Numba installed the same work
runs as compiled twins of those NumPy passes (``engine.render.backends.numba_world``),
which give the same bits.

One concept per module:

- ``vertex_batch``: ``VertexBatch``, packing, spawn/despawn and ``sync``;
- ``models``: the per-frame model matrices (world matrices, instance poses, rebasing);
- ``storage``: the per-vertex arrays and their growth;
- ``ranges``: the vertex range allocator (first fit in merged holes);
- ``slots``: the model slots, their free list and the upload range;
- ``instances``: what changed in an Instances node since it was drawn;
- ``tints``: vertex colours (geometry x node tint x instance colour);
- ``updates``: geometry data edits (``Geometry.update``) rewritten in place;
- ``rebase``: the camera-relative precision origin and the model matrices against it.
"""

from .tints import DEFAULT_COLOR
from .vertex_batch import VertexBatch

__all__ = ["DEFAULT_COLOR", "VertexBatch"]
