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
               "for tpusim, or (--target=cuda) into one CUDA C++ file or a CUDA bundle (.tpub) "
               "that tpusim runs through its CUDA backend",
               "tpuc"};
  tpu::compiler::CompileOptions options;
  app.add_option("model", options.input_path,
                 "Model to compile (.onnx, or .mlir at any level --emit writes)")
      ->required();
  app.add_option("-o,--output", options.output_path,
                 "Output file (bundle for --emit=bundle; text kinds default to stdout; with "
                 "--emit=cuda, a name ending in .tpub gets a CUDA bundle, any other the source)");
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
                                                 {"bundle", EmitKind::Bundle},
                                                 {"cuda", EmitKind::Cuda}};
  std::string emit = "bundle";
  app.add_option("--emit", emit,
                 "What to write: onnx-import (the graph as imported), tosa (optimized graph), "
                 "fused (the graph with the target's fusion groups), tpu (hardware dialect with "
                 "its plans), isa (the instructions as MLIR), asm (ISA program), bundle "
                 "(default for --target=tpu), cuda (the CUDA source; default for --target=cuda)")
      ->check(CLI::IsMember(kinds));
  std::string target = "tpu";
  app.add_option("--target", target,
                 "What to compile for: tpu (the accelerator's program bundle; the default) or "
                 "cuda (one CUDA C++ file, a kernel per fusion group and a host driver, or with "
                 "-o OUT.tpub a CUDA bundle of it for tpusim; docs/gpu.md)")
      ->check(CLI::IsMember({"tpu", "cuda"}));
  app.add_option("--gpu", options.gpu,
                 "With --target=cuda: the GPU the tiles are sized for, sm_80 (default), sm_90 or "
                 "sm_90a; sm_90a also runs matmuls with weights and convolutions on Hopper's "
                 "warpgroup MMA (wgmma) fed by TMA, which only sm_90a builds accept")
      ->check(CLI::IsMember({"sm_80", "sm_90", "sm_90a"}));
  app.add_option("--fusion", options.fusion,
                 "Operator fusion: none (every op through DRAM), epilogue (bias, residual and "
                 "activation applied to matmul results in the accumulators), full (also groups "
                 "of elementwise ops and row reductions, such as a whole softmax, run on tiles "
                 "of whole rows; the default)")
      ->check(CLI::IsMember(tpu::kFusionModeNames));
  app.add_option("--dram-dtype", options.dram_dtype,
                 "What DRAM holds the tensors only the matrix unit reads: array (the array's "
                 "dtype: on a bf16 array the weights, rounded to nearest even, and the "
                 "activations no other unit reads, at half the bytes; the default) or f32 "
                 "(every tensor fp32, to compare traffic and energy; the outputs are the same "
                 "bits either way)")
      ->check(CLI::IsMember({"array", "f32"}));
  app.add_flag("--print-fusion-groups", options.print_fusion_groups,
               "Print the fusion groups chosen (one line each) on stdout");
  tpu::compiler::TrainOptions &train = options.train;
  app.add_flag("--train", train.enabled,
               "Compile a training step instead: inputs, labels and parameters in; loss, the "
               "correct count (cross-entropy) and updated parameters out, marked as state in "
               "the bundle, which tpusim --train runs (--emit=tosa shows the training graph, "
               "onnx-import the graph as imported for training; docs/training.md)");
  app.add_option("--loss", train.loss, "With --train: cross-entropy (integer labels) or mse")
      ->check(CLI::IsMember({"cross-entropy", "mse"}));
  app.add_option("--optimizer", train.optimizer, "With --train: sgd or momentum")
      ->check(CLI::IsMember({"sgd", "momentum"}));
  app.add_option("--lr", train.lr, "With --train: the learning rate (default 0.1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--momentum", train.momentum,
                 "With --train --optimizer=momentum: the coefficient (default 0.9)")
      ->check(CLI::Range(0.0, 0.999999));
  app.add_option("--weight-decay", train.weight_decay,
                 "With --train: L2 weight decay added to each gradient (default 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--batch", train.batch,
                 "With --train: the batch size, the first axis of every model input "
                 "(default: the model's)")
      ->check(CLI::PositiveNumber);
  app.add_option("--trainable", train.trainable,
                 "With --train: the initializers to train, by name (default: every float one)")
      ->delimiter(',');
  // MLIR's own options (pass manager, timing, printing) pass through.
  app.allow_extras();
  app.footer("MLIR options (see mlir-opt):\n" + tpu::compiler::mlirOptionsHelp());
  return tpu::runTool(app, argc, argv, [&] {
    tpu::compiler::parseMlirOptions("tpuc", app.remaining());
    options.emit = kinds.at(emit);
    bool emitGiven = app.count("--emit") > 0;
    if (target == "cuda" && !emitGiven)
      options.emit = EmitKind::Cuda;
    bool cudaLevel = options.emit == EmitKind::Cuda;
    bool graphLevel = options.emit == EmitKind::OnnxImport || options.emit == EmitKind::Tosa ||
                      options.emit == EmitKind::Fused;
    if (target == "cuda" && !cudaLevel && !graphLevel)
      throw tpu::Error(fmt::format("--target=cuda writes CUDA source (--emit=cuda) or the "
                                   "graph levels onnx-import, tosa and fused, not --emit={}",
                                   emit));
    if (app.count("--gpu") && !cudaLevel)
      throw tpu::Error("--gpu needs --target=cuda");
    if (cudaLevel && train.enabled)
      throw tpu::Error("--train: the CUDA target compiles inference only");
    bool trainOption = app.count("--loss") || app.count("--optimizer") || app.count("--lr") ||
                       app.count("--momentum") || app.count("--weight-decay") ||
                       app.count("--batch") || app.count("--trainable");
    if (trainOption && !train.enabled)
      throw tpu::Error("--loss, --optimizer, --lr, --momentum, --weight-decay, --batch and "
                       "--trainable need --train");
    if (options.emit == EmitKind::Bundle && options.output_path.empty())
      throw tpu::Error("-o OUT.tpub is required to write a bundle");
    tpu::compiler::compile(options);
    return 0;
  });
}
