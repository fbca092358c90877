// tpuc: compiles an ONNX model (or MLIR at any level tpuc writes) into a
// program bundle for the accelerator.
#include "tpu/Compiler.h"
#include "tpu/FusionMode.h"
#include "tpu/isa/Error.h"
#include "tpu/isa/HardwareConfig.h"

#include "ToolMain.h"

#include <fmt/ranges.h>

#include <map>

int main(int argc, char **argv) {
  using tpu::compiler::EmitKind;
  CLI::App app{"tpuc: compile an ONNX model or an .mlir file into a TPU program bundle (.tpub) "
               "for tpusim",
               "tpuc"};
  tpu::compiler::CompileOptions options;
  app.add_option("model", options.input_path,
                 "Model to compile (.onnx, or .mlir at any level --emit writes)")
      ->required();
  app.add_option("-o,--output", options.output_path,
                 "Output file (bundle for --emit=bundle; text kinds default to stdout)");
  app.add_option("--config", options.config,
                 fmt::format("Hardware config: a preset ({}) or a JSON file (default: {}, or "
                             "the target an .mlir input names)",
                             fmt::join(tpu::presetNames(), ", "), tpu::kDefaultPreset));
  const std::map<std::string, EmitKind> kinds = {{"onnx-import", EmitKind::OnnxImport},
                                                 {"tosa", EmitKind::Tosa},
                                                 {"fused", EmitKind::Fused},
                                                 {"tpu", EmitKind::TPU},
                                                 {"isa", EmitKind::Isa},
                                                 {"asm", EmitKind::Asm},
                                                 {"bundle", EmitKind::Bundle}};
  std::string emit = "bundle";
  app.add_option("--emit", emit,
                 "What to write: onnx-import (the graph as imported), tosa (optimized graph), "
                 "fused (the graph with the target's fusion groups), tpu (hardware dialect with "
                 "its plans), isa (the instructions as MLIR), asm (ISA program), bundle "
                 "(default)")
      ->check(CLI::IsMember(kinds));
  app.add_option("--fusion", options.fusion,
                 "Operator fusion: none (every op through DRAM), epilogue (bias, residual and "
                 "activation applied to matmul results in the accumulators), full (also groups "
                 "of elementwise ops and row reductions, such as a whole softmax, run on tiles "
                 "of whole rows; the default)")
      ->check(CLI::IsMember(tpu::kFusionModeNames));
  app.add_flag("--print-fusion-groups", options.print_fusion_groups,
               "Print the fusion groups chosen (one line each) on stdout");
  // MLIR's own options (pass manager, timing, printing) pass through.
  app.allow_extras();
  app.footer("MLIR options (see mlir-opt):\n" + tpu::compiler::mlirOptionsHelp());
  return tpu::runTool(app, argc, argv, [&] {
    tpu::compiler::parseMlirOptions("tpuc", app.remaining());
    options.emit = kinds.at(emit);
    if (options.emit == EmitKind::Bundle && options.output_path.empty())
      throw tpu::Error("-o OUT.tpub is required to write a bundle");
    tpu::compiler::compile(options);
    return 0;
  });
}
