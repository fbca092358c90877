//===- TPUDialect.td - the TPU dialect ------------------------*- tablegen -*-===//

#ifndef TPU_DIALECT
#define TPU_DIALECT

include "mlir/IR/DialectBase.td"

def TPU_Dialect : Dialect {
  let name = "tpu";
  let cppNamespace = "::mlir::tpu";
  let summary = "Hardware-level operations of the systolic-array accelerator";
  let description = [{
    Each operation maps onto one unit of the accelerator: `tpu.matmul` onto
    the weight-stationary matrix unit, `tpu.binary`, `tpu.unary` and
    `tpu.clamp` and `tpu.row_reduce` onto the vector unit. Operands are 2-D fp32 tensors viewed
    row-major (`tpu.view` reinterprets a shape without moving data), so that
    a tensor is a DRAM region of rows the DMA engine can stride through.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // `tpu.target` on a module must be a #tpu.target.
  let hasOperationAttrVerify = 1;
  // Folding a view of a constant yields an attribute; this makes it an op.
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // TPU_DIALECT
