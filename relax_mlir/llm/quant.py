"""Group-quantized weights in numpy: the storage ``relax.dequantize`` reads, made and checked in one place.

A weight ``[rows, k]`` (``[out, in]``, llama.cpp/GGUF order) is stored as ``data`` and per-group ``scales``
``[rows, k/32]`` in one of the layouts of ``relax_mlir.dialects.ops.dequantize``:

- ``q8_0``: data ``int8 [rows, k]``;
- ``q4_0``: data ``uint8 [rows, k/2]``, llama.cpp's Q4_0 blocks (2-byte f16 scale + 16 bytes) split into the
  two planar arrays: in each group's 16 bytes, byte j holds value j (low nibble) and j+16 (high nibble);
- ``q4f16_1`` (MLC): data ``uint32 [rows, k/8]``, value i of word w at bits 4*(i%8).

Q4_0 and Q8_0 are made by ``gguf.quants``, so their bits equal llama.cpp's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from gguf import GGMLQuantizationType
from gguf import quants as gguf_quants

from relax_mlir.errors import InputError

GROUP = 32
# layout -> (numpy dtype of data, values per data element, zero point)
LAYOUTS: dict[str, tuple[type, int, int]] = {
    "q8_0": (np.int8, 1, 0),
    "q4_0": (np.uint8, 2, 8),
    "q4f16_1": (np.uint32, 8, 7),
}
GGML_TYPES = {"q8_0": GGMLQuantizationType.Q8_0, "q4_0": GGMLQuantizationType.Q4_0}
_SCALE_DTYPES = (np.float16, np.float32)


@dataclass(frozen=True)
class QuantizedWeight:
    """A ``[rows, k]`` weight as ``data`` and ``scales [rows, k/32]`` (f16 or f32) in ``layout``."""

    layout: str
    data: np.ndarray
    scales: np.ndarray

    @property
    def shape(self) -> tuple[int, int]:
        return (self.scales.shape[0], GROUP * self.scales.shape[1])

    def check(self, name: str, shape: tuple[int, int] | None = None) -> QuantizedWeight:
        """This weight with contiguous arrays; InputError naming ``name`` when its arrays do not fit ``layout``
        (or its ``[rows, k]`` is not ``shape``)."""
        if self.layout not in LAYOUTS:
            raise InputError(
                f"weight '{name}': unknown layout '{self.layout}', expected one of {sorted(LAYOUTS)}"
            )
        dtype, per, _ = LAYOUTS[self.layout]
        data, scales = np.asarray(self.data), np.asarray(self.scales)
        if data.dtype != dtype or scales.dtype not in _SCALE_DTYPES:
            raise InputError(
                f"weight '{name}' ({self.layout}): data must be {np.dtype(dtype)} and scales float16 or float32, "
                f"got {data.dtype} and {scales.dtype}"
            )
        if scales.ndim != 2 or data.shape != (scales.shape[0], scales.shape[1] * GROUP // per):
            raise InputError(
                f"weight '{name}' ({self.layout}): scales [rows, groups] need data [rows, groups * {GROUP // per}], "
                f"got scales {scales.shape} and data {data.shape}"
            )
        if shape is not None and self.shape != tuple(shape):
            raise InputError(f"weight '{name}' has shape {self.shape} ([out, in]), expected {tuple(shape)}")
        return QuantizedWeight(self.layout, np.ascontiguousarray(data), np.ascontiguousarray(scales))

    def dequantize(self) -> np.ndarray:
        """The float32 ``[rows, k]`` weight (the reference for ``relax.dequantize``)."""
        _, per, zero = LAYOUTS[self.layout]
        rows, groups = self.scales.shape
        if per == 1:
            q = self.data.astype(np.float32)
        elif per == 2:
            b = self.data.reshape(rows, groups, 16)
            q = np.concatenate([b & 15, b >> 4], axis=2).reshape(rows, groups * GROUP).astype(np.float32)
        else:
            shifts = np.arange(8, dtype=np.uint32) * 4
            q = ((self.data[:, :, None] >> shifts) & 15).reshape(rows, groups * GROUP).astype(np.float32)
        return (q - zero) * np.repeat(self.scales.astype(np.float32), GROUP, axis=1)

    def take_rows(self, order: np.ndarray) -> QuantizedWeight:
        """The weight with its rows in ``order`` (exact: groups run along k)."""
        return QuantizedWeight(self.layout, self.data[order], self.scales[order])

    def to_gguf_blocks(self) -> np.ndarray:
        """llama.cpp's interleaved blocks (``uint8 [rows, groups * block bytes]``) of a q4_0/q8_0 weight."""
        if self.layout not in GGML_TYPES:
            raise InputError(f"layout {self.layout} has no GGUF block type (only {sorted(GGML_TYPES)})")
        rows, groups = self.scales.shape
        d = self.scales.astype(np.float16).view(np.uint8).reshape(rows, groups, 2)
        block = 16 if self.layout == "q4_0" else 32
        qs = self.data.view(np.uint8).reshape(rows, groups, block)
        return np.concatenate([d, qs], axis=2).reshape(rows, groups * (block + 2))


def from_gguf_blocks(blocks: np.ndarray, layout: str) -> QuantizedWeight:
    """A q4_0/q8_0 weight from llama.cpp's blocks ``uint8 [rows, groups * (2 + 16 | 32)]``."""
    block = 2 + (16 if layout == "q4_0" else 32)
    rows, width = blocks.shape
    if width % block:
        raise InputError(f"{layout} rows of {width} bytes are not whole {block}-byte blocks")
    groups = width // block
    b = np.ascontiguousarray(blocks, dtype=np.uint8).reshape(rows, groups, block)
    scales = np.ascontiguousarray(b[:, :, :2]).view(np.float16).reshape(rows, groups)
    data = np.ascontiguousarray(b[:, :, 2:]).reshape(rows, groups * (block - 2)).view(LAYOUTS[layout][0])
    return QuantizedWeight(layout, data, scales)


def quantize(w: np.ndarray, layout: str) -> QuantizedWeight:
    """``w [rows, k]`` (k a multiple of 32) quantized in ``layout`` with f16 scales; q4_0/q8_0 bit-equal to
    llama.cpp's, q4f16_1 as MLC: scale = max|w| / 7 per group, q = round(w / scale) + 7 clipped to 0..14."""
    w = np.asarray(w, dtype=np.float32)
    if layout not in LAYOUTS:
        raise InputError(f"unknown quantization layout '{layout}', expected one of {sorted(LAYOUTS)}")
    if w.ndim != 2 or w.shape[1] % GROUP:
        raise InputError(
            f"quantize: need a [rows, k] weight with k a multiple of {GROUP}, got shape {w.shape}"
        )
    if layout in GGML_TYPES:
        return from_gguf_blocks(gguf_quants.quantize(np.ascontiguousarray(w), GGML_TYPES[layout]), layout)
    rows, k = w.shape
    g = w.reshape(rows, k // GROUP, GROUP)
    scales = (np.abs(g).max(axis=2) / 7).astype(np.float16)
    s = scales.astype(np.float32)[:, :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (
            np.where(s == 0, 7, np.clip(np.round(g / s) + 7, 0, 14))
            .astype(np.uint32)
            .reshape(rows, k // 8, 8)
        )
    data = np.bitwise_or.reduce(q << (np.arange(8, dtype=np.uint32) * 4), axis=2).astype(np.uint32)
    return QuantizedWeight(layout, data, scales)
