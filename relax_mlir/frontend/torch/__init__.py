"""The PyTorch importer: ``torch.export`` programs with dynamic dims become relax modules with the same symbols.

    from torch.export import Dim
    from relax_mlir.frontend.torch import from_torch
    batch, seq = Dim("batch", max=8), Dim("seq", max=2048)
    module = from_torch(model, (tokens,), dynamic_shapes={"tokens": {0: batch, 1: seq}})
    exe = relax_mlir.compile(module)       # types read !relax.tensor<["batch", "seq"], i64>

Importing this package imports torch (``pip install -e .[torch]``); ``import relax_mlir`` does not.
"""

from relax_mlir.frontend.torch.export import from_torch
from relax_mlir.frontend.torch.importer import TorchImportError, from_exported_program, unsupported_nodes

__all__ = ["TorchImportError", "from_exported_program", "from_torch", "unsupported_nodes"]
