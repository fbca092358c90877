// tpu-objdump: prints what a program bundle holds (header, config, tensor map,
// compulsory work, disassembly with source ops; for a CUDA bundle its GPU and
// kernels), or the ISA's opcode table.
#include "tpu/isa/Bundle.h"
#include "tpu/isa/Error.h"

#include "ToolMain.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>

namespace {

void printTensors(std::string_view heading, const std::vector<tpu::TensorInfo> &tensors) {
  fmt::print("{}:\n", heading);
  for (const tpu::TensorInfo &tensor : tensors) {
    fmt::print("  {} {}[{}] at {:#x}, {} bytes", tensor.name, tpu::isa::dtypeName(tensor.dtype),
               fmt::join(tensor.shape, ", "), tensor.dram_address, tensor.bytes());
    if (tensor.role == tpu::TensorInfo::Role::Output)
      fmt::print(", reduction length {}", tensor.reduction_length);
    if (tensor.host_type == tpu::HostType::I64)
      fmt::print(", host type i64");
    if (tensor.state)
      fmt::print(", state (the next value of input '{}')", tensor.name);
    fmt::print("\n");
  }
}

// The compiler's record of what the model and each source op must do
// (docs/bundle.md), where the bundle has one.
void printWork(const tpu::Bundle &bundle) {
  if (!bundle.work)
    return;
  fmt::print("work: {} compulsory DRAM bytes\n", bundle.work->dram_bytes);
  for (size_t index = 0; index < bundle.source_ops.size(); ++index) {
    const tpu::SourceWork &work = bundle.work->source_ops[index];
    std::vector<std::string> gemms;
    for (const tpu::GemmShape &gemm : work.gemms)
      gemms.push_back(fmt::format("{}x{}x{}x{}", gemm.batch, gemm.m, gemm.k, gemm.n));
    fmt::print("  {}: gemms [{}], {} vector elements ({} transcendental), {} DRAM bytes\n",
               bundle.source_ops[index], fmt::join(gemms, ", "), work.vector_elements,
               work.transcendental_elements, work.dram_bytes);
  }
}

// A CUDA bundle (docs/bundle.md#cuda-bundles): its tensors in the host image
// and its kernels; the source is what tpuc -o OUT.cu writes.
void printCudaBundle(const std::string &path, const tpu::Bundle &bundle) {
  const tpu::CudaProgram &cuda = *bundle.cuda;
  fmt::print("{}: CUDA bundle version {} for {}, fusion {}, {} source bytes, host image {:#x} "
             "bytes\n",
             path, tpu::kBundleVersion, cuda.gpu, cuda.fusion, cuda.source.size(),
             bundle.dram_bytes);
  printTensors("inputs", bundle.inputs);
  printTensors("outputs", bundle.outputs);
  fmt::print("kernels:\n");
  for (const tpu::CudaKernel &kernel : cuda.kernels)
    fmt::print("  {} ({}): {}, {} global bytes\n", kernel.name, kernel.kind, kernel.source_ops,
               kernel.global_bytes);
}

void printBundle(const std::string &path) {
  tpu::Bundle bundle = tpu::readBundle(path);
  if (bundle.cuda)
    return printCudaBundle(path, bundle);
  const tpu::HardwareConfig &config = bundle.config;
  size_t referenceElements = 0;
  for (const tpu::ReferenceConstant &constant : bundle.reference_constants)
    referenceElements += constant.values.size();
  fmt::print("{}: {} instructions, {} constant bytes at {:#x}, dram_bytes {:#x}\n", path,
             bundle.program.size(), bundle.constants.size(), bundle.constant_address,
             bundle.dram_bytes);
  if (!bundle.reference_constants.empty())
    fmt::print("{} constants ({} elements) stored as bf16, with their fp32 values for the "
               "output check\n",
               bundle.reference_constants.size(), referenceElements);
  fmt::print("config: {} ({} x {} {} array)\n", config.name, config.array.rows, config.array.cols,
             tpu::isa::dtypeName(config.array.dtype));
  printTensors("inputs", bundle.inputs);
  printTensors("outputs", bundle.outputs);
  if (bundle.training)
    fmt::print("training step of {}; parameters from its initializers: {}\n",
               bundle.training->model_path, fmt::join(bundle.training->parameters, ", "));
  printWork(bundle);
  fmt::print("program:\n");
  size_t indexWidth = std::to_string(bundle.program.size() - 1).size();
  for (size_t index = 0; index < bundle.program.size(); ++index)
    fmt::print("  {:>{}}  {}  # {}\n", index, indexWidth,
               tpu::isa::disassemble(bundle.program[index]),
               bundle.source_ops[bundle.source_of[index]]);
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Prints the contents of a TPU program bundle (.tpub).", "tpu-objdump"};
  std::string bundlePath;
  bool isaTable = false;
  auto *bundleOption = app.add_option("bundle", bundlePath, "Bundle to disassemble");
  app.add_flag("--isa-table", isaTable, "Print the opcode table (markdown) instead")
      ->excludes(bundleOption);
  return tpu::runTool(app, argc, argv, [&] {
    if (isaTable)
      fmt::print("{}", tpu::isa::opcodeTableMarkdown());
    else if (!bundlePath.empty())
      printBundle(bundlePath);
    else
      throw tpu::Error("expected a bundle path or --isa-table (see --help)");
    return 0;
  });
}
