"""Lowering the host side, code generation, the compile cache and calling compiled code from Python."""
