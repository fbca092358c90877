// tpuc: compiles an ONNX model (or TOSA-level MLIR) into a program bundle for
// the accelerator.
#include "tpu/Compiler.h"
#include "tpu/isa/Error.h"

#include "ToolMain.h"

#include <map>

int main(int argc, char **argv) {
  CLI::App app{"tpuc: compile an ONNX model or a TOSA-level .mlir file into a TPU program "
               "bundle (.tpub) for tpusim",
               "tpuc"};
  tpu::compiler::CompileOptions options;
  app.add_option("model", options.input_path, "Model to compile (.onnx, or .mlir at TOSA level)")
      ->required();
  app.add_option("-o,--output", options.output_path,
                 "Output file (bundle for --emit=bundle; text kinds default to stdout)");
  app.add_option("--config", options.config_path,
                 "Hardware config JSON (default: configs/tpu-32x32.json)");
  const std::map<std::string, tpu::compiler::EmitKind> kinds = {
      {"tosa", tpu::compiler::EmitKind::Tosa},
      {"tpu", tpu::compiler::EmitKind::TPU},
      {"asm", tpu::compiler::EmitKind::Asm},
      {"bundle", tpu::compiler::EmitKind::Bundle}};
  std::string emit = "bundle";
  app.add_option("--emit", emit,
                 "What to write: tosa (optimized graph), tpu (hardware dialect), asm (ISA "
                 "program), bundle (default)")
      ->check(CLI::IsMember(kinds));
  app.add_option("--fusion", options.fusion,
                 "Operator fusion: none (every op through DRAM), epilogue (bias, residual and "
                 "activation applied to matmul results in the accumulators), full (also groups "
                 "of elementwise ops and row reductions, such as a whole softmax, run on tiles "
                 "of whole rows; the default)")
      ->check(CLI::IsMember({"none", "epilogue", "full"}));
  app.add_flag("--print-fusion-groups", options.print_fusion_groups,
               "Print the fusion groups chosen (one line each) on stdout");
  return tpu::runTool(app, argc, argv, [&] {
    options.emit = kinds.at(emit);
    if (options.emit == tpu::compiler::EmitKind::Bundle && options.output_path.empty())
      throw tpu::Error("-o OUT.tpub is required to write a bundle");
    tpu::compiler::compile(options);
    return 0;
  });
}
