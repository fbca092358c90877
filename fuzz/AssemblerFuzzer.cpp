// The assembler (tpu::isa::assemble): any text either assembles or is
// rejected with tpu::Error; a program it accepts survives disassembly and
// encoding unchanged.
#include "FuzzHarness.h"

#include "tpu/isa/Isa.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tpu::isa;
  tpu::fuzz::rejectOnlyWithError([&] {
    std::vector<Instruction> program = assemble(tpu::fuzz::asText(data, size));
    tpu::fuzz::expect(assemble(disassemble(program)) == program,
                      "assemble(disassemble(program)) == program");
    for (const Instruction &instruction : program)
      tpu::fuzz::expect(decode(encode(instruction).data()) == instruction,
                        "decode(encode(instruction)) == instruction");
  });
  return 0;
}
