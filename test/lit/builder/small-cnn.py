# A small CNN built with the Python builder: output sizes of convolutions and pooling are
# symbolic expressions of the image height and width, and no value has an unknown dim.
# RUN: %python %s | FileCheck %s
# RUN: %python %s | relax-opt --relax-verify --relax-infer-shapes --relax-verify | FileCheck %s

import re

from relax_mlir.examples.models import small_cnn

text = str(small_cnn())
unknown = [t for t in re.findall(r"!relax\.\w+<[^>]*>", text) if '"?"' in t or '"*"' in t]
assert not unknown, unknown
print(text)

# CHECK-LABEL: func.func @small_cnn(%arg0: !relax.tensor<["n", 3, "h", "w"], f32> {relax.name = "image"}) -> !relax.tensor<["n", 10], f32>
# CHECK: "relax.conv2d"{{.*}}padding = [1, 1, 1, 1], strides = [1, 1]{{.*}} -> !relax.tensor<["n", 16, "h", "w"], f32>
# CHECK: "relax.batch_norm"{{.*}} -> !relax.tensor<["n", 16, "h", "w"], f32>
# CHECK: "relax.max_pool2d"{{.*}} -> !relax.tensor<["n", 16, "h floordiv 2", "w floordiv 2"], f32>
# (h floordiv 2 + 2 - 3) floordiv 2 + 1 == (h + 2) floordiv 4
# CHECK: "relax.conv2d"{{.*}}strides = [2, 2]{{.*}} -> !relax.tensor<["n", 32, "(h + 2) floordiv 4", "(w + 2) floordiv 4"], f32>
# CHECK: "relax.adaptive_avg_pool2d"{{.*}} -> !relax.tensor<["n", 32, 1, 1], f32>
# CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["n", 32], f32>
# CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["n", 10], f32>
# CHECK: "relax.add"{{.*}} -> !relax.tensor<["n", 10], f32>
