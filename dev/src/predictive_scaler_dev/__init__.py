"""What the repository needs beside the operator: the local control plane and the demo.

A distribution of its own (``dev/pyproject.toml``), installed by ``make`` next
to the runtime package, so that the operator's package and image carry
neither, nor what they need (certificates, buildah, matplotlib).
"""
