// tpuc's pipeline: import, then one pass manager for graph optimization,
// the target's lowering and plans, then program emission.
#include "tpu/Compiler.h"

#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Frontend/OnnxImporter.h"
#include "tpu/FusionMode.h"
#include "tpu/Target/CUDA/EmitCUDA.h"
#include "tpu/Target/TPU/BundleEncoder.h"
#include "tpu/Target/TPU/Passes.h"
#include "tpu/isa/Error.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/Dialect/Tosa/Transforms/Passes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

namespace tpu::compiler {
namespace {

// "model.onnx: fc1 (Gemm)" for an imported node, "file:line:col" for text.
std::string describeLocation(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()))
      return fmt::format("{}: {}", mlir::tpu::sourceName(file), name.getName().str());
  return mlir::tpu::sourceName(loc);
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
                                            const FirstErrorHandler &errors,
                                            const TrainOptions &train) {
  if (endsWith(path, ".onnx"))
    return frontend::importOnnx(path, context, {train.batch, train.enabled});
  if (train.batch != 0)
    throw Error(
        fmt::format("--batch: {} is not an ONNX model; the batch is resized at import", path));
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

// Whole, so that it reads back: every weight (--mlir-elide-elementsattrs-if-
// larger=N shortens them for people) and every location, which names the
// model's node each instruction comes from.
std::string printed(mlir::ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, mlir::OpPrintingFlags().enableDebugInfo());
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

void registerMlirOptions() {
  static bool registered = false;
  if (registered)
    return;
  registered = true;
  // First: --mlir-print-ir-after=PASS and the like list the passes known
  // when they are registered.
  mlir::registerTransformsPasses();
  mlir::tosa::registerTosaOptPasses();
  mlir::tpu::registerTPUPasses();
  mlir::tpu::registerTPUTargetPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
}

// The training step built first, on the graph as imported: optimization
// folds weight reshapes and transposes into constants without the
// initializers' names, which is how tpu-autodiff finds the parameters.
void addTraining(mlir::PassManager &pm, const CompileOptions &options) {
  const TrainOptions &train = options.train;
  mlir::tpu::AutodiffOptions autodiff;
  autodiff.loss = train.loss;
  autodiff.optimizer = train.optimizer;
  autodiff.lr = train.lr;
  autodiff.momentum = train.momentum;
  autodiff.weightDecay = train.weight_decay;
  autodiff.trainable = train.trainable;
  pm.addPass(mlir::tpu::createAutodiff(autodiff));
}

// A CUDA bundle (docs/bundle.md): the source, its kernels, and the model's
// tensors laid out one after another, 256-byte aligned, in the host image.
Bundle cudaBundle(mlir::tpu::cuda::CudaSource source, const CompileOptions &options) {
  Bundle bundle;
  auto place = [&](const mlir::tpu::cuda::CudaTensor &tensor, TensorInfo::Role role) {
    TensorInfo info;
    info.name = tensor.name;
    info.shape = tensor.shape;
    info.dtype = isa::DType::F32;
    info.role = role;
    info.reduction_length = static_cast<uint64_t>(tensor.reduction_length);
    info.dram_address = bundle.dram_bytes;
    bundle.dram_bytes = (info.dram_address + info.bytes() + 255) / 256 * 256;
    return info;
  };
  for (const mlir::tpu::cuda::CudaTensor &input : source.inputs)
    bundle.inputs.push_back(place(input, TensorInfo::Role::Input));
  for (const mlir::tpu::cuda::CudaTensor &output : source.outputs)
    bundle.outputs.push_back(place(output, TensorInfo::Role::Output));
  CudaProgram program{options.gpu, options.fusion, std::move(source.text), {}};
  for (const mlir::tpu::cuda::CudaKernelInfo &kernel : source.kernels)
    program.kernels.push_back({kernel.name, kernel.source_ops, kernel.kind, kernel.global_bytes});
  bundle.cuda = std::move(program);
  return bundle;
}

} // namespace

void parseMlirOptions(const std::string &tool, const std::vector<std::string> &arguments) {
  registerMlirOptions();
  std::vector<const char *> argv{tool.c_str()};
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (!llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "", &errorStream)) {
    std::string message = llvm::StringRef(errors).trim().str();
    if (message.empty()) // cl reported it on stderr itself
      message = fmt::format("invalid MLIR option in: {}", fmt::join(arguments, " "));
    // cl prefixes its messages with the tool's name.
    if (llvm::StringRef(message).starts_with(tool + ": "))
      message = message.substr(tool.size() + 2);
    throw Error(message);
  }
}

std::string mlirOptionsHelp() {
  registerMlirOptions();
  std::map<std::string, std::string> options;
  for (const auto &[name, option] : llvm::cl::getRegisteredOptions())
    if (name.starts_with("mlir-") && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      options[name.str()] = option->HelpStr.str();
  std::string text;
  for (const auto &[name, help] : options)
    text += fmt::format("  --{:<44} {}\n", name, help);
  return text;
}

void compile(const CompileOptions &options) {
  std::optional<FusionMode> fusion = parseFusionMode(options.fusion);
  if (!fusion)
    throw Error(fmt::format("--fusion must be {}, got '{}'", fmt::join(kFusionModeNames, ", "),
                            options.fusion));
  mlir::MLIRContext context;
  // One function: nothing to run in parallel, and IR printing needs one thread.
  context.disableMultithreading();
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect, mlir::arith::ArithDialect,
                      mlir::tpu::TPUDialect>();
  FirstErrorHandler errors(context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      loadInput(options.input_path, context, errors, options.train);
  // The initializers tpu-autodiff can train: what a training bundle names as
  // the parameters that start as the model's values.
  std::vector<std::string> initializers;
  if (options.train.enabled)
    module->walk([&](mlir::tosa::ConstOp op) {
      if (auto name = op->getAttrOfType<mlir::StringAttr>("tpu.name"))
        initializers.push_back(name.str());
    });
  if (options.emit == EmitKind::OnnxImport)
    return writeText(options.output_path, printed(*module));

  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    throw Error("invalid pass manager options");
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  if (options.train.enabled)
    addTraining(pm, options);
  mlir::tpu::buildGraphOptimizationPipeline(pm);
  if (options.train.enabled) {
    // The gradients' transposes cancel, then the clean-up again.
    pm.addNestedPass<mlir::func::FuncOp>(mlir::tpu::createFoldTransposes());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
  }
  if (options.emit != EmitKind::Tosa) {
    mlir::tpu::TargetPipelineOptions target;
    target.config = options.config;
    target.fusion = options.fusion;
    mlir::tpu::buildFusionPipeline(pm, target);
  }
  bool cuda = options.emit == EmitKind::Cuda;
  if (options.emit != EmitKind::Tosa && options.emit != EmitKind::Fused && !cuda) {
    mlir::tpu::buildTPULoweringPipeline(pm, options.dram_dtype);
    if (options.print_fusion_groups)
      pm.addNestedPass<mlir::func::FuncOp>(
          mlir::tpu::createPrintFusionGroups(mlir::tpu::PrintFusionGroupsOptions{options.fusion}));
  }
  if (options.emit == EmitKind::Isa || options.emit == EmitKind::Asm ||
      options.emit == EmitKind::Bundle)
    mlir::tpu::buildISAPipeline(pm, *fusion == FusionMode::None);
  if (mlir::failed(pm.run(*module)))
    errors.raise("compilation");
  if (cuda) {
    mlir::tpu::cuda::CudaOptions cudaOptions;
    cudaOptions.gpu = options.gpu;
    cudaOptions.model_path = options.input_path;
    cudaOptions.fusion = options.fusion;
    mlir::FailureOr<mlir::tpu::cuda::CudaSource> source =
        mlir::tpu::cuda::emitCuda(*module, cudaOptions);
    if (mlir::failed(source))
      errors.raise("CUDA code generation");
    if (!endsWith(options.output_path, ".tpub"))
      return writeText(options.output_path, source->text);
    return writeBundle(cudaBundle(*source, options), options.output_path);
  }
  if (options.emit != EmitKind::Asm && options.emit != EmitKind::Bundle)
    return writeText(options.output_path, printed(*module));

  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    throw Error(fmt::format("{}: no function @main", options.input_path));
  mlir::FailureOr<Bundle> encoded = codegen::encodeBundle(main);
  if (mlir::failed(encoded))
    errors.raise("encoding");
  Bundle &bundle = *encoded;
  if (options.train.enabled) {
    if (!endsWith(options.input_path, ".onnx"))
      throw Error(fmt::format("{}: a training bundle is compiled from the .onnx model, whose "
                              "initializers it starts from",
                              options.input_path));
    TrainingInfo training;
    training.model_path = std::filesystem::absolute(options.input_path).string();
    for (const TensorInfo &output : bundle.outputs)
      if (output.state &&
          std::find(initializers.begin(), initializers.end(), output.name) != initializers.end())
        training.parameters.push_back(output.name);
    bundle.training = training;
  }
  bundle.validate();
  if (options.emit == EmitKind::Asm)
    return writeText(options.output_path, annotatedAssembly(bundle));
  if (options.output_path.empty() || options.output_path == "-")
    throw Error("a bundle is binary: give an output file with -o");
  writeBundle(bundle, options.output_path);
}

} // namespace tpu::compiler
