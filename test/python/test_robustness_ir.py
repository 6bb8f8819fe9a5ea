"""Bad and edge inputs to the IR, the builder and compile(): a documented error or the right answer, never
a crash (issue 17). Crash reproducers run in a child process (``isolated.py``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from isolated import ROOT, expect_error, run_isolated

# -- static 0 dims never reach tiling (item 5) ----------------------------------------------------------

ZERO_DIM_CASES = r"""
import sys
import numpy as np
import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R

rng = np.random.default_rng(0)


def f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(name, params, body, inputs, ref):
    bb = rb.BlockBuilder()
    with bb.function("main", {k: rb.tensor(s, "f32") for k, s in params.items()}) as args:
        bb.ret(body(*args))
    exe = relax_mlir.compile(bb.module, opt_level=OPT, use_cache=False)
    got, want = exe["main"](*inputs), ref(*inputs)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    np.testing.assert_allclose(got, want, atol=1e-4, err_msg=name)


def conv_ref(x, w):
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float32)
    for i in range(h - kh + 1):
        for j in range(wd - kw + 1):
            out[:, :, i, j] = np.einsum("ncij,ocij->no", x[:, :, i : i + kh, j : j + kw], w)
    return out


def pool_ref(x):
    n, c, h, w = x.shape
    return x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


mm = np.matmul
check("k=0", {"a": ["n", "k"], "b": [0, "m"]}, R.matmul, [f(3, 0), f(0, 5)], mm)
check("k=0 large", {"a": ["n", "k"], "b": [0, "m"]}, R.matmul, [f(300, 0), f(0, 501)], mm)
check("n=0", {"a": [0, "k"], "b": ["k", "m"]}, R.matmul, [f(0, 7), f(7, 5)], mm)
check("m=0", {"a": ["n", "k"], "b": ["k", 0]}, R.matmul, [f(300, 71), f(71, 0)], mm)
check("static k=0", {"a": [64, 0], "b": [0, 64]}, R.matmul, [f(64, 0), f(0, 64)], mm)
check(
    "k=0 fused",
    {"a": ["n", "k"], "b": [0, "m"]},
    lambda a, b: R.relu(R.add(R.matmul(a, b), R.matmul(a, b))),
    [f(300, 0), f(0, 500)],
    lambda a, b: np.maximum(2 * (a @ b), 0),
)
check("batch k=0", {"a": ["b", "n", 0], "c": ["b", 0, "m"]}, R.matmul, [f(2, 30, 0), f(2, 0, 50)], mm)
check("batch b=0", {"a": [0, "n", "k"], "c": [0, "k", "m"]}, R.matmul, [f(0, 30, 4), f(0, 4, 50)], mm)
for shape in [(0, 40), (40, 0)]:  # constant weights: packed at O1+
    w = f(*shape)
    check(f"packed {shape}", {"a": ["n", shape[0]]}, lambda a, w=w: R.matmul(a, R.constant(w)),
          [f(9, shape[0])], lambda a, w=w: a @ w)
check("conv C=0", {"x": ["n", 0, 8, 8], "w": [4, 0, 3, 3]}, R.conv2d, [f(2, 0, 8, 8), f(4, 0, 3, 3)], conv_ref)
check("conv N=0", {"x": [0, 3, 8, 8], "w": [4, 3, 3, 3]}, R.conv2d, [f(0, 3, 8, 8), f(4, 3, 3, 3)], conv_ref)
check("conv O=0", {"x": ["n", 3, 8, 8], "w": [0, 3, 3, 3]}, R.conv2d, [f(2, 3, 8, 8), f(0, 3, 3, 3)], conv_ref)
check("pool N=0", {"x": [0, 3, 9, 9]}, lambda x: R.max_pool2d(x, 2), [f(0, 3, 9, 9)], pool_ref)
check("pool C=0", {"x": ["n", 0, 9, 9]}, lambda x: R.max_pool2d(x, 2), [f(2, 0, 9, 9)], pool_ref)
check("softmax rows of 0", {"x": ["n", 0]}, R.softmax, [f(5, 0)], lambda x: x)
check("softmax 0 rows", {"x": [0, "m"]}, R.softmax, [f(0, 6)], lambda x: x)
print("ALL OK")
"""


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_static_zero_dims_compile_and_match_numpy(opt_level: int) -> None:
    """A static 0 dim gives numpy's (empty or zero) answer at every level; no tile size comes from it."""
    out = run_isolated(
        f"OPT = {opt_level}\n" + ZERO_DIM_CASES, env={**os.environ, "RELAX_MLIR_NUM_THREADS": "2"}
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.last_line == "ALL OK"


# -- types whose size overflows, unknown dtypes, negative dims (item 4) -------------------------------

HUGE = 4611686018427387904  # 2**62: with 4 more elements of 4 bytes, beyond int64


def relax_opt(text: str, *args: str) -> subprocess.CompletedProcess:
    """Run relax-opt on ``text`` in a child (a crash shows as a negative return code)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "relax-opt"), "-", *args],
        input=text,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


HUGE_IR = f"""func.func @main(%x: !relax.tensor<[{HUGE}, 4], f32>) -> !relax.tensor<[{HUGE}, 4], f32> {{
  %0 = "relax.relu"(%x) : (!relax.tensor<[{HUGE}, 4], f32>) -> !relax.tensor<[{HUGE}, 4], f32>
  return %0 : !relax.tensor<[{HUGE}, 4], f32>
}}
"""


@pytest.mark.parametrize("flag", ["--cpu", "--relax-verify"])
def test_relax_opt_rejects_type_too_large_to_address(flag: str) -> None:
    done = relax_opt(HUGE_IR, flag)
    assert done.returncode == 1, done.stderr
    assert (
        f"<stdin>:1:17: error: 'func.func' op argument #0: invalid relax type '!relax.tensor<[{HUGE}, 4], f32>'"
        in done.stderr
    )
    assert "more than the 2**63 - 1" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("dtype", ["f33", "float"])
@pytest.mark.parametrize("flag", ["--cpu", "--relax-verify"])
def test_relax_opt_rejects_unknown_dtype_of_unused_parameter(dtype: str, flag: str) -> None:
    ir_text = (
        f"func.func @main(%x: !relax.tensor<[4], f32>, %y: !relax.tensor<[4], {dtype}>) -> !relax.tensor<[4], f32> {{\n"
        "  return %x : !relax.tensor<[4], f32>\n}\n"
    )
    done = relax_opt(ir_text, flag)
    assert done.returncode == 1, done.stderr
    assert (
        f"<stdin>:1:46: error: 'func.func' op argument #1: invalid relax type '!relax.tensor<[4], {dtype}>': unknown dtype '{dtype}'"
        in done.stderr
    )
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


def test_builder_rejects_type_too_large_to_address() -> None:
    expect_error(
        f"import relax_mlir.builder as rb\nrb.tensor([{HUGE}, 4], 'f32')",
        "ShapeError",
        "more than the 2**63 - 1",
    )
    expect_error(
        "import relax_mlir.builder as rb\nrb.tensor([-1, 4], 'f32')", "ShapeError", "negative dim -1"
    )
    expect_error(
        "import relax_mlir.builder as rb\nrb.tensor([4], 'f33')", "ShapeError", "unknown dtype 'f33'"
    )
    # a deduced result too large to address fails at the line that builds it
    msg = expect_error(
        """
        import relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb = rb.BlockBuilder()
        with bb.function("main", {"a": rb.tensor([2**40, 1]), "b": rb.tensor([1, 2**30])}) as (a, b):
            y = R.matmul(a, b)
        """,
        "ShapeError",
        "relax.matmul: invalid type",
    )
    assert "<string>:8: relax.matmul" in msg


def test_onnx_input_dim_too_large_to_address() -> None:
    expect_error(
        f"""
        import onnx
        from onnx import TensorProto, helper
        from relax_mlir.frontend.onnx import from_onnx
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [{HUGE}, 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [{HUGE}, 4])
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
        from_onnx(helper.make_model(graph))
        """,
        "ShapeError",
        "more than the 2**63 - 1",
    )


# -- compile() of a module without functions (item 6) -------------------------------------------------


@pytest.mark.parametrize(
    "module",
    [
        '"module {}"',
        "rb.BlockBuilder().module",
        '"func.func private @k(%a: tensor<4xf32>) -> tensor<4xf32> { return %a : tensor<4xf32> }"',
    ],
)
def test_compile_module_without_relax_function(module: str) -> None:
    """A CompileError, not the ExecutionEngine's abort on a module without code: nothing could be called."""
    expect_error(
        f"import relax_mlir, relax_mlir.builder as rb\nrelax_mlir.compile({module}, use_cache=False)",
        "CompileError",
        "the module has no relax function to compile",
    )


def test_relax_opt_cpu_on_empty_module() -> None:
    done = relax_opt("module {}\n", "--cpu")
    assert done.returncode == 0, done.stderr
    assert "module" in done.stdout


# -- values of another function or builder (item 7) ---------------------------------------------------


@pytest.mark.parametrize("same_builder", [False, True])
def test_value_of_another_function_is_rejected_where_used(same_builder: bool) -> None:
    msg = expect_error(
        f"""
        import relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb1 = rb.BlockBuilder()
        with bb1.function("f", {{"x": rb.tensor([4])}}) as (x,):
            y = R.relu(x)
            bb1.ret(y)
        bb = bb1 if {same_builder} else rb.BlockBuilder()
        with bb.function("main", {{"x": rb.tensor([4])}}) as (x,):
            z = R.add(x, y)
            bb.ret(z)
        """,
        "BuilderError",
        "operand 'rhs' is a value of @f, not of @main",
    )
    assert "<string>:12: relax.add" in msg


def test_returning_a_value_of_another_function_is_rejected() -> None:
    expect_error(
        """
        import relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb1 = rb.BlockBuilder()
        with bb1.function("f", {"x": rb.tensor([4])}) as (x,):
            y = R.relu(x)
            bb1.ret(y)
        bb = rb.BlockBuilder()
        with bb.function("main", {"x": rb.tensor([4])}) as (x,):
            bb.ret(y)
        """,
        "BuilderError",
        "operand '#0' is a value of @f, not of @main",
    )


def test_compile_verifies_ir_built_without_the_builder() -> None:
    """IR that uses a value outside its region (made with MLIR's own API) is a CompileError, not an abort."""
    expect_error(
        """
        import relax_mlir, relax_mlir.builder as rb
        from mlir import ir
        from relax_mlir.dialects import relax as R
        bb = rb.BlockBuilder()
        with bb.function("f", {"x": rb.tensor([4])}) as (x,):
            y = R.relu(x)
            bb.ret(y)
        with bb.function("main", {"x": rb.tensor([4])}) as (x,):
            z = R.relu(x)
            bb.ret(z)
        z.owner.operands[0] = y  # bypasses the builder's checks
        relax_mlir.compile(bb.module, use_cache=False)
        """,
        "CompileError",
        "using value defined outside the region",
    )


# -- builder arguments: documented errors naming the argument -----------------------------------------

BUILD = """
import numpy as np
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
bb = rb.BlockBuilder()
with bb.function("main", {"x": rb.tensor(["n", 4])}) as (x,):
    {body}
"""


@pytest.mark.parametrize(
    ("body", "error", "match"),
    [
        ("R.add(x, None)", "ArgumentError", "relax.add: operand 'rhs' must be a relax value, got None"),
        (
            "R.add(x, 1.5)",
            "ArgumentError",
            "operand 'rhs' must be a relax value, got float 1.5 (make constants",
        ),
        ("R.add(x, np.ones(4))", "ArgumentError", "operand 'rhs' must be a relax value, got ndarray"),
        ("R.add('x', x)", "ArgumentError", "operand 'lhs' must be a relax value, got str 'x'"),
        ("R.concat([x, None])", "ArgumentError", "relax.concat: operand 'xs[1]' must be a relax value"),
        (
            "R.softmax(x, axis=None)",
            "ArgumentError",
            "relax.softmax: attribute 'axis': expected an integer, got None",
        ),
        ("R.softmax(x, axis=1.0)", "ArgumentError", "attribute 'axis': expected an integer, got float 1.0"),
        (
            "R.prim_value(2**63)",
            "ArgumentError",
            "attribute 'value': 9223372036854775808 does not fit in a 64-bit",
        ),
        (
            "R.reshape(x, 'n4')",
            "ArgumentError",
            "attribute 'shape': expected a list of integers and dim strings",
        ),
        (
            "R.reshape(x, [None])",
            "ArgumentError",
            "attribute 'shape': item #0: expected an integer or a dim string",
        ),
        ("bb.ret(x); bb.ret(x)", "BuilderError", "bb.ret() of @main called twice"),
        ("bb.ret(x); R.relu(x)", "BuilderError", "relax.relu: cannot add an op after the function's return"),
        ("bb.ret(None)", "ArgumentError", "bb.ret() of @main: operand '#0' must be a relax value, got None"),
        ("bb.ret(1.0)", "ArgumentError", "operand '#0' must be a relax value, got float 1.0"),
    ],
)
def test_bad_builder_arguments(body: str, error: str, match: str) -> None:
    msg = expect_error(BUILD.replace("{body}", body), error, match)
    assert msg.startswith("<string>:9: "), msg  # the line of the call


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            "rb.tensor([None])",
            "ArgumentError",
            "tensor() shape: expected an integer or a dim string, got None",
        ),
        ("rb.tensor([1.5, 4])", "ArgumentError", "expected an integer or a dim string, got float 1.5"),
        ("rb.tensor('abc')", "ArgumentError", "got the string 'abc'; write ['abc'] for one dim"),
        ("rb.tensor([2**63])", "ArgumentError", "9223372036854775808 does not fit in a 64-bit integer"),
        ("rb.tensor([4], np.float32)", "ArgumentError", "dtype must be a string like 'f32'"),
        ("rb.shape('ab')", "ArgumentError", "shape() values: expected a list of dims"),
        ("rb.prim(None)", "ArgumentError", "prim() value: expected an integer or a dim string, got None"),
        (
            "bb = rb.BlockBuilder()\nwith bb.function('f', {'x': rb.tensor(['n'])}, upper_bounds={'n': 2**63}): pass",
            "ArgumentError",
            "upper bound of 'n' in @f: 9223372036854775808 does not fit in a 64-bit integer",
        ),
        (
            "bb = rb.BlockBuilder()\nwith bb.function('f', {'x': rb.tensor(['n'])}, upper_bounds={'n': None}): pass",
            "ArgumentError",
            "upper bound of 'n' in @f: expected an integer, got None",
        ),
    ],
)
def test_bad_type_arguments(call: str, error: str, match: str) -> None:
    expect_error("import numpy as np\nimport relax_mlir.builder as rb\n" + call, error, match)


def test_argument_error_is_also_a_python_argument_error() -> None:
    from relax_mlir.errors import ArgumentError, BuilderError, RelaxError

    assert issubclass(ArgumentError, BuilderError) and issubclass(BuilderError, RelaxError)
    assert issubclass(ArgumentError, TypeError) and issubclass(ArgumentError, ValueError)


@pytest.mark.parametrize("cache", ['"?", "b", 4, 64', '"t", "b", "?", 64', '"?", "?", "?", "?"'])
def test_relax_opt_cpu_kv_cache_write_with_unknown_dim(cache: str) -> None:
    """A located error and exit 1, not an internal error's traceback (IndexError in kv_cache.py)."""
    t = f"!relax.tensor<[{cache}], f32>"
    new = '!relax.tensor<["b", "s", 4, 64], f32>'
    ir_text = (
        f"func.func @main(%cache: {t}, %k: {new}) -> {t} {{\n"
        f'  %0 = "relax.kv_cache_write"(%cache, %k) : ({t}, {new}) -> {t}\n'
        f"  return %0 : {t}\n}}\n"
    )
    done = relax_opt(ir_text, "--cpu")
    assert done.returncode == 1, done.stderr
    assert "<stdin>:2:8: error: 'relax.kv_cache_write' op cannot be lowered" in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr


# -- what the LLVM lowering leaves must translate (fuzz cases 3371, 5009) -----------------------------


def test_f64_libm_math_in_a_vectorized_epilogue() -> None:
    """f64 gelu after a batched matmul (a vector<1x1x96xf64> epilogue at O2) goes to libm's erf; the
    calls' unrolling once came after the vector lowering and left unrealized casts: the JIT failed."""
    out = run_isolated(
        """
        from math import erf
        import numpy as np
        import relax_mlir
        import relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R

        bb = rb.BlockBuilder()
        with bb.function("main", {"x": rb.tensor(["b", "s", 64], "f64"), "w": rb.tensor([64, 96], "f64")}) as (x, w):
            bb.ret(R.gelu(R.matmul(x, w)))
        exe = relax_mlir.compile(bb.module, opt_level=2, use_cache=False)
        for shape in [(2, 3, 64), (1, 1, 64), (0, 5, 64)]:
            x = np.random.default_rng(0).uniform(-1, 1, shape)
            w = np.random.default_rng(1).uniform(-1, 1, (64, 96))
            y = x @ w
            np.testing.assert_allclose(exe["main"](x, w), 0.5 * y * (1 + np.vectorize(erf, otypes=[float])(y / np.sqrt(2))))
        print("OK")
        """
    )
    assert out.returncode == 0 and out.last_line == "OK", out.stderr[-3000:]


def test_untranslatable_llvm_module_is_a_compile_error() -> None:
    """An op the LLVM lowering failed to convert is named in a CompileError, not a bare RuntimeError."""
    expect_error(
        """
        from mlir import ir
        from relax_mlir.context import make_context
        from relax_mlir.targets.codegen import object_code

        with make_context():
            m = ir.Module.parse(
                "llvm.func @f(%a: i64) -> i64 {\\n"
                "  %0 = builtin.unrealized_conversion_cast %a : i64 to index\\n"
                "  %1 = builtin.unrealized_conversion_cast %0 : index to i64\\n"
                "  llvm.return %1 : i64\\n}"
            )
            object_code(m, 0)
        """,
        "CompileError",
        match="the LLVM lowering left 'builtin.unrealized_conversion_cast'",
    )


@pytest.mark.parametrize("signature", ["{}", "not json", "[1]"])
def test_hand_written_host_function_with_a_bad_signature_is_a_compile_error(signature: str) -> None:
    """Found by the fuzzer: compile() of host code whose relax.signature lacks the runtime's fields gave a
    KeyError in the runtime; it is a CompileError naming the function."""
    expect_error(
        f"""
        import relax_mlir
        relax_mlir.compile('''
        func.func @main() attributes {{relax.signature = {signature!r}}} {{
          return
        }}'''.replace("'", '"'))
        """,
        "CompileError",
        match="@main: its relax.signature",
    )


def test_relax_function_declared_without_a_body_is_a_compile_error() -> None:
    """Found by the fuzzer (a truncated call test): relax-lower-host indexed the missing body (IndexError)."""
    expect_error(
        """
        import relax_mlir
        relax_mlir.compile('func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>\\n'
                           'func.func @main(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {\\n'
                           '  return %x : !relax.tensor<["n"], f32>\\n}')
        """,
        "CompileError",
        match="@sq is declared without a body",
    )


@pytest.mark.parametrize("literal", ['dense<[1, "n"]>', 'dense<[["a", 2], [3, 4]]>'])
def test_string_in_a_dense_list_is_a_parse_error(literal: str) -> None:
    """Found by the fuzzer (a dim name pasted into a memref.global's value): MLIR's parser asserts on a
    string where a dense list expects an integer."""
    expect_error(
        f"""
        import relax_mlir
        relax_mlir.compile('memref.global "private" constant @c : memref<4xi64> = {literal}')
        """,
        "ParseError",
        match="literal holds numbers or booleans, not strings",
    )
