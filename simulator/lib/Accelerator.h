// The top module: the controller, the three instruction queues and their
// FIFOs, and the DMA engine, matrix unit and vector unit behind them.
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
  Accelerator(const sc_core::sc_module_name &name, const Bundle &bundle,
              std::vector<uint8_t> &dram);

  // Runs the kernel until every queue has drained; throws tpu::Error on a
  // fault or a deadlock.
  SimStats run();

private:
  // Called when the kernel has run out of events: true when the program
  // completed, false when the queues wait for each other.
  bool drained() const;
  std::string deadlockReport();

  Machine machine_;
  sc_core::sc_fifo<IssuedInstruction> loadFifo_;
  sc_core::sc_fifo<IssuedInstruction> computeFifo_;
  sc_core::sc_fifo<IssuedInstruction> storeFifo_;
  Controller controller_;
  DmaEngine dma_;
  MatrixUnit matrix_;
  VectorUnit vector_;
  InstructionQueue loadQueue_;
  InstructionQueue computeQueue_;
  InstructionQueue storeQueue_;
};

} // namespace tpu::sim
