"""Inference: maximum likelihood with asymptotic intervals (MAP) and NUTS, each returning a DataTree.

PyTensor writes the generated Python source of every compiled function to a file; unless told
otherwise, one new file per function in the system temporary directory, never removed (dozens
per fit). Unless the user chose a place (``PYTENSOR_FLAGS=generated_src_dir=...``), those files
go to a content-addressed folder inside PyTensor's own compile cache, reused across runs and
pruned by PyTensor.
"""

import os

import pytensor

if not pytensor.config.generated_src_dir:
    pytensor.config.generated_src_dir = os.path.join(pytensor.config.compiledir, "generated_src")
