"""Motion over time: interpolation and easing, camera poses, keyframed camera paths and
their files, shot helpers (orbit, dolly, fly-through), offline rendering of a motion.

Imports: ``engine.scene``, ``engine.render``, ``engine.io`` (video output) and the
helpers; never ``engine.game``, ``engine.controls``, ``engine.display`` or the CLI.
"""

from . import clips  # ``engine.animation.clips.play_in`` works after ``import engine``
from .camera_path import CameraPath, CameraScript, Keyframe

__all__ = ["CameraPath", "CameraScript", "Keyframe", "clips"]
