// What an instruction queue hands its instructions to.
#pragma once

#include "Machine.h"

#include "tpu/isa/Isa.h"

#include <functional>

namespace tpu::sim {

class ExecutionUnit {
public:
  virtual ~ExecutionUnit() = default;
  // The instructions it runs are those the opcode table assigns to this unit.
  virtual isa::Unit unit() const = 0;
  // Performs the instruction in the calling SystemC thread. A synchronous
  // unit returns once it has completed; the matrix unit returns once it has
  // started, and drain() waits for completion. The queue has checked the
  // instruction against the machine (checkFitsMachine in Legality.h); a unit
  // whose rules depend on its state throws tpu::Error with the reason when
  // the instruction breaks one, before changing any state.
  virtual void execute(const IssuedInstruction &issued) = 0;
  // Waits until every instruction it has started has completed; with
  // `weightLoadsOnly`, every weight load (mxu.ldw) it has started.
  virtual void drain(bool weightLoadsOnly = false) { (void)weightLoadsOnly; }
  // Runs `action` (for `issued`, a sync.push) once every instruction it has
  // started has completed, without holding up the calling thread; false
  // when the unit cannot, and the caller drains it instead.
  virtual bool whenCompleted(const IssuedInstruction &issued, std::function<void()> action) {
    (void)issued;
    (void)action;
    return false;
  }
};

} // namespace tpu::sim
