"""Relax ops, one module per category. Every module here is imported by ``relax_mlir.dialects.relax``."""
