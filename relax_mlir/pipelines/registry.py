"""The pass registry shared by relax-opt and compile(), and the pipeline-string parser.

MLIR 22 cannot register a Python pass by name in its own pipeline parser, so pipelines are
parsed here: names registered with ``@register_pass`` become Python passes, every other
element is handed to MLIR's parser as text (upstream passes and nestings like ``func.func(cse)``).
"""

from __future__ import annotations

import difflib
import functools
import re
import subprocess
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlir import ir, passmanager

from relax_mlir.errors import PassError, RelaxError
from relax_mlir.transforms.registry import PASSES, PassFailed, PassInfo, register_pass  # noqa: F401  (re-exported)

PIPELINES: dict[str, tuple[str, str]] = {}  # name -> (pipeline text, one-line summary)
# an upstream pass that aborts the process on IR a Python pass can recognize, and that pass (it runs first)
GUARDED_BY = ("ownership-based-buffer-deallocation", "relax-check-deallocation-order")


def register_pipeline(name: str, pipeline: str | list[PipelineElement], summary: str) -> None:
    """Register a named pipeline (text or elements), usable wherever a pass name is (``relax-opt --cpu``,
    compile())."""
    text = pipeline if isinstance(pipeline, str) else ",".join(e.text() for e in pipeline)
    PIPELINES[name] = (text, summary)


# ----------------------------------------------------------------------------------------------
# Pipeline text


@dataclass
class PipelineElement:
    name: str
    options: str = ""  # text inside {...}
    nested: list[PipelineElement] | None = None  # elements inside (...), for op-anchored nestings

    def text(self) -> str:
        out = self.name + (f"{{{self.options}}}" if self.options else "")
        if self.nested is not None:
            out += "(" + ",".join(e.text() for e in self.nested) + ")"
        return out


def parse_pipeline(text: str) -> list[PipelineElement]:
    """Parse ``builtin.module(a, b{x=1}, func.func(c))`` (or a bare ``a, b``) into elements."""
    parser = _PipelineParser(text)
    elements = parser.parse_list()
    if parser.pos != len(text):
        raise parser.error("unexpected text")
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].nested is not None:
        return elements[0].nested
    return elements


class _PipelineParser:
    _NAME = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*")

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str) -> PassError:
        return PassError(f"invalid pass pipeline '{self.text}': {what} at column {self.pos + 1}")

    def parse_list(self) -> list[PipelineElement]:
        out = [self.parse_element()]
        while self.pos < len(self.text) and self.text[self.pos] == ",":
            self.pos += 1
            out.append(self.parse_element())
        return out

    def parse_element(self) -> PipelineElement:
        m = self._NAME.match(self.text, self.pos)
        if not m:
            raise self.error("expected a pass name")
        self.pos = m.end()
        element = PipelineElement(m.group(1))
        if self.peek("{"):
            element.options = self.parse_braced()
        if self.peek("("):
            self.pos += 1
            element.nested = [] if self.peek(")") else self.parse_list()
            if not self.peek(")"):
                raise self.error("expected ')'")
            self.pos += 1
        self.skip_ws()
        return element

    def peek(self, c: str) -> bool:
        self.skip_ws()
        return self.pos < len(self.text) and self.text[self.pos] == c

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def parse_braced(self) -> str:
        depth, start = 0, self.pos
        while self.pos < len(self.text):
            c = self.text[self.pos]
            depth += c == "{"
            depth -= c == "}"
            self.pos += 1
            if depth == 0:
                return self.text[start + 1 : self.pos - 1].strip()
        raise self.error("unbalanced '{'")


def parse_options(pass_name: str, text: str) -> dict[str, str]:
    """``a=1 b=x`` (space separated, as in MLIR) into a dict."""
    out = {}
    for item in text.split():
        key, eq, value = item.partition("=")
        if not eq:
            raise PassError(f"option '{item}' of pass '{pass_name}' must be written name=value")
        out[key] = value
    return out


# ----------------------------------------------------------------------------------------------
# Building pass managers


def uses_pass(elements: str | list[PipelineElement], name: str) -> bool:
    """Whether pipeline ``elements`` (or text) runs pass ``name``, at any nesting or inside a named
    pipeline."""
    for element in parse_pipeline(elements) if isinstance(elements, str) else elements:
        if element.name == name:
            return True
        if element.name in PIPELINES and element.nested is None:
            if uses_pass(PIPELINES[element.name][0], name):
                return True
        elif element.nested is not None and uses_pass(element.nested, name):
            return True
    return False


def add_pipeline(pm: passmanager.PassManager, elements: list[PipelineElement]) -> None:
    """Add parsed pipeline elements to a module-anchored pass manager."""
    for element in elements:
        if element.name in PIPELINES and element.nested is None:
            if element.options:
                raise PassError(f"pipeline '{element.name}' takes no options")
            add_pipeline(pm, parse_pipeline(PIPELINES[element.name][0]))
            continue
        info = PASSES.get(element.name)
        if info is not None:
            if element.nested is not None:
                raise PassError(f"pass '{element.name}' takes no nested pipeline")
            pm.add(
                _python_pass(info, info.instantiate(parse_options(info.name, element.options))),
                name=info.name,
            )
            continue
        if element.nested is not None:
            _reject_nested_python_passes(element)
        if element.name == GUARDED_BY[0]:  # an MLIR pass that aborts on some IR: check it first
            add_pipeline(pm, [PipelineElement(GUARDED_BY[1])])
        try:
            pm.add(element.text())
        except ValueError as e:
            raise PassError(_unknown_pass_message(element, str(e))) from None


def _reject_nested_python_passes(element: PipelineElement) -> None:
    for inner in element.nested or []:
        if inner.name in PASSES:
            # A Python pass anchored below the module aborts MLIR 22; run relax passes at module level.
            raise PassError(
                f"pass '{inner.name}' runs on 'builtin.module'; it cannot be nested in '{element.name}'"
            )
        if inner.nested is not None:
            _reject_nested_python_passes(inner)


def _python_pass(info: PassInfo, instance: Any) -> Callable[[ir.Operation, Any], None]:
    def run(op: ir.Operation, pass_: Any) -> None:
        try:
            instance.run(op)
        except PassFailed:
            pass_.signal_pass_failure()
        except RelaxError as e:
            op.location.emit_error(f"{info.name}: {e}")
            pass_.signal_pass_failure()
        except Exception:  # an internal bug: show where, fail the pass instead of crashing MLIR
            op.location.emit_error(f"internal error in pass '{info.name}':\n{traceback.format_exc()}")
            pass_.signal_pass_failure()

    run.__name__ = info.name
    return run


def _unknown_pass_message(element: PipelineElement, mlir_message: str) -> str:
    names = element.nested is None and element.name
    if names and element.name not in upstream_pass_names():
        close = difflib.get_close_matches(element.name, [*PASSES, *upstream_pass_names()], n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        return f"unknown pass or pipeline '{element.name}'{hint}"
    first = mlir_message.split("\n")[0]
    return f"invalid pipeline element '{element.text()}': {first}"


@functools.cache
def upstream_pass_names() -> tuple[str, ...]:
    """Names of the upstream MLIR passes (read once from mlir-opt's help)."""
    import mlir

    exe = Path(mlir.__path__[0]) / "bin" / "mlir-opt"
    try:
        help_text = subprocess.run(
            [str(exe), "--help-list-hidden"], capture_output=True, text=True, timeout=30
        ).stdout
    except OSError:
        return ()
    return tuple(sorted(set(re.findall(r"^\s{4,6}--([a-z][\w-]*)\s", help_text, re.M))))
