"""Whole models through the PyTorch frontend: a GPT-2-style block, a Llama-style block (RMSNorm, rotary, GQA,
SwiGLU) and a ResNet-style CNN, exported with named dynamic dims; each is compiled once and matches eager
PyTorch at several shapes, its types are fully symbolic and named after the ``Dim``s, and a shape that
violates a guard torch recorded raises InputError."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install -e '.[torch]')")

from torch.export import Dim  # noqa: E402
from torch_util import compare, import_and_compile, main_types  # noqa: E402

from relax_mlir.errors import InputError  # noqa: E402

F = torch.nn.functional
torch.manual_seed(0)


class GPT2Block(torch.nn.Module):
    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.c_attn, self.c_proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.c_fc, self.c_mlp = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        mask = torch.ones(s, s, dtype=torch.bool).tril()
        attn = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        x = x + self.c_proj(attn.transpose(1, 2).contiguous().view(b, s, d))
        return x + self.c_mlp(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def test_gpt2_block() -> None:
    model = GPT2Block()
    batch, seq = Dim("batch", max=8), Dim("seq", max=128)
    module, exe = import_and_compile(model, (torch.randn(2, 5, 32),), {"x": {0: batch, 1: seq}})
    assert main_types(module) == ['!relax.tensor<["batch", "seq", 32], f32>'] * 2
    for b, s in [(1, 1), (3, 7), (2, 64)]:
        compare(exe, model, (torch.randn(b, s, 32),), rtol=1e-4, atol=1e-4)
    with pytest.raises(InputError, match="seq.*above its upper bound 128"):
        exe(torch.randn(1, 129, 32).numpy())


class RMSNorm(torch.nn.Module):
    def __init__(self, d: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps, self.weight = eps, torch.nn.Parameter(torch.rand(d) + 0.5)

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


class LlamaBlock(torch.nn.Module):
    def __init__(self, d: int = 32, heads: int = 4, kv_heads: int = 2, ffn: int = 48) -> None:
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.input_norm, self.post_norm = RMSNorm(d), RMSNorm(d)
        self.q = torch.nn.Linear(d, d, bias=False)
        self.k = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v = torch.nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o = torch.nn.Linear(d, d, bias=False)
        self.gate = torch.nn.Linear(d, ffn, bias=False)
        self.up = torch.nn.Linear(d, ffn, bias=False)
        self.down = torch.nn.Linear(ffn, d, bias=False)
        self.register_buffer("inv_freq", 1.0 / 10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))

    def forward(self, x):
        b, s, d = x.shape
        angles = torch.arange(s, dtype=torch.float32)[:, None] * self.inv_freq[None, :]
        angles = torch.cat([angles, angles], -1)
        cos, sin = angles.cos(), angles.sin()
        h = self.input_norm(x)
        q = self.q(h).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(b, s, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(attn.transpose(1, 2).reshape(b, s, d))
        h = self.post_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def test_llama_block() -> None:
    model = LlamaBlock()
    batch, seq = Dim("batch", max=8), Dim("seq", max=256)
    module, exe = import_and_compile(model, (torch.randn(2, 6, 32),), {"x": {0: batch, 1: seq}})
    assert main_types(module) == ['!relax.tensor<["batch", "seq", 32], f32>'] * 2
    assert "upper_bounds = {batch = 8 : i64, seq = 256 : i64}" in str(module)
    for b, s in [(1, 1), (3, 5), (2, 33)]:
        compare(exe, model, (torch.randn(b, s, 32),), rtol=1e-4, atol=1e-4)


class BasicBlock(torch.nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = torch.nn.BatchNorm2d(cout)
        self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = torch.nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = torch.nn.Sequential(
                torch.nn.Conv2d(cin, cout, 1, stride, bias=False), torch.nn.BatchNorm2d(cout)
            )
        for bn in (self.bn1, self.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.down is None else self.down(x)))


class ResNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU()
        )
        self.layer1, self.layer2 = BasicBlock(8, 8, 1), BasicBlock(8, 16, 2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        y = self.layer2(self.layer1(F.max_pool2d(self.stem(x), 3, 2, 1)))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(y, 1), 1))


def test_resnet_cnn() -> None:
    model = ResNet()
    batch, h, w = Dim("batch", max=8), Dim("height", min=8, max=96), Dim("width", min=8, max=96)
    module, exe = import_and_compile(model, (torch.randn(2, 3, 16, 20),), {"x": {0: batch, 2: h, 3: w}})
    assert main_types(module) == [
        '!relax.tensor<["batch", 3, "height", "width"], f32>',
        '!relax.tensor<["batch", 10], f32>',
    ]
    for b, hh, ww in [(1, 8, 9), (3, 17, 31), (2, 64, 48)]:
        compare(exe, model, (torch.randn(b, 3, hh, ww),), rtol=1e-4, atol=1e-4)
    with pytest.raises(InputError, match="height >= 8"):
        exe(torch.randn(1, 3, 7, 16).numpy())


class Chunked(torch.nn.Module):
    """Attention over chunks of 4 positions: the sequence must be a multiple of 4 (a derived dim)."""

    def forward(self, x):
        b, s, d = x.shape
        chunks = x.view(b, s // 4, 4, d)
        return (chunks.softmax(2) * chunks).sum(2)


def test_derived_dim_guard() -> None:
    chunks = Dim("chunks", max=64)
    module, exe = import_and_compile(Chunked(), (torch.randn(2, 8, 3),), {"x": {1: 4 * chunks}})
    assert main_types(module)[1] == '!relax.tensor<[2, "chunks", 3], f32>'
    assert "relax.upper_bounds = {x_d1 = 256 : i64}" in str(module)  # 4 * chunks, chunks <= 64
    for s in (8, 12, 40):
        compare(exe, Chunked(), (torch.randn(2, s, 3),))
    with pytest.raises(InputError, match="must be 4 \\* chunks"):
        exe(torch.randn(2, 10, 3).numpy())
    with pytest.raises(InputError, match="chunks >= 2"):  # torch's own range: it specializes 1
        exe(torch.randn(2, 4, 3).numpy())
    with pytest.raises(InputError, match="above its upper bound 256"):
        exe(torch.randn(2, 260, 3).numpy())


def _bench_llm():  # noqa: ANN202
    """bench/bench_llm.py as a module (its PyTorch twin ``TorchLlama`` of relax_mlir.llm's model)."""
    import importlib.util  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    path = Path(__file__).resolve().parents[2] / "bench" / "bench_llm.py"
    spec = importlib.util.spec_from_file_location("bench_llm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Prefill(torch.nn.Module):
    """The twin's prefill (empty cache, positions from 0) as a module torch.export can trace."""

    def __init__(self, ref) -> None:  # noqa: ANN001
        super().__init__()
        self.ref = ref

    def forward(self, tokens):
        return self.ref.forward(tokens, self.ref.new_cache(tokens.shape[0]), 0)


def test_llm_torch_twin_imports_and_matches() -> None:
    """relax_mlir.llm's model, exported from its PyTorch twin in bench/bench_llm.py (weights as lifted
    constants, the KV cache written with slice assignments), matches eager PyTorch and relax_mlir.llm's
    numpy reference."""
    from relax_mlir.llm import LlamaConfig, random_weights  # noqa: PLC0415
    from relax_mlir.llm.reference import forward  # noqa: PLC0415

    cfg = LlamaConfig(
        vocab_size=64, hidden_size=32, layers=2, heads=4, kv_heads=2, ffn_size=48, max_context=64, max_batch=2
    )
    weights = random_weights(cfg, seed=0, scale=0.1)
    model = Prefill(_bench_llm().TorchLlama(cfg, weights))
    batch, seq = Dim("batch", max=cfg.max_batch), Dim("seq", min=2, max=cfg.max_context - 1)
    tokens = torch.randint(0, cfg.vocab_size, (2, 5))
    module, exe = import_and_compile(model, (tokens,), {"tokens": {0: batch, 1: seq}})
    assert main_types(module) == [
        '!relax.tensor<["batch", "seq"], i64>',
        '!relax.tensor<["batch", "seq", 64], f32>',
    ]
    for b, s in [(1, 2), (2, 9), (1, 63)]:
        tokens = torch.randint(0, cfg.vocab_size, (b, s))
        compare(exe, model, (tokens,), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            exe(tokens.numpy()), forward(cfg, weights, tokens.numpy()), rtol=1e-4, atol=1e-4
        )
