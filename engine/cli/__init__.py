"""The ``frustum`` command line (``commands.main``), its shared argument types (``args``) and the
examples runner (``examples``). The top of the engine: it may import every package, and
it is the only one that imports ``engine.game``.
"""

from .commands import main

__all__ = ["main"]
