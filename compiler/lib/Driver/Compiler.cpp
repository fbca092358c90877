// tpuc's pipeline: import, graph optimization, lowering to the TPU dialect,
// program emission.
#include "tpu/Compiler.h"

#include "tpu/CodeGen/ProgramEmitter.h"
#include "tpu/Frontend/OnnxImporter.h"
#include "tpu/Transforms/Passes.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>
#include <map>

namespace tpu::compiler {
namespace {

std::string describeLocation(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc))
    return fmt::format("{}:{}:{}", file.getFilename().str(), file.getLine(), file.getColumn());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

// Keeps the first error MLIR reports, so that a failed pass becomes one line.
class FirstErrorHandler {
public:
  explicit FirstErrorHandler(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error && message.empty())
            message = fmt::format("{}: {}", describeLocation(diag.getLocation()), diag.str());
          return mlir::success();
        }) {}
  [[noreturn]] void raise(const std::string &stage) const {
    throw Error(message.empty() ? stage + " failed" : message);
  }

private:
  std::string message;
  mlir::ScopedDiagnosticHandler handler;
};

bool endsWith(const std::string &text, const std::string &suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

mlir::OwningOpRef<mlir::ModuleOp> loadInput(const std::string &path, mlir::MLIRContext &context,
                                            const FirstErrorHandler &errors) {
  if (endsWith(path, ".onnx"))
    return frontend::importOnnx(path, context);
  if (!endsWith(path, ".mlir"))
    throw Error(fmt::format("{}: unknown input kind; expected a .onnx or .mlir file", path));
  if (!std::ifstream(path))
    throw Error(fmt::format("{}: cannot open the input file", path));
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceFile<mlir::ModuleOp>(path, &context);
  if (!module)
    errors.raise(path + ": parsing");
  return module;
}

void writeText(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream file(path);
  if (!(file << text))
    throw Error(fmt::format("{}: cannot write the output file", path));
}

// IR for people to read: weights longer than a few values print as `...`.
std::string printed(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, mlir::OpPrintingFlags().elideLargeElementsAttrs(16));
  return text;
}

// One line per fusion group: its number, kind and members in order.
std::string fusionGroups(mlir::ModuleOp module, const std::string &fusion) {
  std::map<int64_t, std::vector<mlir::Operation *>> groups;
  module.walk([&](mlir::Operation *op) {
    if (auto group = op->getAttrOfType<mlir::IntegerAttr>(mlir::tpu::kFusionGroupAttr))
      groups[group.getInt()].push_back(op);
  });
  std::string text =
      fmt::format("fusion {}: {} group{}\n", fusion, groups.size(), groups.size() == 1 ? "" : "s");
  for (const auto &[number, members] : groups) {
    bool epilogue = llvm::isa<mlir::tpu::MatMulOp>(members.front());
    std::vector<std::string> names;
    for (mlir::Operation *op : members)
      names.push_back(fmt::format("{} [{}]", describeLocation(op->getLoc()),
                                  op->getName().getStringRef().str()));
    text += fmt::format("  group {} ({}): {}\n", number,
                        epilogue ? "matmul epilogue in the accumulators"
                                 : "row-local ops in the scratchpad",
                        fmt::join(names, " -> "));
  }
  return text;
}

std::string annotatedAssembly(const Bundle &bundle) {
  std::string text =
      fmt::format("# {} instructions for '{}' ({}x{} array)\n", bundle.program.size(),
                  bundle.config.name, bundle.config.array.rows, bundle.config.array.cols);
  for (size_t i = 0; i < bundle.program.size(); ++i)
    text += fmt::format("{:<110} # {}\n", isa::disassemble(bundle.program[i]),
                        bundle.source_ops[bundle.source_of[i]]);
  return text;
}

} // namespace

void compile(const CompileOptions &options) {
  HardwareConfig config = HardwareConfig::fromFile(
      options.config_path.empty() ? defaultConfigPath() : options.config_path);

  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect, mlir::arith::ArithDialect,
                      mlir::tpu::TPUDialect>();
  FirstErrorHandler errors(context);
  mlir::OwningOpRef<mlir::ModuleOp> module = loadInput(options.input_path, context, errors);

  mlir::PassManager graphPasses(&context);
  mlir::tpu::buildGraphOptimizationPipeline(graphPasses);
  if (mlir::failed(graphPasses.run(*module)))
    errors.raise("graph optimization");
  if (options.emit == EmitKind::Tosa)
    return writeText(options.output_path, printed(*module));

  if (options.fusion != "none" && options.fusion != "epilogue" && options.fusion != "full")
    throw Error(fmt::format("--fusion must be none, epilogue or full, got '{}'", options.fusion));
  mlir::PassManager lowering(&context);
  mlir::tpu::buildTPULoweringPipeline(lowering, options.fusion, options.config_path);
  if (mlir::failed(lowering.run(*module)))
    errors.raise("lowering to the TPU dialect");
  if (options.print_fusion_groups)
    std::cout << fusionGroups(*module, options.fusion);
  if (options.emit == EmitKind::TPU)
    return writeText(options.output_path, printed(*module));

  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    throw Error(fmt::format("{}: no function @main", options.input_path));
  Bundle bundle = codegen::emitProgram(main, config);
  bundle.validate();
  if (options.emit == EmitKind::Asm)
    return writeText(options.output_path, annotatedAssembly(bundle));
  if (options.output_path.empty() || options.output_path == "-")
    throw Error("a bundle is binary: give an output file with -o");
  writeBundle(bundle, options.output_path);
}

} // namespace tpu::compiler
