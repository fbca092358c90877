// The top module: the controller, the three instruction queues and their
// FIFOs, and behind them the two DMA engines, the matrix unit and the vector
// unit.
#pragma once

#include "Controller.h"
#include "DmaEngine.h"
#include "InstructionQueue.h"
#include "Machine.h"
#include "MatrixUnit.h"
#include "VectorUnit.h"

#include <systemc>

namespace tpu::sim {

class Accelerator : public sc_core::sc_module {
public:
  Accelerator(const sc_core::sc_module_name &name, const Bundle &bundle, std::vector<uint8_t> &dram,
              const SimOptions &options);

  // Runs the kernel until every queue has drained; throws tpu::Error on a
  // fault, a deadlock or the watchdog.
  SimStats run();

private:
  // Called when the kernel has run out of events: true when the program
  // completed, false when the queues wait for each other.
  bool drained() const;
  // What each unfinished queue (and, for the watchdog, the matrix unit and
  // the controller) is doing, for deadlock and watchdog errors.
  std::string blockedQueues() const;

  const SimOptions &options_;
  const std::vector<isa::Instruction> &program_;
  Machine machine_;
  sc_core::sc_fifo<IssuedInstruction> loadFifo_;
  sc_core::sc_fifo<IssuedInstruction> computeFifo_;
  sc_core::sc_fifo<IssuedInstruction> storeFifo_;
  Controller controller_;
  DmaEngine dmaLoad_;
  DmaEngine dmaStore_;
  MatrixUnit matrix_;
  VectorUnit vector_;
  InstructionQueue loadQueue_;
  InstructionQueue computeQueue_;
  InstructionQueue storeQueue_;
};

} // namespace tpu::sim
