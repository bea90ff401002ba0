"""File input and output: 3D files in, images out."""
