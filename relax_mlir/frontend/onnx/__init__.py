"""The ONNX importer: ``from_onnx(model_or_path, shape_dict=None)`` returns a relax module.

from relax_mlir.frontend.onnx import from_onnx
module = from_onnx("model.onnx")          # dim_param names become symbols
exe = relax_mlir.compile(module)
"""

from relax_mlir.frontend.onnx.importer import OnnxImportError, from_onnx

__all__ = ["OnnxImportError", "from_onnx"]
