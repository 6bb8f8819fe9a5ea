"""The registry of Python passes: ``@register_pass("name")`` on a dataclass with ``run(self, module)``.

Every pass registers itself where it is defined; ``pipelines/`` parses pipeline text against this registry
(relax-opt and compile() share it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from relax_mlir.errors import PassError, RelaxError


class PassFailed(RelaxError):
    """Raised by a pass after it has emitted its diagnostics."""


@dataclass(frozen=True)
class PassInfo:
    """A registered Python pass: its name, one-line summary and options dataclass."""

    name: str
    summary: str
    cls: type

    def instantiate(self, options: dict[str, str]) -> Any:
        fields = {f.name.replace("_", "-"): f for f in dataclasses.fields(self.cls)}
        kwargs = {}
        for key, text in options.items():
            field = fields.get(key)
            if field is None:
                raise PassError(
                    f"pass '{self.name}' has no option '{key}'; options: {', '.join(fields) or 'none'}"
                )
            kwargs[field.name] = _convert_option(self.name, key, text, field.type)
        return self.cls(**kwargs)


PASSES: dict[str, PassInfo] = {}


def register_pass(name: str) -> Callable[[type], type]:
    """Class decorator: register a dataclass with ``run(self, module: ir.Operation)`` as pass ``name``."""

    def wrap(cls: type) -> type:
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        PASSES[name] = PassInfo(name, summary, dataclasses.dataclass(cls))
        return cls

    return wrap


def _convert_option(pass_name: str, key: str, text: str, annotation: Any) -> Any:
    kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    try:
        if kind == "bool":
            if text not in ("true", "false", "1", "0"):
                raise ValueError
            return text in ("true", "1")
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
    except ValueError:
        raise PassError(f"option '{key}' of pass '{pass_name}' expects a {kind}, got '{text}'") from None
    return text
