// Attention scores of one head with a symbolic batch and sequence length.
// Every value's type carries its symbolic shape; relax-verify checks each op's declared result
// against forward shape deduction.
func.func @attention_scores(%x: !relax.tensor<["batch", "seq", 512], f32>,
                            %wq: !relax.tensor<[512, 512], f32>,
                            %wk: !relax.tensor<[512, 512], f32>)
    -> !relax.tensor<["batch", 8, "seq", "seq"], f32>
    attributes {relax.upper_bounds = {batch = 16 : i64, seq = 2048 : i64}} {
  %s = scf.execute_region -> !relax.tensor<["batch", 8, "seq", "seq"], f32> {
    %q = "relax.matmul"(%x, %wq) : (!relax.tensor<["batch", "seq", 512], f32>, !relax.tensor<[512, 512], f32>) -> !relax.tensor<["batch", "seq", 512], f32>
    %k = "relax.matmul"(%x, %wk) : (!relax.tensor<["batch", "seq", 512], f32>, !relax.tensor<[512, 512], f32>) -> !relax.tensor<["batch", "seq", 512], f32>
    %qh = "relax.reshape"(%q) {shape = [0, 0, 8, -1]} : (!relax.tensor<["batch", "seq", 512], f32>) -> !relax.tensor<["batch", "seq", 8, 64], f32>
    %kh = "relax.reshape"(%k) {shape = ["batch", "seq", 8, 64]} : (!relax.tensor<["batch", "seq", 512], f32>) -> !relax.tensor<["batch", "seq", 8, 64], f32>
    %qt = "relax.permute_dims"(%qh) {axes = [0, 2, 1, 3]} : (!relax.tensor<["batch", "seq", 8, 64], f32>) -> !relax.tensor<["batch", 8, "seq", 64], f32>
    %kt = "relax.permute_dims"(%kh) {axes = [0, 2, 3, 1]} : (!relax.tensor<["batch", "seq", 8, 64], f32>) -> !relax.tensor<["batch", 8, 64, "seq"], f32>
    %sc = "relax.matmul"(%qt, %kt) : (!relax.tensor<["batch", 8, "seq", 64], f32>, !relax.tensor<["batch", 8, 64, "seq"], f32>) -> !relax.tensor<["batch", 8, "seq", "seq"], f32>
    %e = "relax.exp"(%sc) : (!relax.tensor<["batch", 8, "seq", "seq"], f32>) -> !relax.tensor<["batch", 8, "seq", "seq"], f32>
    %z = "relax.sum"(%e) {axes = [3], keepdims = true} : (!relax.tensor<["batch", 8, "seq", "seq"], f32>) -> !relax.tensor<["batch", 8, "seq", 1], f32>
    %p = "relax.divide"(%e, %z) : (!relax.tensor<["batch", 8, "seq", "seq"], f32>, !relax.tensor<["batch", 8, "seq", 1], f32>) -> !relax.tensor<["batch", 8, "seq", "seq"], f32>
    scf.yield %p : !relax.tensor<["batch", 8, "seq", "seq"], f32>
  } {no_inline, relax.dataflow}
  return %s : !relax.tensor<["batch", 8, "seq", "seq"], f32>
}
