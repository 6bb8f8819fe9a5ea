"""User-facing errors. Tools print them as ``error: ...`` diagnostics and exit 1."""

from __future__ import annotations


class RelaxError(Exception):
    """Base class of every error caused by user input (not by an internal bug)."""


class ParseError(RelaxError):
    """Text (IR, a dim expression, a pipeline string) could not be parsed."""


class ShapeError(RelaxError):
    """A program is ill-typed: operand shapes or dtypes disagree."""


class VerifyError(RelaxError):
    """IR is not well-formed (undefined symbol, dataflow value escaping its block, ...)."""


class PassError(RelaxError):
    """A pass pipeline is malformed or names an unknown pass."""


class UnsupportedOpError(RelaxError):
    """An op (ONNX or relax) is not supported."""


class InputError(RelaxError):
    """Run-time inputs do not match a function's signature."""


class CompileError(RelaxError):
    """A module could not be compiled; the message holds the located diagnostics."""


class ShaderTranslationError(CompileError):
    """A GPU kernel cannot be translated to another shading language (SPIR-V to WGSL for browsers): the
    message names the kernel and gives the reason (a capability WGSL lacks, or naga's own error)."""


class BuilderError(RelaxError):
    """The builder API was used out of order or mixed values of different functions (an op after
    ``bb.ret``, ``bb.ret`` twice, a value of another function or builder)."""


class ArgumentError(BuilderError, TypeError, ValueError):
    """An argument of a builder call or op helper has the wrong Python type or an out-of-range value
    (``R.add(x, None)``, ``axis=None``, an integer beyond int64). Also a ``TypeError`` and a
    ``ValueError``, so code that catches Python's usual argument errors catches it."""


class DeviceUnavailableError(RelaxError):
    """Compiled code cannot run here: no usable device or driver (e.g. a CUDA build without a GPU)."""


class OutOfMemoryError(RelaxError, MemoryError):
    """A compiled function could not allocate memory (its message names the function and the size)."""


class WasmTrapError(RelaxError):
    """A WebAssembly module trapped while running a compiled function (the wasm32 target): the message
    names the function and the trap."""


class CacheWarning(UserWarning):
    """The compile cache is damaged or cannot be used; the compile goes on (recompiling, or without it)."""
