"""``relax-check-allocations``: every heap allocation of JIT-compiled code is checked; a failed one comes
back to Python as ``OutOfMemoryError`` instead of a write through a null pointer.

Compiled code allocates with ``malloc`` (``memref.alloc``: the memory plan's storages, buffers between
kernels, kernels' temporaries, data-dependent results) at any depth, and none of those calls had its
result checked. This pass (on the LLVM dialect, after ``host-to-llvm``) sends every ``malloc`` through
``relax_malloc``, and gives each public function ``f`` an entry ``_relax_guarded_f(ctx, <the arguments of
_mlir_ciface_f>) -> i32``:

- the entry ``setjmp``s into ``ctx`` (``[i64 bytes][jmp_buf]``, ``CONTEXT_BYTES``, owned by the runtime),
  makes ``ctx`` the calling thread's allocation context (the pthread key ``relax_alloc_key``, which the
  runtime creates and stores in the object), calls ``_mlir_ciface_f`` and returns 0;
- ``relax_malloc`` returns ``malloc``'s result, except when it is null for a non-zero size on a thread
  inside a guarded call: it stores the size in ``ctx`` and ``longjmp``s back to the entry, which returns 1,
  and the runtime raises the error naming the function and the size. Buffers allocated earlier in that
  call are not freed (an error path; nothing else is lost);
- inside an OpenMP parallel region (a kernel's chunks on several threads) jumping out would leave the
  thread team waiting, so ``relax_malloc_parallel`` writes the size to stderr and aborts instead.

The hot path costs a ``setjmp`` and three ``pthread_[gs]etspecific`` calls per call, and a compare per
allocation. Ahead-of-time libraries (``aot.py``) do not run this pass.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass

KEY_GLOBAL = "relax_alloc_key"
GUARD_PREFIX = "_relax_guarded_"
CIFACE_PREFIX = "_mlir_ciface_"
CONTEXT_BYTES = 1024  # the failed size (8 bytes), then a jmp_buf (200 bytes on x86-64, 312 on AArch64 glibc)
_ALLOCATORS = {"malloc": "relax_malloc"}
_PARALLEL_ALLOCATORS = {"malloc": "relax_malloc_parallel"}
_MESSAGE = "relax_mlir: out of memory: malloc failed in a parallel region of compiled code\n"

# malloc(n), returned unless it failed for n > 0; then the function goes on at ^fail
_MALLOC_OR_FAIL = """\
  %p = llvm.call @malloc(%n) : (i64) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %zero = llvm.mlir.constant(0 : i64) : i64
  %failed = llvm.icmp "eq" %p, %null : !llvm.ptr
  %some = llvm.icmp "ne" %n, %zero : i64
  %bad = llvm.and %failed, %some : i1
  llvm.cond_br %bad weights([0, 1]), ^fail, ^ok
^ok:
  llvm.return %p : !llvm.ptr"""

_RUNTIME = """
llvm.mlir.global external @relax_alloc_key(-1 : i32) {addr_space = 0 : i32} : i32
llvm.mlir.global private constant @relax_oom_message("MESSAGE") {addr_space = 0 : i32}
llvm.func @relax_malloc(%n: i64) -> !llvm.ptr attributes {passthrough = ["noinline"]} {
MALLOC_OR_FAIL
^fail:
  %key_at = llvm.mlir.addressof @relax_alloc_key : !llvm.ptr
  %key = llvm.load %key_at : !llvm.ptr -> i32
  %ctx = llvm.call @pthread_getspecific(%key) : (i32) -> !llvm.ptr
  %unguarded = llvm.icmp "eq" %ctx, %null : !llvm.ptr
  llvm.cond_br %unguarded, ^ok, ^jump
^jump:
  llvm.store %n, %ctx : i64, !llvm.ptr
  %buf = llvm.getelementptr %ctx[8] : (!llvm.ptr) -> !llvm.ptr, i8
  %one = llvm.mlir.constant(1 : i32) : i32
  llvm.call @longjmp(%buf, %one) : (!llvm.ptr, i32) -> ()
  llvm.unreachable
}
llvm.func @relax_malloc_parallel(%n: i64) -> !llvm.ptr attributes {passthrough = ["noinline"]} {
MALLOC_OR_FAIL
^fail:
  %msg = llvm.mlir.addressof @relax_oom_message : !llvm.ptr
  %two = llvm.mlir.constant(2 : i32) : i32
  %len = llvm.mlir.constant(LENGTH : i64) : i64
  %w = llvm.call @write(%two, %msg, %len) : (i32, !llvm.ptr, i64) -> i64
  llvm.call @abort() : () -> ()
  llvm.unreachable
}
"""

_DECLARATIONS = {
    "malloc": "llvm.func @malloc(i64) -> !llvm.ptr",
    "pthread_getspecific": "llvm.func @pthread_getspecific(i32) -> !llvm.ptr",
    "pthread_setspecific": "llvm.func @pthread_setspecific(i32, !llvm.ptr) -> i32",
    "_setjmp": 'llvm.func @_setjmp(!llvm.ptr) -> i32 attributes {passthrough = ["returns_twice"]}',
    "longjmp": 'llvm.func @longjmp(!llvm.ptr, i32) attributes {passthrough = ["noreturn"]}',
    "write": "llvm.func @write(i32, !llvm.ptr, i64) -> i64",
    "abort": 'llvm.func @abort() attributes {passthrough = ["noreturn"]}',
}

_GUARD = """
llvm.func @{guard}(%ctx: !llvm.ptr{params}) -> i32 attributes {{passthrough = ["noinline"]}} {{
  %key_at = llvm.mlir.addressof @relax_alloc_key : !llvm.ptr
  %buf = llvm.getelementptr %ctx[8] : (!llvm.ptr) -> !llvm.ptr, i8
  %r = llvm.call @_setjmp(%buf) : (!llvm.ptr) -> i32
  %zero = llvm.mlir.constant(0 : i32) : i32
  %first = llvm.icmp "eq" %r, %zero : i32
  llvm.cond_br %first, ^run, ^failed
^run:
  %key = llvm.load volatile %key_at : !llvm.ptr -> i32
  %set = llvm.call @pthread_setspecific(%key, %ctx) : (i32, !llvm.ptr) -> i32
  llvm.call @{callee}({args}) : ({types}) -> ()
  %null = llvm.mlir.zero : !llvm.ptr
  %key2 = llvm.load volatile %key_at : !llvm.ptr -> i32
  %unset = llvm.call @pthread_setspecific(%key2, %null) : (i32, !llvm.ptr) -> i32
  llvm.return %zero : i32
^failed:
  %null2 = llvm.mlir.zero : !llvm.ptr
  %key3 = llvm.load volatile %key_at : !llvm.ptr -> i32
  %unset2 = llvm.call @pthread_setspecific(%key3, %null2) : (i32, !llvm.ptr) -> i32
  %one = llvm.mlir.constant(1 : i32) : i32
  llvm.return %one : i32
}}
"""


def _inside_parallel(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "llvm.func":
        if parent.name.startswith("omp."):
            return True
        parent = parent.parent
    return False


def _guard(func: ir.Operation) -> str:
    """The guarded entry of a ``_mlir_ciface_`` function (which returns nothing: results go by pointer)."""
    name = ir.StringAttr(func.attributes["sym_name"]).value
    ftype = ir.TypeAttr(func.attributes["function_type"]).value
    inputs = _llvm_inputs(str(ftype))
    params = "".join(f", %a{i}: {t}" for i, t in enumerate(inputs))
    args = ", ".join(f"%a{i}" for i in range(len(inputs)))
    declaration = f"llvm.func @{name}({', '.join(inputs)})\n"  # parsed, but the module's is kept
    return declaration + _GUARD.format(
        guard=GUARD_PREFIX + name.removeprefix(CIFACE_PREFIX),
        callee=name,
        params=params,
        args=args,
        types=", ".join(inputs),
    )


def _llvm_inputs(ftype: str) -> list[str]:
    """Parameter types of ``!llvm.func<void (ptr, i64, ...)>`` (only pointers and integers occur here)."""
    inner = ftype[ftype.index("(") + 1 : ftype.rindex(")")].strip()
    if not inner:
        return []
    return ["!llvm.ptr" if t.strip() == "ptr" else t.strip() for t in inner.split(",")]


@register_pass("relax-check-allocations")
class CheckAllocations:
    """Route malloc through null-checking helpers; give each public function a guarded entry."""

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        entries: list[ir.Operation] = []
        calls: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "llvm.call" and "callee" in op.attributes:
                if ir.FlatSymbolRefAttr(op.attributes["callee"]).value in _ALLOCATORS:
                    calls.append(op)
            return ir.WalkResult.ADVANCE

        for top in body.operations:
            op = top.operation
            if op.name != "llvm.func" or not op.regions[0].blocks:
                continue
            if ir.StringAttr(op.attributes["sym_name"]).value.startswith(CIFACE_PREFIX):
                entries.append(op)
            op.walk(visit)
        if not entries:
            return
        for call in calls:
            old = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            table = _PARALLEL_ALLOCATORS if _inside_parallel(call) else _ALLOCATORS
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(table[old])
        names = {ir.StringAttr(op.operation.attributes["sym_name"]).value for op in body.operations}
        runtime = (
            _RUNTIME.replace("MALLOC_OR_FAIL", _MALLOC_OR_FAIL)
            .replace("MESSAGE", _MESSAGE.replace("\n", "\\0A"))
            .replace("LENGTH", str(len(_MESSAGE)))
        )
        text = "\n".join(_DECLARATIONS.values()) + runtime + "".join(_guard(f) for f in entries)
        parsed = ir.Module.parse(text)
        for op in list(parsed.body.operations):
            if ir.StringAttr(op.operation.attributes["sym_name"]).value not in names:
                body.append(op.operation)
