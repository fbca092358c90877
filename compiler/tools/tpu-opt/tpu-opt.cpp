// tpu-opt: runs the TPU compiler's passes one by one, for lit tests and for
// looking at each step of the lowering.
#include "tpu/Target/TPU/Passes.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, mlir::tosa::TosaDialect, mlir::arith::ArithDialect,
                  mlir::tpu::TPUDialect>();
  mlir::registerTransformsPasses();
  mlir::tosa::registerTosaOptPasses();
  mlir::tpu::registerTPUPasses();
  mlir::tpu::registerTPUTargetPasses();
  mlir::tpu::registerTPUPipelines();
  mlir::tpu::registerTPUTargetPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "TPU compiler pass driver\n", registry));
}
