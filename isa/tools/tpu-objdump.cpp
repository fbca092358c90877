// tpu-objdump: prints what a program bundle holds (header, config, tensor map,
// disassembly with source ops), or the ISA's opcode table.
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

void printBundle(const std::string &path) {
  tpu::Bundle bundle = tpu::readBundle(path);
  const tpu::HardwareConfig &config = bundle.config;
  fmt::print("{}: bundle version {}, {} instructions, {} constant bytes at {:#x}, "
             "dram_bytes {:#x}\n",
             path, tpu::kBundleVersion, bundle.program.size(), bundle.constants.size(),
             bundle.constant_address, bundle.dram_bytes);
  fmt::print("config: {} ({} x {} {} array)\n", config.name, config.array.rows, config.array.cols,
             tpu::isa::dtypeName(config.array.dtype));
  printTensors("inputs", bundle.inputs);
  printTensors("outputs", bundle.outputs);
  if (bundle.training)
    fmt::print("training step of {}; parameters from its initializers: {}\n",
               bundle.training->model_path, fmt::join(bundle.training->parameters, ", "));
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
