"""Pipelines as data: a pipeline is a list of ``PipelineElement``s, built and edited by list operations.

``P("relax-fold-constants", opt_level=2)`` is one element (options become ``{opt-level=2}``, a ``True``
option is a bare flag), ``P("func.func", nested=[P("cse")])`` a nesting, ``passes("a", "b")`` a list of
option-less passes. ``without``, ``replace`` and ``insert_before`` derive one pipeline from another by the
names of its top-level elements (a name that is not there is an error, so a renamed pass cannot silently
stop being removed); ``text`` prints a pipeline as ``relax-opt --pass-pipeline`` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable

from relax_mlir.errors import PassError
from relax_mlir.pipelines.registry import PipelineElement

Pipeline = list[PipelineElement]


def P(name: str, nested: Iterable[PipelineElement] | None = None, **options: object) -> PipelineElement:  # noqa: N802
    """One pipeline element: a pass (or named pipeline) with options, or an op-anchored nesting."""
    words = []
    for key, value in options.items():
        key = key.replace("_", "-")
        if value is True:
            words.append(key)
        else:
            words.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
    return PipelineElement(name, " ".join(words), None if nested is None else list(nested))


def passes(*names: str) -> Pipeline:
    """Option-less passes, in order."""
    return [P(n) for n in names]


def text(pipeline: Iterable[PipelineElement]) -> str:
    """The pipeline as text (``a,b{x=1},func.func(c)``)."""
    return ",".join(e.text() for e in pipeline)


def names(pipeline: Iterable[PipelineElement]) -> list[str]:
    """The names of the top-level elements."""
    return [e.name for e in pipeline]


def _check(pipeline: Pipeline, name: str) -> None:
    if name not in names(pipeline):
        raise PassError(f"pipeline has no element '{name}': {text(pipeline)}")


def without(pipeline: Pipeline, *drop: str) -> Pipeline:
    """``pipeline`` with every top-level element named in ``drop`` removed (each must be there)."""
    for name in drop:
        _check(pipeline, name)
    return [e for e in pipeline if e.name not in drop]


def replace(pipeline: Pipeline, name: str, by: Iterable[PipelineElement]) -> Pipeline:
    """``pipeline`` with each top-level element ``name`` replaced by the elements ``by``."""
    _check(pipeline, name)
    out: Pipeline = []
    for e in pipeline:
        out.extend(by if e.name == name else [e])
    return out


def insert_before(pipeline: Pipeline, name: str, new: Iterable[PipelineElement]) -> Pipeline:
    """``pipeline`` with ``new`` inserted before its first top-level element ``name``."""
    _check(pipeline, name)
    i = names(pipeline).index(name)
    return [*pipeline[:i], *new, *pipeline[i:]]
