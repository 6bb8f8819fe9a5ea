func.func @f(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %c = arith.constant 1 : index
  %d = arith.addi %c, %c : index
  return %0 : !relax.tensor<["n", 4], f32>
}
