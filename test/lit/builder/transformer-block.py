# A GPT-style block built with the Python builder: every value gets a fully symbolic type (the
# script fails on any unknown dim or rank), and the printed IR survives relax-opt's verifier and
# shape inference unchanged.
# RUN: %python %s | FileCheck %s
# RUN: %python %s | relax-opt --relax-verify --relax-infer-shapes --relax-verify | FileCheck %s

import re

from relax_mlir.examples.models import transformer_block

text = str(transformer_block())
unknown = [t for t in re.findall(r"!relax\.\w+<[^>]*>", text) if '"?"' in t or '"*"' in t]
assert not unknown, unknown
print(text)

# CHECK-LABEL: func.func @transformer_block(%arg0: !relax.tensor<["b", "s", 512], f32>
# CHECK-SAME: -> !relax.tensor<["b", "s", 512], f32>
# CHECK-SAME: relax.upper_bounds = {b = 16 : i64, s = 2048 : i64}
# CHECK: scf.execute_region -> !relax.tensor<["b", "s", 512], f32> no_inline {
# CHECK: "relax.layer_norm"{{.*}} -> !relax.tensor<["b", "s", 512], f32>
# CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["b", "s", 8, 64], f32>
# CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["b", 8, "s", 64], f32>
# CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["b", 8, 64, "s"], f32>
# CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", 8, "s", "s"], f32>
# The causal mask's size comes from the sequence length of the input.
# CHECK: "relax.shape_of"(%arg0) {{.*}} -> !relax.shape<["b", "s", 512]>
# CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"s">
# CHECK: "relax.arange"() {{{.*}}end = "s"{{.*}} -> !relax.tensor<["s"], i64>
# CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<["s", 1], i64>
# CHECK: "relax.greater"{{.*}} -> !relax.tensor<["s", "s"], i1>
# CHECK: "relax.where"{{.*}} -> !relax.tensor<["s", "s"], f32>
# CHECK: "relax.add"{{.*}} -> !relax.tensor<["b", 8, "s", "s"], f32>
# CHECK: "relax.softmax"{{.*}} -> !relax.tensor<["b", 8, "s", "s"], f32>
# CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", 8, "s", 64], f32>
# CHECK: "relax.reshape"{{.*}} {shape = [0, 0, 512]} {{.*}} -> !relax.tensor<["b", "s", 512], f32>
# CHECK: "relax.gelu"{{.*}} -> !relax.tensor<["b", "s", 2048], f32>
# CHECK: scf.yield {{.*}} : !relax.tensor<["b", "s", 512], f32>
# CHECK: } {relax.dataflow}
