"""Each Numba kernel is compiled for one signature whatever the frame draws: a feature
that changes an argument's type (a read-only array, another dtype or layout) makes the
first frame with it compile the kernel again, which ``frustum warmup`` did not do ahead
(found when the first ``--environment`` render after it took 105 s: the environment's
split-sum table is read-only, the stand-in without one was not)."""

import subprocess
import sys
import textwrap

# a new process: this one's kernels carry the signatures other tests called them with
RUN = textwrap.dedent("""
    import sys
    import numpy as np
    from numba.core.registry import CPUDispatcher
    from engine import (Environment, Material, Mesh, Node, PerspectiveCamera, Renderer, Scene,
                        SpotLight, Texture)
    from engine.render import warmup
    from engine.scene.procedural import icosphere

    ball, faces = icosphere(1)
    rng = np.random.default_rng(0)
    texture = Texture((rng.uniform(0, 1, (8, 8, 4)) * 255).astype(np.uint8))
    scenes = [build() for _, build in warmup.SCENES]
    for env in (Environment("white"), Environment.from_array(
            rng.uniform(0, 1, (16, 32, 3)).astype(np.float32))):
        s = Scene(environment=env, sky="environment")
        s.add(Node("pbr", geometry=Mesh(ball, faces, normals=ball, material=Material(
            shading="pbr", metallic=1.0, roughness=0.3, texture=texture))))
        s.add(Node("lit", position=(2, 0, 0), geometry=Mesh(ball, faces, normals=ball)))
        scenes.append(s)
    s = Scene()
    s.add(Node("pbr", geometry=Mesh(ball, faces, normals=ball, material=Material(shading="pbr"))))
    s.add(SpotLight(shadows=True, shadow_map_size=64, position=(0, 3, 3))).look_at((0, 0, 0))
    scenes.append(s)
    for scene in scenes:
        camera = scene.add(PerspectiveCamera(fov_y=50, aspect=4 / 3))
        camera.frame(scene.bounds())
        for msaa in (1, 4):
            Renderer(scene, camera, (32, 24), backend="numba", msaa=msaa).render()
    kernels = [(f"{name}.{k}", len(v.overloads)) for name, mod in sorted(sys.modules.items())
               if name.startswith("engine.") for k, v in vars(mod).items()
               if isinstance(v, CPUDispatcher) and v.overloads]
    print(len(kernels), [k for k in kernels if k[1] > 1])
""")


def test_feature_frames_call_each_kernel_with_one_signature():
    out = subprocess.run([sys.executable, "-c", RUN], check=True, capture_output=True,
                         text=True, timeout=1500).stdout.split(" ", 1)
    assert int(out[0]) >= 10  # the frames ran the Numba kernels
    assert out[1].strip() == "[]"  # none of them with two signatures


def test_environment_arrays_have_the_same_types_with_and_without_one():
    import numba
    import numpy as np

    from engine.render.ibl import environment_arrays, prefilter
    from engine.scene.environment import Environment

    kinds = [None, prefilter(Environment("white")),
             prefilter(Environment.from_array(np.ones((8, 16, 3), np.float32)))]
    types = [[numba.typeof(a) for a in environment_arrays(k)[:4]] for k in kinds]
    assert types[0] == types[1] == types[2]
