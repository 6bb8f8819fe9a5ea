// Where relax-thread-buffers cannot thread (a join between a buffer and its use), or when it did not run,
// ownership-based-buffer-deallocation is preceded by relax-check-deallocation-order: a diagnostic instead
// of MLIR 22's abort (isBeforeInBlock: "Expected other operation to have the same parent block").
// RUN: relax-opt %s --relax-thread-buffers --ownership-based-buffer-deallocation --split-input-file --verify-diagnostics
// RUN: relax-opt %s --ownership-based-buffer-deallocation --split-input-file --verify-diagnostics

func.func private @use(memref<?xf32>, memref<?xf32>)

// expected-error@below {{in @join, buffers %alloc and %alloc_0, defined in two different blocks, are both live into a later block}}
func.func @join(%n: index, %c: i1) {
  %a = memref.alloc(%n) : memref<?xf32>
  cf.cond_br %c, ^bb1, ^bb4
^bb1:
  %b = memref.alloc(%n) : memref<?xf32>
  cf.cond_br %c, ^bb2, ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  func.call @use(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  return
^bb4:
  return
}
