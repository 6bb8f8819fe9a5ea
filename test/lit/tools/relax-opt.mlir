// relax-opt behaves like mlir-opt: pipelines mixing relax and upstream passes, per-pass flags,
// -o, IR printing, timing, pass listing, and diagnostics with file:line:col and exit status 1.

// RUN: relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(relax-verify,canonicalize,func.func(cse))' | FileCheck %s --check-prefix=PIPE
// PIPE-LABEL: func.func @f
// PIPE-NOT: arith.addi
// PIPE: "relax.exp"

// RUN: relax-opt %S/Inputs/small.mlir --relax-verify --canonicalize | FileCheck %s --check-prefix=PIPE

// RUN: relax-opt %S/Inputs/small.mlir --relax-verify -o %t.mlir && FileCheck %s --check-prefix=PIPE-O < %t.mlir
// PIPE-O: arith.addi

// RUN: cat %S/Inputs/small.mlir | relax-opt - | FileCheck %s --check-prefix=STDIN
// STDIN: func.func @f

// RUN: relax-opt %S/Inputs/small.mlir --relax-verify --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// AFTER: IR Dump After relax-verify
// AFTER: IR Dump After Canonicalizer

// RUN: relax-opt %S/Inputs/small.mlir --relax-verify --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIME
// TIME: Execution time report
// TIME: relax-verify

// RUN: relax-opt --list-passes | FileCheck %s --check-prefix=LIST
// LIST: --relax-verify

// RUN: not relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(relax-verfy)' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: error: unknown pass or pipeline 'relax-verfy'; did you mean 'relax-verify'

// RUN: not relax-opt %S/Inputs/small.mlir --canonicalise 2>&1 | FileCheck %s --check-prefix=FLAG
// FLAG: error: unknown flag or pass '--canonicalise'; did you mean --canonicalize

// RUN: not relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(relax-verify' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// SYNTAX: error: invalid pass pipeline 'builtin.module(relax-verify': expected ')'

// RUN: not relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(func.func(relax-verify))' 2>&1 | FileCheck %s --check-prefix=NESTED
// NESTED: error: pass 'relax-verify' runs on 'builtin.module'; it cannot be nested in 'func.func'

// RUN: not relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(relax-verify{bogus=1})' 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: error: pass 'relax-verify' has no option 'bogus'

// RUN: not relax-opt %S/Inputs/parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: parse-error.mlir:2:59: error: expected non-function type

// RUN: not relax-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: relax-opt: error: cannot read '{{.*}}does-not-exist.mlir'

// RUN: not relax-opt %S/Inputs/small.mlir --pass-pipeline='builtin.module(canonicalize{max-iterations=x})' 2>&1 | FileCheck %s --check-prefix=UPOPT
// UPOPT: error: invalid pipeline element 'canonicalize{max-iterations=x}'

// Dataflow blocks are no_inline, so upstream canonicalize and cse keep them.
// RUN: relax-opt %S/../../../relax_mlir/examples/attention_scores.mlir --canonicalize --cse --relax-verify | FileCheck %s --check-prefix=DATAFLOW
// DATAFLOW: scf.execute_region -> !relax.tensor<["batch", 8, "seq", "seq"], f32> no_inline {
// DATAFLOW: "relax.matmul"
// DATAFLOW: } {relax.dataflow}
