"""Each op's docstring IR example as a standalone program (``@main`` applying the op to its parameters).

Op docstrings carry an IR example (CONVENTIONS.md); ``example_program(name)`` turns it into a module, so
checks that must cover every op (the CUDA target's PTX test, ``bench/gpu_check.py``) need no list of their
own: a new op is covered by its docstring.
"""

from __future__ import annotations

import re

from relax_mlir.dialects.registry import OPS

# ops whose example is not a standalone program: calls of a named kernel or library function (every other
# op's lowering exercises them), a cast from unknown rank, relax.condition (its i1 feeds scf.if/scf.while,
# test_control_flow.py runs it) and relax.call (its callee is another function: test_calls.py)
NOT_STANDALONE = frozenset({"call_tir", "call_dps_library", "match_cast", "condition", "call"})


def _split(types: str) -> list[str]:
    """Split a comma-separated type list at the top level."""
    out, depth, current = [], 0, ""
    for ch in types:
        depth += ch in "<[(" and 1 or 0
        depth -= ch in ">])" and 1 or 0
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    return [*out, current.strip()] if current.strip() else out


def example_program(name: str) -> str:
    """``@main`` running op ``name``'s docstring IR example on its parameters.

    A leading i8 tensor parameter defines every symbol the example's types use, so examples whose symbols
    come from prim or shape values (``arange``, ``full``) are well-formed programs too."""
    doc = OPS[name].__doc__ or ""
    match = re.search(r"``(%[^`]*)``", doc)
    if match is None:
        raise ValueError(f'relax.{name}\'s docstring has no IR example (``%y = "relax.{name}"(...) : ...``)')
    text = " ".join(match.group(1).split())
    parts = re.match(r'(.*?)=\s*"relax\.(\w+)"\((.*?)\)\s*(\{.*\})?\s*:\s*\((.*)\)\s*->\s*(.*)$', text)
    if parts is None or parts.group(2) != name:
        raise ValueError(f"relax.{name}: cannot read the IR example {text!r}")
    _, _, operands, attrs, ins, outs = parts.groups()
    ins_t = _split(ins)
    outs = outs.strip()
    outs_t = _split(outs[1:-1] if outs.startswith("(") else outs)
    dims = " ".join(re.findall(r'"([^"]*)"', ins + outs))
    symbols = sorted(set(re.findall(r"[A-Za-z_]\w*", dims)) - {"floordiv", "mod", "ceildiv", "min", "max"})
    params = [f"%a{i}: {t}" for i, t in enumerate(ins_t)]
    if symbols:
        params.insert(0, "%syms: !relax.tensor<[" + ", ".join(f'"{s}"' for s in symbols) + "], i8>")
    params = ", ".join(params)
    args = ", ".join(f"%a{i}" for i in range(len(_split(operands)) if operands.strip() else 0))
    results = [f"%r#{i}" for i in range(len(outs_t))] if len(outs_t) > 1 else ["%r"]
    lhs = f"%r:{len(outs_t)}" if len(outs_t) > 1 else "%r"
    return (
        f"func.func @main({params}) -> ({', '.join(outs_t)}) {{\n"
        f'  {lhs} = "relax.{name}"({args}) {attrs or ""} : ({", ".join(ins_t)}) -> ({", ".join(outs_t)})\n'
        f"  return {', '.join(results)} : {', '.join(outs_t)}\n}}\n"
    )
