// A data-dependent output (nonzero): relax-compile rejects it (test/lit/runtime/relax-compile.mlir).
func.func @nz(%arg0: !relax.tensor<["n"], f32> {relax.name = "x"}) -> !relax.tensor<[1, "?"], i64> {
  %0 = scf.execute_region -> !relax.tensor<[1, "?"], i64> no_inline {
    %1 = "relax.nonzero"(%arg0) : (!relax.tensor<["n"], f32>) -> !relax.tensor<[1, "?"], i64>
    scf.yield %1 : !relax.tensor<[1, "?"], i64>
  } {relax.dataflow}
  return %0 : !relax.tensor<[1, "?"], i64>
}
