"""Camera controllers (orbit, fly) and input mapping. Toolkit-free: controllers take
events and ``tick(dt)``, so scripts and tests drive them exactly as a window does.

Imports: ``engine.scene``, ``engine.animation`` (camera poses) and the helpers; never
``engine.render``, ``engine.game``, ``engine.display`` or the CLI.
"""

from .controllers import FlyController, OrbitController
from .input import InputMap, InputScript

__all__ = ["FlyController", "InputMap", "InputScript", "OrbitController"]
