"""The batch's vertex range allocator: where a spawned node's vertices go.

Ranges ``[start, stop)`` lie in ``[0, used)``. A request takes the first free hole large
enough (first fit in a sorted list of disjoint, merged holes) or is appended at the end;
a freed range merges with its neighbours, and a hole that reaches the end shrinks
``used`` instead (fewer vertices projected).
"""

from __future__ import annotations

import bisect


class RangeAllocator:
    """Attributes: used (end of the packed range), holes (sorted, merged (start, stop)
    free ranges), hole_total (vertices in holes)."""

    def __init__(self, used: int = 0):
        self.used = used
        self.holes: list[tuple[int, int]] = []
        self.hole_total = 0

    def alloc(self, n: int) -> int:
        """Start of a free range of ``n`` vertices. May raise ``used`` past the
        storage's capacity: the caller grows the storage then."""
        for i, (s, e) in enumerate(self.holes):
            if e - s >= n:
                if e - s == n:
                    del self.holes[i]
                else:
                    self.holes[i] = (s + n, e)
                self.hole_total -= n
                return s
        start = self.used
        self.used = start + n
        return start

    def free(self, start: int, stop: int):
        """Give ``[start, stop)`` back."""
        self.hole_total += stop - start
        holes = self.holes
        i = bisect.bisect_left(holes, (start, stop))
        holes.insert(i, (start, stop))
        if i + 1 < len(holes) and holes[i][1] == holes[i + 1][0]:
            holes[i] = (start, holes.pop(i + 1)[1])
        if i > 0 and holes[i - 1][1] == holes[i][0]:
            holes[i - 1] = (holes[i - 1][0], holes.pop(i)[1])
        if holes and holes[-1][1] == self.used:
            s, e = holes.pop()
            self.hole_total -= e - s
            self.used = s
