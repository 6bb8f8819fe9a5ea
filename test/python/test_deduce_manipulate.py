"""Shape deduction of the manipulation and indexing ops at static, symbolic, unknown-dim, unknown-rank
and ill-typed operands, through the builder helpers (which deduce eagerly).

Every expected type below is derived by hand from numpy/Relax semantics.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from mlir import ir

from relax_mlir.dialects.ops import concat as cs
from relax_mlir.dialects.ops import index as ix
from relax_mlir.dialects.ops import manipulate as mp
from relax_mlir.dialects.ops import pad as pd
from relax_mlir.dialects.types import relax_type
from relax_mlir.errors import ShapeError

BIG = 2**63 - 1  # ONNX's "to the end"


def T(shape: str, dtype: str = "f32") -> str:
    """A tensor type from a shape spelling; full types (``!relax...``) pass through."""
    return shape if shape.startswith("!") else f"!relax.tensor<{shape}, {dtype}>"


def I64(shape: str) -> str:
    return T(shape, "i64")


def table(op: str, kind: str, *rows: tuple) -> list:
    return [pytest.param(*row, id=f"{op}-{kind}-{i}") for i, row in enumerate(rows)]


# Each row: (builder, operand types, expected result) -- the expected result is a shape spelling
# (f32 tensor), a full type, or a list of them for multi-result ops.
OK = [
    # -- reshape ---------------------------------------------------------------------------------
    *table(
        "reshape",
        "static",
        (lambda x: mp.reshape(x, [2, 6]), ["[3, 4]"], "[2, 6]"),
        (lambda x: mp.reshape(x, [-1]), ["[3, 4]"], "[12]"),
        (lambda x: mp.reshape(x, [4, -1]), ["[2, 3, 4]"], "[4, 6]"),
        (lambda x: mp.reshape(x, [0, -1]), ["[2, 3, 4]"], "[2, 12]"),
        (lambda x: mp.reshape(x, []), ["[1, 1]"], "[]"),
        (lambda x: mp.reshape(x, [1, 1]), ["[]"], "[1, 1]"),
        (lambda x: mp.reshape(x, [-1, 2]), ["[0, 4]"], "[0, 2]"),
        (lambda x: mp.reshape(x, [7, 1]), ["[7]"], "[7, 1]"),
    ),
    *table(
        "reshape",
        "symbolic",
        (lambda x: mp.reshape(x, ["b", "s", 8, -1]), ['["b", "s", 512]'], '["b", "s", 8, 64]'),
        (lambda x: mp.reshape(x, [0, 0, -1, 64]), ['["b", "s", 512]'], '["b", "s", 8, 64]'),
        (lambda x: mp.reshape(x, [-1, 512]), ['["b", "s", 512]'], '["b * s", 512]'),
        (lambda x: mp.reshape(x, [-1]), ['["b", "s", 512]'], '["512 * b * s"]'),
        (lambda x: mp.reshape(x, ["b", -1]), ['["b", "s", 512]'], '["b", "512 * s"]'),
        (lambda x: mp.reshape(x, ["2 * n", 2]), ['["n", 4]'], '["2 * n", 2]'),
        (lambda x: mp.reshape(x, [-1, 2]), ['["n", 4]'], '["2 * n", 2]'),
        (lambda x: mp.reshape(x, [0, 1, -1]), ['["n", "m"]'], '["n", 1, "m"]'),
    ),
    *table(
        "reshape",
        "unknown-dim",
        (lambda x: mp.reshape(x, [-1, 2]), ['["?", 4]'], '["?", 2]'),
        (lambda x: mp.reshape(x, [0, -1]), ['["n", "?"]'], '["n", "?"]'),
        (lambda x: mp.reshape(x, [3, 4]), ['["?", 4]'], "[3, 4]"),
    ),
    *table(
        "reshape",
        "unknown-rank",
        (lambda x: mp.reshape(x, [-1, 2]), ['"*"'], '["?", 2]'),
        (lambda x: mp.reshape(x, [0, 4]), ['"*"'], '["?", 4]'),
        (lambda x: mp.reshape(x, ["n", 4]), ['"*"'], '["n", 4]'),
    ),
    # -- permute_dims ----------------------------------------------------------------------------
    *table(
        "permute_dims",
        "static",
        (lambda x: mp.permute_dims(x, [1, 0, 2]), ["[2, 3, 4]"], "[3, 2, 4]"),
        (lambda x: mp.permute_dims(x), ["[2, 3, 4]"], "[4, 3, 2]"),
        (lambda x: mp.permute_dims(x), ["[5]"], "[5]"),
        (lambda x: mp.permute_dims(x), ["[]"], "[]"),
        (lambda x: mp.permute_dims(x, [1, 0]), ["[1, 0]"], "[0, 1]"),
    ),
    *table(
        "permute_dims",
        "symbolic",
        (lambda x: mp.permute_dims(x, [0, 2, 1]), ['["b", "s", 64]'], '["b", 64, "s"]'),
        (lambda x: mp.permute_dims(x, [-1, 0, 1]), ['["b", "s", 64]'], '[64, "b", "s"]'),
        (lambda x: mp.permute_dims(x), ['["b", "s + 1", 64]'], '[64, "s + 1", "b"]'),
    ),
    *table(
        "permute_dims",
        "unknown-dim",
        (lambda x: mp.permute_dims(x), ['["?", "n"]'], '["n", "?"]'),
    ),
    *table(
        "permute_dims",
        "unknown-rank",
        (lambda x: mp.permute_dims(x, [1, 0]), ['"*"'], '["?", "?"]'),
        (lambda x: mp.permute_dims(x), ['"*"'], '"*"'),
    ),
    # -- expand_dims -----------------------------------------------------------------------------
    *table(
        "expand_dims",
        "static",
        (lambda x: mp.expand_dims(x, [0]), ["[2, 3]"], "[1, 2, 3]"),
        (lambda x: mp.expand_dims(x, [-1]), ["[2, 3]"], "[2, 3, 1]"),
        (lambda x: mp.expand_dims(x, [1, 3]), ["[2, 3]"], "[2, 1, 3, 1]"),
        (lambda x: mp.expand_dims(x, [0]), ["[]"], "[1]"),
        (lambda x: mp.expand_dims(x, [-2]), ["[0]"], "[1, 0]"),
    ),
    *table(
        "expand_dims",
        "symbolic",
        (lambda x: mp.expand_dims(x, [-1, 0]), ['["n", "m"]'], '[1, "n", "m", 1]'),
        (lambda x: mp.expand_dims(x, [1]), ['["n + 1"]'], '["n + 1", 1]'),
    ),
    *table("expand_dims", "unknown-dim", (lambda x: mp.expand_dims(x, [1]), ['["?", 4]'], '["?", 1, 4]')),
    *table("expand_dims", "unknown-rank", (lambda x: mp.expand_dims(x, [0, -1]), ['"*"'], '"*"')),
    # -- squeeze ---------------------------------------------------------------------------------
    *table(
        "squeeze",
        "static",
        (lambda x: mp.squeeze(x, [1]), ["[3, 1, 4]"], "[3, 4]"),
        (lambda x: mp.squeeze(x), ["[3, 1, 1]"], "[3]"),
        (lambda x: mp.squeeze(x), ["[1, 1]"], "[]"),
        (lambda x: mp.squeeze(x, [0]), ["[1]"], "[]"),
        (lambda x: mp.squeeze(x), ["[0, 1]"], "[0]"),
    ),
    *table(
        "squeeze",
        "symbolic",
        (lambda x: mp.squeeze(x, [-1]), ['["n", 1]'], '["n"]'),
        (lambda x: mp.squeeze(x, [1]), ['["n", 1, "m"]'], '["n", "m"]'),
        # a symbolic dim may be 1 only at run time: the checked kernel decides
        (lambda x: mp.squeeze(x, [0]), ['["n", 4]'], "[4]"),
        # which symbolic dims are 1 is unknown, so is the rank
        (lambda x: mp.squeeze(x), ['["n", 1]'], '"*"'),
    ),
    *table(
        "squeeze",
        "unknown-dim",
        (lambda x: mp.squeeze(x, [1]), ['["?", 1]'], '["?"]'),
        (lambda x: mp.squeeze(x, [0]), ['["?", 1]'], "[1]"),
        (lambda x: mp.squeeze(x), ['[3, "?"]'], '"*"'),
    ),
    *table(
        "squeeze",
        "unknown-rank",
        (lambda x: mp.squeeze(x, [0]), ['"*"'], '"*"'),
        (lambda x: mp.squeeze(x), ['"*"'], '"*"'),
    ),
    # -- flatten ---------------------------------------------------------------------------------
    *table(
        "flatten",
        "static",
        (lambda x: mp.flatten(x), ["[2, 3, 4]"], "[24]"),
        (lambda x: mp.flatten(x, 1), ["[2, 3, 4]"], "[2, 12]"),
        (lambda x: mp.flatten(x, 0, 1), ["[2, 3, 4]"], "[6, 4]"),
        (lambda x: mp.flatten(x, 1, 1), ["[2, 3, 4]"], "[2, 3, 4]"),
        (lambda x: mp.flatten(x), ["[]"], "[1]"),
        (lambda x: mp.flatten(x), ["[5]"], "[5]"),
        (lambda x: mp.flatten(x), ["[2, 0, 3]"], "[0]"),
    ),
    *table(
        "flatten",
        "symbolic",
        (lambda x: mp.flatten(x), ['["k", "j"]'], '["j * k"]'),
        (lambda x: mp.flatten(x, 1, -1), ['["b", 3, 4]'], '["b", 12]'),
        (lambda x: mp.flatten(x, 2, 3), ['["b", "s", 8, 64]'], '["b", "s", 512]'),
        (lambda x: mp.flatten(x, -3, -2), ['["b", "s", 8, 64]'], '["b", "8 * s", 64]'),
        (lambda x: mp.flatten(x), ['["n + 1", 2]'], '["2 * n + 2"]'),
    ),
    *table(
        "flatten",
        "unknown-dim",
        (lambda x: mp.flatten(x, 1, 2), ['["b", "?", 4]'], '["b", "?"]'),
        (lambda x: mp.flatten(x, 0, 0), ['["b", "?", 4]'], '["b", "?", 4]'),
    ),
    *table(
        "flatten",
        "unknown-rank",
        (lambda x: mp.flatten(x), ['"*"'], '["?"]'),
        (lambda x: mp.flatten(x, 1, -1), ['"*"'], '"*"'),
    ),
    # -- concat ----------------------------------------------------------------------------------
    *table(
        "concat",
        "static",
        (lambda x, y: cs.concat([x, y], 0), ["[2, 4]", "[3, 4]"], "[5, 4]"),
        (lambda x, y: cs.concat([x, y], -1), ["[2, 3]", "[2, 5]"], "[2, 8]"),
        (lambda x, y, z: cs.concat([x, y, z]), ["[1]", "[0]", "[2]"], "[3]"),
        (lambda x: cs.concat([x], 1), ["[2, 3]"], "[2, 3]"),
    ),
    *table(
        "concat",
        "symbolic",
        (lambda x, y: cs.concat([x, y], 0), ['["n", 4]', '["m", 4]'], '["m + n", 4]'),
        (lambda x, y: cs.concat([x, y], 0), ['["n", 4]', '["n", 4]'], '["2 * n", 4]'),
        (lambda x, y: cs.concat([x, y], 1), ['["b", "s"]', '["b", 1]'], '["b", "s + 1"]'),
        (lambda x, y: cs.concat([x, y], 0), ['["n", "k"]', '["m", 4]'], '["m + n", 4]'),
        (lambda x, y: cs.concat([x, y], 0), ['["n + 1", 2]', "[3, 2]"], '["n + 4", 2]'),
    ),
    *table(
        "concat",
        "unknown-dim",
        (lambda x, y: cs.concat([x, y], 0), ['["n", 4]', '["?", 4]'], '["?", 4]'),
        (lambda x, y: cs.concat([x, y], 0), ['["n", "?"]', '["m", 4]'], '["m + n", 4]'),
    ),
    *table(
        "concat",
        "unknown-rank",
        (lambda x, y: cs.concat([x, y], 0), ['["n", 4]', '"*"'], '["?", 4]'),
        (lambda x, y: cs.concat([x, y], 1), ['"*"', '["n", 4]'], '["n", "?"]'),
        (lambda x, y: cs.concat([x, y], 0), ['"*"', '"*"'], '"*"'),
        (lambda x, y: cs.concat([x, y], 0), ['"*"', T('["n"]', "none")], '["?"]'),
    ),
    # -- split -----------------------------------------------------------------------------------
    *table(
        "split",
        "static",
        (lambda x: cs.split(x, 3, 0), ["[6, 4]"], ["[2, 4]", "[2, 4]", "[2, 4]"]),
        (lambda x: cs.split(x, [2, 5]), ["[10]"], ["[2]", "[3]", "[5]"]),
        (lambda x: cs.split(x, [2, 5]), ["[4]"], ["[2]", "[2]", "[0]"]),
        (lambda x: cs.split(x, [0]), ["[4]"], ["[0]", "[4]"]),
        (lambda x: cs.split(x, 1), ["[5]"], ["[5]"]),
        (lambda x: cs.split(x, 2), ["[0]"], ["[0]", "[0]"]),
        (lambda x: cs.split(x, [1, 1], -1), ["[3, 3]"], ["[3, 1]", "[3, 0]", "[3, 2]"]),
    ),
    *table(
        "split",
        "symbolic",
        (lambda x: cs.split(x, 2, 1), ['["n", 8]'], ['["n", 4]', '["n", 4]']),
        # equal sections (numpy.split): n must divide by 2 at run time
        (lambda x: cs.split(x, 2), ['["n"]'], ['["n floordiv 2"]', '["n floordiv 2"]']),
        (lambda x: cs.split(x, 2), ['["2 * n"]'], ['["n"]', '["n"]']),
        (
            lambda x: cs.split(x, [2, 5]),
            ['["n"]'],
            ['["min(n, 2)"]', '["-min(n, 2) + min(n, 5)"]', '["n - min(n, 5)"]'],
        ),
        (lambda x: cs.split(x, [4, 8], -1), ['["b", 12]'], ['["b", 4]', '["b", 4]', '["b", 4]']),
    ),
    *table(
        "split",
        "unknown-dim",
        (lambda x: cs.split(x, 2, 0), ['["?", 4]'], ['["?", 4]', '["?", 4]']),
        (lambda x: cs.split(x, [1], 1), ['["n", "?"]'], ['["n", "?"]', '["n", "?"]']),
        (lambda x: cs.split(x, 3, 1), ['["?", 6]'], ['["?", 2]', '["?", 2]', '["?", 2]']),
    ),
    *table(
        "split",
        "unknown-rank",
        (lambda x: cs.split(x, 3), ['"*"'], ['"*"', '"*"', '"*"']),
        (lambda x: cs.split(x, [1, 2], 1), ['"*"'], ['"*"', '"*"', '"*"']),
    ),
    # -- broadcast_to ----------------------------------------------------------------------------
    *table(
        "broadcast_to",
        "static",
        (lambda x: mp.broadcast_to(x, [2, 3, 4]), ["[3, 1]"], "[2, 3, 4]"),
        (lambda x: mp.broadcast_to(x, [0]), ["[1]"], "[0]"),
        (lambda x: mp.broadcast_to(x, [2, 2]), ["[]"], "[2, 2]"),
        (lambda x: mp.broadcast_to(x, [4]), ["[4]"], "[4]"),
    ),
    *table(
        "broadcast_to",
        "symbolic",
        (lambda x: mp.broadcast_to(x, ["b", "n", 4]), ['["n", 1]'], '["b", "n", 4]'),
        (lambda x: mp.broadcast_to(x, ["n"]), ["[1]"], '["n"]'),
        (lambda x: mp.broadcast_to(x, ["m"]), ['["n"]'], '["m"]'),
        (lambda x: mp.broadcast_to(x, ["n + 1", 4]), ["[4]"], '["n + 1", 4]'),
    ),
    *table(
        "broadcast_to",
        "unknown-dim",
        (lambda x: mp.broadcast_to(x, [3, 5]), ['["?", 1]'], "[3, 5]"),
        (lambda x: mp.broadcast_to(x, ["?", 4]), ["[4]"], '["?", 4]'),
    ),
    *table("broadcast_to", "unknown-rank", (lambda x: mp.broadcast_to(x, ["n", 4]), ['"*"'], '["n", 4]')),
    # -- tile ------------------------------------------------------------------------------------
    *table(
        "tile",
        "static",
        (lambda x: mp.tile(x, [2, 2]), ["[2, 3]"], "[4, 6]"),
        (lambda x: mp.tile(x, [3]), ["[2, 3]"], "[2, 9]"),
        (lambda x: mp.tile(x, [2, 1, 1]), ["[2, 3]"], "[2, 2, 3]"),
        (lambda x: mp.tile(x, [0, 1]), ["[2, 3]"], "[0, 3]"),
        (lambda x: mp.tile(x, [3]), ["[]"], "[3]"),
        (lambda x: mp.tile(x, []), ["[2]"], "[2]"),
    ),
    *table(
        "tile",
        "symbolic",
        (lambda x: mp.tile(x, [2, 1]), ['["n", 4]'], '["2 * n", 4]'),
        (lambda x: mp.tile(x, [3]), ['["n", "m"]'], '["n", "3 * m"]'),
        (lambda x: mp.tile(x, [2]), ['["n + 1"]'], '["2 * n + 2"]'),
    ),
    *table("tile", "unknown-dim", (lambda x: mp.tile(x, [2, 2]), ['["?", 4]'], '["?", 8]')),
    *table("tile", "unknown-rank", (lambda x: mp.tile(x, [2, 2]), ['"*"'], '"*"')),
    # -- repeat ----------------------------------------------------------------------------------
    *table(
        "repeat",
        "static",
        (lambda x: mp.repeat(x, 2, 0), ["[2, 3]"], "[4, 3]"),
        (lambda x: mp.repeat(x, 2, -1), ["[2, 3]"], "[2, 6]"),
        (lambda x: mp.repeat(x, 2), ["[2, 3]"], "[12]"),
        (lambda x: mp.repeat(x, 0, 0), ["[2, 3]"], "[0, 3]"),
        (lambda x: mp.repeat(x, 1, 1), ["[2, 3]"], "[2, 3]"),
    ),
    *table(
        "repeat",
        "symbolic",
        (lambda x: mp.repeat(x, 3, 0), ['["n", 4]'], '["3 * n", 4]'),
        (lambda x: mp.repeat(x, 3), ['["n", 4]'], '["12 * n"]'),
    ),
    *table(
        "repeat",
        "unknown-dim",
        (lambda x: mp.repeat(x, 2, 0), ['["?", 4]'], '["?", 4]'),
        (lambda x: mp.repeat(x, 2, 1), ['["?", 4]'], '["?", 8]'),
        (lambda x: mp.repeat(x, 2), ['["?", 4]'], '["?"]'),
    ),
    *table(
        "repeat",
        "unknown-rank",
        (lambda x: mp.repeat(x, 2, 0), ['"*"'], '"*"'),
        (lambda x: mp.repeat(x, 2), ['"*"'], '["?"]'),
    ),
    # -- pad -------------------------------------------------------------------------------------
    *table(
        "pad",
        "static",
        (lambda x: pd.pad(x, [1, 1, 0, 2]), ["[2, 3]"], "[4, 5]"),
        (lambda x: pd.pad(x, [2, 3]), ["[0]"], "[5]"),
        (lambda x: pd.pad(x, [-1, -1, 0, 0]), ["[4, 4]"], "[2, 4]"),
        (lambda x: pd.pad(x, [-1, -1]), ["[2]"], "[0]"),
        (lambda x: pd.pad(x, [1, 0], "edge"), ["[1]"], "[2]"),
        (lambda x: pd.pad(x, []), ["[]"], "[]"),
    ),
    *table(
        "pad",
        "symbolic",
        (lambda x: pd.pad(x, [1, 2, 0, 0]), ['["n", 4]'], '["n + 3", 4]'),
        (lambda x: pd.pad(x, [0, 0, 2, 2], "reflect"), ['["b", "s"]'], '["b", "s + 4"]'),
        (lambda x: pd.pad(x, [-1, 0]), ['["n + 1"]'], '["n"]'),
        # cropping a symbolic dim: clamped at 0 (too small an n fails at run time)
        (lambda x: pd.pad(x, [-1, 0]), ['["n"]'], '["max(n - 1, 0)"]'),
    ),
    *table("pad", "unknown-dim", (lambda x: pd.pad(x, [1, 1, 1, 1]), ['["?", 4]'], '["?", 6]')),
    *table(
        "pad",
        "unknown-rank",
        (lambda x: pd.pad(x, [1, 1, 2, 2]), ['"*"'], '["?", "?"]'),
        (lambda x: pd.pad(x, []), ['"*"'], '"*"'),
    ),
    # -- pad_runtime: widths read at run time, so every result dim is unknown ------------------------
    *table(
        "pad_runtime",
        "static",
        (lambda x, p, v: pd.pad_runtime(x, p, v), ["[2, 3]", I64("[4]"), "[]"], '["?", "?"]'),
    ),
    *table(
        "pad_runtime",
        "symbolic",
        (lambda x, p, v: pd.pad_runtime(x, p, v, "reflect"), ['["n", 4]', I64("[4]"), "[]"], '["?", "?"]'),
    ),
    *table(
        "pad_runtime",
        "unknown-dim",
        (lambda x, p, v: pd.pad_runtime(x, p, v), ['["?"]', I64("[2]"), "[]"], '["?"]'),
    ),
    *table(
        "pad_runtime",
        "unknown-rank",
        (lambda x, p, v: pd.pad_runtime(x, p, v), ['"*"', I64('["k"]'), "[]"], '"*"'),
    ),
    # -- tril / triu -----------------------------------------------------------------------------
    *[
        p
        for name, fn in (("tril", mp.tril), ("triu", mp.triu))
        for p in [
            *table(
                name,
                "static",
                (lambda x, fn=fn: fn(x), ["[3, 3]"], "[3, 3]"),
                (lambda x, fn=fn: fn(x, -1), ["[2, 3, 4]"], "[2, 3, 4]"),
                (lambda x, fn=fn: fn(x, 5), ["[1, 5]"], "[1, 5]"),
                (lambda x, fn=fn: fn(x), ["[0, 0]"], "[0, 0]"),
                (lambda x, fn=fn: fn(x), [T("[2, 2]", "i32")], T("[2, 2]", "i32")),
            ),
            *table(
                name,
                "symbolic",
                (lambda x, fn=fn: fn(x), ['["s", "s"]'], '["s", "s"]'),
                (lambda x, fn=fn: fn(x, 1), ['["b", "s", "t + 1"]'], '["b", "s", "t + 1"]'),
            ),
            *table(name, "unknown-dim", (lambda x, fn=fn: fn(x), ['["?", "s"]'], '["?", "s"]')),
            *table(name, "unknown-rank", (lambda x, fn=fn: fn(x), ['"*"'], '"*"')),
        ]
    ],
    # -- strided_slice ---------------------------------------------------------------------------
    *table(
        "strided_slice",
        "static",
        (lambda x: ix.strided_slice(x, [0], [1], [-1]), ["[10]"], "[8]"),
        (lambda x: ix.strided_slice(x, [0], [2], [100], [3]), ["[10]"], "[3]"),
        (lambda x: ix.strided_slice(x, [0], [-1], [-100], [-1]), ["[10]"], "[10]"),
        (lambda x: ix.strided_slice(x, [0], [8], [2], [-2]), ["[10]"], "[3]"),
        (lambda x: ix.strided_slice(x, [0], [-20], [3]), ["[10]"], "[3]"),
        (lambda x: ix.strided_slice(x, [0], [5], [2]), ["[10]"], "[0]"),
        (lambda x: ix.strided_slice(x, [0], [0], [BIG]), ["[10]"], "[10]"),
        (lambda x: ix.strided_slice(x, [0], [0], [5]), ["[0]"], "[0]"),
        (lambda x: ix.strided_slice(x, [0], [0], [1]), ["[1]"], "[1]"),
        (lambda x: ix.strided_slice(x, [0, 1], [1, 0], [3, 6], [1, 2]), ["[4, 6]"], "[2, 3]"),
        (lambda x: ix.strided_slice(x, [-1], [0], [2]), ["[4, 6]"], "[4, 2]"),
    ),
    *table(
        "strided_slice",
        "symbolic",
        # x[1:-1] of n elements: n - 2, clamped at 0 for n < 2
        (lambda x: ix.strided_slice(x, [0], [1], [-1]), ['["n"]'], '["max(n - 2, 0)"]'),
        (lambda x: ix.strided_slice(x, [0], [2], [-2]), ['["n + 4"]'], '["n"]'),
        (lambda x: ix.strided_slice(x, [0], [0], ["m"]), ['["n"]'], '["min(m, n)"]'),
        (lambda x: ix.strided_slice(x, [0], [-3], [BIG]), ['["n"]'], '["min(n, 3)"]'),
        (lambda x: ix.strided_slice(x, [0], [0], [BIG], [2]), ['["n"]'], '["(n + 1) floordiv 2"]'),
        (lambda x: ix.strided_slice(x, [0], [-1], [-BIG], [-1]), ['["n"]'], '["n"]'),
        (lambda x: ix.strided_slice(x, [0], [2], [5]), ['["n"]'], '["max(min(n - 2, 3), 0)"]'),
        (lambda x: ix.strided_slice(x, [1], [0], [4]), ['["n", 8]'], '["n", 4]'),
        (lambda x: ix.strided_slice(x, [1], [1], ["n - 1"]), ['["b", "n"]'], '["b", "max(n - 2, 0)"]'),
    ),
    *table(
        "strided_slice",
        "unknown-dim",
        (lambda x: ix.strided_slice(x, [1], [0], [4]), ['["?", 8]'], '["?", 4]'),
        (lambda x: ix.strided_slice(x, [0], [0], [4]), ['["?", 8]'], '["?", 8]'),
        (lambda x: ix.strided_slice(x, [0], ["?"], [4]), ["[8]"], '["?"]'),
    ),
    *table("strided_slice", "unknown-rank", (lambda x: ix.strided_slice(x, [0], [1], [3]), ['"*"'], '"*"')),
    # -- take ------------------------------------------------------------------------------------
    *table(
        "take",
        "static",
        (lambda x, i: ix.take(x, i, 0), ["[5, 4]", I64("[3]")], "[3, 4]"),
        (lambda x, i: ix.take(x, i, 1), ["[5, 4]", I64("[2, 2]")], "[5, 2, 2]"),
        (lambda x, i: ix.take(x, i, 0), ["[5, 4]", I64("[]")], "[4]"),
        (lambda x, i: ix.take(x, i, -1), ["[5, 4]", I64("[0]")], "[5, 0]"),
        (lambda x, i: ix.take(x, i, 0), ["[5]", T("[1]", "i32")], "[1]"),
    ),
    *table(
        "take",
        "symbolic",
        (lambda x, i: ix.take(x, i, 0), ["[50257, 768]", I64('["b", "s"]')], '["b", "s", 768]'),
        (lambda x, i: ix.take(x, i, 0), ['["v", "d"]', I64('["n"]')], '["n", "d"]'),
        (lambda x, i: ix.take(x, i, -1), ['["v", "d"]', I64('["b", "s"]')], '["v", "b", "s"]'),
    ),
    *table("take", "unknown-dim", (lambda x, i: ix.take(x, i, 0), ['[5, "?"]', I64('["?"]')], '["?", "?"]')),
    *table(
        "take",
        "unknown-rank",
        (lambda x, i: ix.take(x, i, 0), ['"*"', I64("[3]")], '"*"'),
        (lambda x, i: ix.take(x, i, 0), ["[5, 4]", I64('"*"')], '"*"'),
        (lambda x, i: ix.take(x, i, 0), ["[5, 4]", T('["n"]', "none")], '["n", 4]'),
    ),
    # -- index_range: (min, max) of any index tensor, two i64 scalars ---------------------------
    *table("index_range", "static", (lambda i: ix.index_range(i), [I64("[3, 2]")], [I64("[]"), I64("[]")])),
    *table(
        "index_range", "symbolic", (lambda i: ix.index_range(i), [I64('["b", "s"]')], [I64("[]"), I64("[]")])
    ),
    *table(
        "index_range",
        "unknown-dim",
        (lambda i: ix.index_range(i), [T('["?"]', "i32")], [I64("[]"), I64("[]")]),
    ),
    *table(
        "index_range", "unknown-rank", (lambda i: ix.index_range(i), [I64('"*"')], [I64("[]"), I64("[]")])
    ),
    # -- gather_elements -------------------------------------------------------------------------
    *table(
        "gather_elements",
        "static",
        (lambda x, i: ix.gather_elements(x, i, 1), ["[3, 4]", I64("[3, 2]")], "[3, 2]"),
        (lambda x, i: ix.gather_elements(x, i, 0), ["[3, 4]", I64("[1, 4]")], "[1, 4]"),
        # along the axis the indices may be longer than x
        (lambda x, i: ix.gather_elements(x, i, 0), ["[3, 4]", I64("[5, 4]")], "[5, 4]"),
        (lambda x, i: ix.gather_elements(x, i, -1), ["[3, 4]", I64("[2, 0]")], "[2, 0]"),
        (lambda x, i: ix.gather_elements(x, i, 0), [T("[3]", "f16"), I64("[1]")], T("[1]", "f16")),
    ),
    *table(
        "gather_elements",
        "symbolic",
        (lambda x, i: ix.gather_elements(x, i, 1), ['["n", 4]', I64('["n", 2]')], '["n", 2]'),
        (lambda x, i: ix.gather_elements(x, i, 0), ['["n", "m"]', I64('["k", "m"]')], '["k", "m"]'),
    ),
    *table(
        "gather_elements",
        "unknown-dim",
        (lambda x, i: ix.gather_elements(x, i, 1), ['["n", 4]', I64('["?", 2]')], '["?", 2]'),
    ),
    *table(
        "gather_elements",
        "unknown-rank",
        (lambda x, i: ix.gather_elements(x, i, 0), ['"*"', I64("[2, 3]")], "[2, 3]"),
        (lambda x, i: ix.gather_elements(x, i, 0), ["[2, 3]", I64('"*"')], '"*"'),
    ),
    # -- scatter_elements ------------------------------------------------------------------------
    *table(
        "scatter_elements",
        "static",
        (lambda x, i, u: ix.scatter_elements(x, i, u, 0), ["[3, 4]", I64("[2, 4]"), "[2, 4]"], "[3, 4]"),
        (lambda x, i, u: ix.scatter_elements(x, i, u, 1), ["[3, 4]", I64("[3, 1]"), "[3, 1]"], "[3, 4]"),
        (lambda x, i, u: ix.scatter_elements(x, i, u, 0), ["[3, 4]", I64("[0, 4]"), "[0, 4]"], "[3, 4]"),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            [T("[3]", "none"), I64("[1]"), T("[1]", "f16")],
            T("[3]", "f16"),
        ),
    ),
    *table(
        "scatter_elements",
        "symbolic",
        (lambda x, i, u: ix.scatter_elements(x, i, u, 0), ['["n", 4]', I64("[2, 4]"), "[2, 4]"], '["n", 4]'),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, -2),
            ['["n", "m"]', I64('["k", "m"]'), '["k", "m"]'],
            '["n", "m"]',
        ),
    ),
    *table(
        "scatter_elements",
        "unknown-dim",
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            ['["?", 4]', I64('["?", 4]'), "[2, 4]"],
            '["?", 4]',
        ),
    ),
    *table(
        "scatter_elements",
        "unknown-rank",
        (lambda x, i, u: ix.scatter_elements(x, i, u, 0), ['"*"', I64("[2]"), "[2]"], '"*"'),
        (lambda x, i, u: ix.scatter_elements(x, i, u, 0), ["[3]", I64('"*"'), '"*"'], "[3]"),
    ),
]


# Each row: (builder, operand types, regex the ShapeError must match after "relax.<op>: ").
ERRORS = [
    *table(
        "reshape",
        "error",
        (
            lambda x: mp.reshape(x, [5, 5]),
            ["[6, 4]"],
            r"cannot reshape \[6, 4\] \(24 elements\) to \[5, 5\] \(25 elements\)",
        ),
        (
            lambda x: mp.reshape(x, [5, -1]),
            ["[6, 4]"],
            r"cannot reshape \[6, 4\] \(24 elements\) to \[5, -1\]",
        ),
        (lambda x: mp.reshape(x, [-1, -1]), ['["n", 4]'], r"shape \[-1, -1\] has more than one -1"),
        (lambda x: mp.reshape(x, [-2, 12]), ["[6, 4]"], "shape entry -2 at position 0 is negative"),
        (lambda x: mp.reshape(x, []), ["[2]"], r"cannot reshape \[2\] \(2 elements\) to \[\] \(1 elements\)"),
        (
            lambda x: mp.reshape(x, [0, 0, 0]),
            ['["n", 4]'],
            r"shape entry 0 at position 2 copies an input dim that does not exist in \[\"n\", 4\]",
        ),
        (lambda x: mp.reshape(x, [0, -1]), ["[0, 4]"], "cannot infer -1 in .*: the other dims multiply to 0"),
        (lambda x: mp.reshape(x, ["n +", 4]), ["[6, 4]"], "cannot parse dim expression"),
    ),
    *table(
        "permute_dims",
        "error",
        (lambda x: mp.permute_dims(x, [0, 1]), ['["b", "s", 64]'], r"axes \[0, 1\] do not match the rank 3"),
        (lambda x: mp.permute_dims(x, [0, 0, 1]), ['["b", "s", 64]'], r"axes \[0, 0, 1\] repeat an axis"),
        (lambda x: mp.permute_dims(x, [0, 1, 3]), ["[2, 3, 4]"], "axes 3 is out of range for rank 3"),
        (lambda x: mp.permute_dims(x, [0, 0]), ['"*"'], r"axes \[0, 0\] repeat an axis"),
        (lambda x: mp.permute_dims(x), ['!relax.shape<["n"]>'], "operand 'x' must be a tensor"),
    ),
    *table(
        "expand_dims",
        "error",
        (lambda x: mp.expand_dims(x, [3]), ["[2, 3]"], "axes 3 is out of range for rank 3"),
        (lambda x: mp.expand_dims(x, [-4]), ["[2, 3]"], "axes -4 is out of range for rank 3"),
        (lambda x: mp.expand_dims(x, [-1, 3]), ["[2, 3]"], r"axes \[-1, 3\] repeat an axis"),
    ),
    *table(
        "squeeze",
        "error",
        (
            lambda x: mp.squeeze(x, [0]),
            ["[3, 4]"],
            r"cannot squeeze axis 0 of \[3, 4\]: its size is 3, not 1",
        ),
        (
            lambda x: mp.squeeze(x, [-1]),
            ['["n", 0]'],
            r"cannot squeeze axis 1 of \[\"n\", 0\]: its size is 0",
        ),
        (lambda x: mp.squeeze(x, [2]), ["[3, 1]"], "axes 2 is out of range for rank 2"),
        (lambda x: mp.squeeze(x, [0, -2]), ["[1, 1]"], r"axes \[0, -2\] repeat an axis"),
    ),
    *table(
        "flatten",
        "error",
        (lambda x: mp.flatten(x, 2, 1), ["[2, 3, 4]"], "start_axis 2 is after end_axis 1"),
        (lambda x: mp.flatten(x, 3), ['["b", 3, 4]'], "start_axis 3 is out of range for rank 3"),
        (lambda x: mp.flatten(x, 0, -4), ["[2, 3, 4]"], "end_axis -4 is out of range for rank 3"),
        (lambda x: mp.flatten(x, 1), ["[]"], "start_axis 1 is out of range for rank 1"),
    ),
    *table(
        "concat",
        "error",
        (
            lambda x, y: cs.concat([x, y], 0),
            ['["n", 4]', '["m", 5]'],
            r"dim 1 of xs\[0\] and xs\[1\] differ: 4 vs 5",
        ),
        (
            lambda x, y, z: cs.concat([x, y, z], 0),
            ['["n", 4]', '"*"', '["m", 5]'],
            r"dim 1 of xs\[0\] and xs\[2\] differ: 4 vs 5",
        ),
        (lambda x, y: cs.concat([x, y], 0), ["[2]", "[2, 3]"], r"operands have different ranks \[1, 2\]"),
        (
            lambda x, y: cs.concat([x, y], 0),
            ["[2]", T("[2]", "i32")],
            r"operands 'xs\[0\]' \(f32\) and 'xs\[1\]' \(i32\) have different dtypes",
        ),
        (lambda x, y: cs.concat([x, y], 2), ['["n", 4]', '["m", 4]'], "axis 2 is out of range for rank 2"),
        (lambda x, y: cs.concat([x, y], -3), ['["n", 4]', '"*"'], "axis -3 is out of range for rank 2"),
        (lambda x, y: cs.concat([x, y], 0), ["[]", "[]"], "cannot concatenate scalars"),
        (lambda: cs.concat([], 0), [], "needs at least one operand"),
    ),
    *table(
        "split",
        "error",
        (lambda x: cs.split(x, 2), ["[7]"], "dim 0 of size 7 does not split into 2 equal sections"),
        (lambda x: cs.split(x, 4, 1), ['["n", 6]'], "dim 1 of size 6 does not split into 4 equal sections"),
        (
            lambda x: cs.split(x, [3, 1]),
            ["[4]"],
            r"split indices \[3, 1\] must be non-negative and increasing",
        ),
        (lambda x: cs.split(x, [-1]), ["[4]"], r"split indices \[-1\] must be non-negative and increasing"),
        (lambda x: cs.split(x, []), ["[4]"], "give split indices or a positive number of sections"),
        (lambda x: cs.split(x, 0), ["[4]"], "give split indices or a positive number of sections"),
        (lambda x: cs.split(x, 2, 1), ['["n"]'], "axis 1 is out of range for rank 1"),
    ),
    *table(
        "broadcast_to",
        "error",
        (
            lambda x: mp.broadcast_to(x, ["b", 4, 4]),
            ["[3, 1]"],
            r"cannot broadcast \[3, 1\] to \[\"b\", 4, 4\] at dim -2",
        ),
        (lambda x: mp.broadcast_to(x, [0]), ["[2]"], r"cannot broadcast \[2\] to \[0\] at dim -1"),
        (lambda x: mp.broadcast_to(x, [3]), ['["n", 3]'], r"cannot broadcast rank 2 \[\"n\", 3\] to rank 1"),
        (lambda x: mp.broadcast_to(x, [-1, 4]), ["[4]"], "shape entry -1 at position 0 is negative"),
    ),
    *table(
        "tile",
        "error",
        (lambda x: mp.tile(x, [2, -1]), ["[2, 3]"], r"repeats \[2, -1\] must be non-negative"),
        (lambda x: mp.tile(x, [-1]), ['"*"'], r"repeats \[-1\] must be non-negative"),
    ),
    *table(
        "repeat",
        "error",
        (lambda x: mp.repeat(x, -1, 0), ['["n"]'], "repeats -1 must be non-negative"),
        (lambda x: mp.repeat(x, 2, 2), ["[2, 3]"], "axis 2 is out of range for rank 2"),
    ),
    *table(
        "pad",
        "error",
        (lambda x: pd.pad(x, [1, 1], "symmetric"), ["[2]"], "unknown pad mode 'symmetric'"),
        (lambda x: pd.pad(x, [1, 1]), ['["n", 4]'], "pad_width needs 4 entries for rank 2, got 2"),
        (lambda x: pd.pad(x, [1, 2, 0]), ['"*"'], "pad_width needs a before and an after entry per dim"),
        (
            lambda x: pd.pad(x, [-3, 0, 0, 0]),
            ["[2, 4]"],
            "pad_width -3, 0 of dim 0 removes more than its size 2",
        ),
    ),
    *table(
        "pad_runtime",
        "error",
        (lambda x, p, v: pd.pad_runtime(x, p, v, "symmetric"), ["[2]", I64("[2]"), "[]"], "unknown pad mode"),
        (
            lambda x, p, v: pd.pad_runtime(x, p, v),
            ['["n", 4]', I64("[2]"), "[]"],
            "operand 'pads' must be an i64 tensor of 4",
        ),
        (
            lambda x, p, v: pd.pad_runtime(x, p, v),
            ["[2]", I64("[2]"), "[3]"],
            "operand 'value' must be a 0-d tensor of f32",
        ),
    ),
    *[
        p
        for name, fn in (("tril", mp.tril), ("triu", mp.triu))
        for p in table(
            name,
            "error",
            (lambda x, fn=fn: fn(x), ['["s"]'], r"operand 'x' must have rank >= 2, got \[\"s\"\]"),
            (lambda x, fn=fn: fn(x), ["[]"], r"operand 'x' must have rank >= 2, got \[\]"),
        )
    ],
    *table(
        "strided_slice",
        "error",
        (lambda x: ix.strided_slice(x, [0], [0], [4], [0]), ["[8]"], "stride of axis 0 is 0"),
        (
            lambda x: ix.strided_slice(x, [0, 1], [0], [4]),
            ["[8, 8]"],
            "axes, begin, end and strides need equal lengths, got 2, 1, 1, 2",
        ),
        (lambda x: ix.strided_slice(x, [2], [0], [4]), ['["n", 8]'], "axes 2 is out of range for rank 2"),
        (
            lambda x: ix.strided_slice(x, [0, -2], [0, 0], [1, 1]),
            ["[8, 8]"],
            r"axes \[0, -2\] repeat an axis",
        ),
        (lambda x: ix.strided_slice(x, [0], ["n +"], [1]), ["[8]"], "cannot parse dim expression"),
    ),
    *table(
        "index_range",
        "error",
        (
            lambda i: ix.index_range(i),
            ["[3]"],
            "operand 'indices' must have an integer dtype \\(i32 or i64\\), got f32",
        ),
    ),
    *table(
        "take",
        "error",
        (
            lambda x, i: ix.take(x, i, 0),
            ["[5, 4]", '["n"]'],
            "operand 'indices' must have an integer dtype \\(i32 or i64\\), got f32",
        ),
        (lambda x, i: ix.take(x, i, 2), ["[5, 4]", I64("[3]")], "axis 2 is out of range for rank 2"),
        (lambda x, i: ix.take(x, i, -3), ["[5, 4]", I64('"*"')], "axis -3 is out of range for rank 2"),
        (lambda x, i: ix.take(x, i, 0), ["[]", I64("[3]")], "axis 0 is out of range for rank 0"),
        (lambda x, i: ix.take(x, i, 0), ["[5]", '!relax.shape<["n"]>'], "operand 'indices' must be a tensor"),
    ),
    *table(
        "gather_elements",
        "error",
        (
            lambda x, i: ix.gather_elements(x, i, 0),
            ["[3, 4]", I64("[3]")],
            r"'x' \[3, 4\] and 'indices' \[3\] must have the same rank",
        ),
        (
            lambda x, i: ix.gather_elements(x, i, 1),
            ["[3, 4]", I64("[5, 2]")],
            r"dim 0 of 'indices' \[5, 2\] is 5, larger than 3 of 'x' \[3, 4\]",
        ),
        (
            lambda x, i: ix.gather_elements(x, i, 1),
            ['["n", 4]', I64('["n + 1", 2]')],
            r"dim 0 of 'indices' \[\"n \+ 1\", 2\] is n \+ 1, larger than n of 'x'",
        ),
        (
            lambda x, i: ix.gather_elements(x, i, 2),
            ["[3, 4]", I64("[3, 4]")],
            "axis 2 is out of range for rank 2",
        ),
        (
            lambda x, i: ix.gather_elements(x, i, 0),
            ["[3]", T("[3]", "f16")],
            "operand 'indices' must have an integer dtype",
        ),
    ),
    *table(
        "scatter_elements",
        "error",
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            ['["n", 4]', I64("[2, 4]"), "[2, 3]"],
            r"dim 1 of 'indices' and 'updates' differ: 4 vs 3",
        ),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            ["[3, 4]", I64("[2, 4]"), T("[2, 4]", "i32")],
            r"operands 'x' \(f32\) and 'updates' \(i32\) have different dtypes",
        ),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            ["[3, 4]", I64("[2]"), "[2]"],
            r"'x' \[3, 4\] and 'indices' \[2\] must have the same rank",
        ),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, 0),
            ["[3, 4]", I64("[2, 5]"), "[2, 5]"],
            r"dim 1 of 'indices' \[2, 5\] is 5, larger than 4 of 'x' \[3, 4\]",
        ),
        (
            lambda x, i, u: ix.scatter_elements(x, i, u, -3),
            ["[3, 4]", I64("[2, 4]"), "[2, 4]"],
            "axis -3 is out of range for rank 2",
        ),
    ),
]


def _ty(v: ir.Value) -> str:
    return str(relax_type(v.type))


@pytest.mark.parametrize("build, operands, expected", OK)
def test_deduce(params, build: Callable, operands: list[str], expected: str | list[str]) -> None:
    args = params(*[T(o) for o in operands])
    out = build(*args)
    if isinstance(expected, list):
        assert [_ty(v) for v in out] == [T(e) for e in expected]
    else:
        assert _ty(out) == T(expected)


@pytest.mark.parametrize("build, operands, message", ERRORS)
def test_deduce_error(request, params, build: Callable, operands: list[str], message: str) -> None:
    op = request.node.callspec.id.rsplit("-", 2)[0]
    args = params(*[T(o) for o in operands]) if operands else []
    with pytest.raises(ShapeError, match=rf"test_deduce_manipulate\.py:\d+: relax\.{op}: {message}"):
        build(*args)


def test_every_op_has_all_five_cases() -> None:
    """Every op of manipulate.py, concat.py, pad.py and index.py is covered at all five kinds of operands."""
    kinds: dict[str, set[str]] = {}
    for p in OK + ERRORS:
        op, kind = p.id.split("-", 1)
        kinds.setdefault(op, set()).add(kind.rsplit("-", 1)[0])
    ops = {cls.NAME for mod in (mp, cs, pd, ix) for cls in vars(mod).values() if hasattr(cls, "OPERATION_NAME")}
    assert set(kinds) == ops
    for op in ops:
        assert kinds[op] == {"static", "symbolic", "unknown-dim", "unknown-rank", "error"}, op
