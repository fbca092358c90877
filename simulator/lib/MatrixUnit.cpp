#include "MatrixUnit.h"

#include "Timing.h"

namespace tpu::sim {

MatrixUnit::MatrixUnit(const sc_core::sc_module_name &name, Machine &machine)
    : sc_module(name), machine_(machine),
      core_(machine.config.array.rows, machine.config.array.cols, machine.config.array.dtype) {}

void MatrixUnit::execute(const isa::Instruction &instruction) {
  uint64_t rows = instruction.get(isa::Field::Rows);
  if (instruction.opcode == isa::Opcode::LoadWeights) {
    core_.loadWeights(instruction, machine_.scratchpad);
    sc_core::wait(machine_.clock.cycles(loadWeightsCycles(rows)));
    return;
  }
  MatMulResult result = core_.multiply(instruction, machine_.scratchpad, machine_.accumulator);
  machine_.stats.macs += result.macs;
  sc_core::wait(machine_.clock.cycles(matmulCycles(machine_.config, rows)));
  core_.writeBack(result, machine_.accumulator);
}

} // namespace tpu::sim
