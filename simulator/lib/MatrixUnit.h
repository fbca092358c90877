// The weight-stationary R x C matrix unit (mxu.ldw, mxu.mm), pipelined: an
// mm starts feeding as soon as the previous one has fed its last row, and
// the next weight tile loads into the shadow plane while the array computes
// (docs/simulator.md#matrix-unit gives the timing in closed form).
//
// The front end (execute) decides when an instruction starts, the same way in
// both modes. What happens next depends on the mode: in fast mode the data
// path computes the whole mm at once and completion is scheduled from the
// closed form; in cycle mode a clocked process steps the PE registers and an
// mm completes when its last result actually leaves the array.
#pragma once

#include "ExecutionUnit.h"
#include "Machine.h"
#include "MatrixDatapath.h"

#include "tpu/isa/Legality.h"

#include <systemc>

#include <map>
#include <memory>
#include <optional>

namespace tpu::sim {

class MatrixUnit : public sc_core::sc_module, public ExecutionUnit {
public:
  sc_core::sc_port<BankInterface> banks;

  MatrixUnit(const sc_core::sc_module_name &name, Machine &machine);

  isa::Unit unit() const override { return isa::Unit::Matrix; }
  void execute(const IssuedInstruction &issued) override;
  void drain(bool weightLoadsOnly = false) override;
  // The pc of the oldest instruction started and not yet completed, if any.
  std::optional<uint32_t> inFlight() const;

private:
  // An instruction between its start and its completion.
  struct Started {
    uint32_t pc;
    uint64_t start;
    BankSet scratchpadBanks, accumulatorBanks;
    std::optional<unsigned> plane; // mm: the weight plane it multiplies with
  };

  void loadWeights(const IssuedInstruction &issued);
  void multiply(const IssuedInstruction &issued);
  void complete(uint64_t id, uint64_t cycle);
  void scheduleCompletion(uint64_t id, uint64_t cycle);
  // Processes: completions at their cycle; in cycle mode, the PE array.
  void completeInOrder();
  void stepArray();

  Machine &machine_;
  std::unique_ptr<MatrixDatapath> datapath_;
  // The shapes of the tiles in the two planes; activePlane_ says which
  // plane holds the active one.
  WeightTiles weightTiles_;
  unsigned activePlane_ = 0;
  // The latest mxu.ldw has written the shadow plane: a flip may use it and
  // the next mxu.ldw may start.
  uint64_t shadowLoadedAt_ = 0;
  uint64_t feederFreeAt_ = 0;       // the next mm may start entering the array
  unsigned planeUsers_[2] = {0, 0}; // started, uncompleted mms per plane
  uint64_t nextId_ = 0;
  std::map<uint64_t, Started> started_;
  std::multimap<uint64_t, uint64_t> completions_; // cycle -> id
  uint64_t nextArrayCycle_ = 0;                   // cycle mode: the first cycle not yet stepped
  sc_core::sc_event completed_, scheduled_, fed_;
};

} // namespace tpu::sim
