// onnx-to-tosa MODEL.onnx: prints the graph-level TOSA that `tpuc --emit=tosa`
// shows, but with every constant written out, so that upstream MLIR can run
// it (tpuc elides large constants for people to read).
#include "tpu/Frontend/OnnxImporter.h"
#include "tpu/Transforms/Passes.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: onnx-to-tosa MODEL.onnx | --list-operators\n";
    return 2;
  }
  if (std::string(argv[1]) == "--list-operators") {
    for (const std::string &op : tpu::frontend::supportedOperators())
      std::cout << op << "\n";
    return 0;
  }
  try {
    mlir::MLIRContext context;
    context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
    mlir::OwningOpRef<mlir::ModuleOp> module = tpu::frontend::importOnnx(argv[1], context);
    mlir::PassManager passes(&context);
    mlir::tpu::buildGraphOptimizationPipeline(passes);
    if (mlir::failed(passes.run(*module)))
      return 1;
    module->print(llvm::outs());
    return 0;
  } catch (const tpu::Error &error) {
    std::cerr << "onnx-to-tosa: error: " << error.what() << "\n";
    return 1;
  }
}
