func.func @f(%x: !relax.tensor<["n", 4], f32>) {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> 
}
