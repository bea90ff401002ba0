"""CUDA (``*.cu``, ``*.cuh``) and GLSL (``*.vert``, ``*.frag``) sources, installed with the
engine as the package ``engine.shaders`` and read through ``importlib.resources``, so a
wheel install (Colab, a remote worker) has them too."""
