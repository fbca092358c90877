//===- TPUInterfaces.td - what fusion asks of a target --------*- tablegen -*-===//

#ifndef TPU_INTERFACES
#define TPU_INTERFACES

include "mlir/IR/OpBase.td"

def TPU_FusionTargetInterface : AttrInterface<"FusionTargetInterface"> {
  let cppNamespace = "::mlir::tpu";
  let description = [{
    What the fusion pass (`tpu-fuse`) asks the module's target before it puts
    graph-level (TOSA) operations into one `tpu.fused` region: which ones its
    hardware can run together without a round trip through memory. The pass
    owns the shape of a group (a matrix producer and the chain of
    elementwise ops on its result; a set of row-local ops over the same
    rows) and the dataflow conditions; the target owns what each of its
    units can do.
  }];
  let methods = [
    InterfaceMethod<[{
      Whether `op` produces its result tile by tile where an epilogue can
      work on it (a matmul, a convolution).
    }], "bool", "canHeadEpilogue", (ins "::mlir::Operation *":$op)>,
    InterfaceMethod<[{
      Whether elementwise `op`, reading the epilogue's value `chain`, can be
      applied to each tile in place, and pays there, in the epilogue of
      `head`; `other` is its other operand (null for a unary op). A unary
      `op` whose result is smaller than `chain` (a pool over windows that
      lie within each tile) ends the epilogue where it joins.
    }], "bool", "canJoinEpilogue",
      (ins "::mlir::Operation *":$op, "::mlir::Value":$chain, "::mlir::Value":$other,
           "::mlir::Operation *":$head)>,
    InterfaceMethod<[{
      Whether `op` can run on tiles of whole rows with the other ops of a
      row-local group; `inGroup` tells which of its operands the group
      computes (the rest come from memory).
    }], "bool", "canJoinRowGroup",
      (ins "::mlir::Operation *":$op, "::llvm::function_ref<bool(::mlir::Value)>":$inGroup)>,
    InterfaceMethod<[{
      Whether `op` alone is worth a group: its lowering is several
      operations whose intermediates a group keeps on chip.
    }], "bool", "isGroupOnItsOwn", (ins "::mlir::Operation *":$op)>,
  ];
}

#endif // TPU_INTERFACES
