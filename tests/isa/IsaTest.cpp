#include "tpu/isa/Isa.h"
#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

using namespace tpu::isa;
using ::testing::HasSubstr;

namespace {

constexpr int kSamplesPerOpcode = 300;

uint64_t maxValue(const FieldInfo &field) { return (uint64_t{1} << field.bits) - 1; }

unsigned fieldOffset(const OpcodeInfo &info, Field field) {
  unsigned offset = kOpcodeBits;
  for (const FieldInfo &f : info.fields) {
    if (f.field == field)
      return offset;
    offset += f.bits;
  }
  ADD_FAILURE() << info.mnemonic << " has no field " << fieldName(field);
  return 0;
}

unsigned usedBits(const OpcodeInfo &info) {
  unsigned bits = kOpcodeBits;
  for (const FieldInfo &field : info.fields)
    bits += field.bits;
  return bits;
}

// Random legal instructions, biased towards 0 and each field's maximum.
class InstructionSampler {
public:
  Instruction sample(const OpcodeInfo &info) {
    for (;;) {
      Instruction instruction;
      instruction.opcode = info.opcode;
      for (const FieldInfo &field : info.fields)
        instruction.set(field.field, randomValue(field));
      try {
        validateFields(instruction);
        return instruction;
      } catch (const tpu::Error &) {
        // An illegal enumerated value or from == to; draw again.
      }
    }
  }

  std::mt19937_64 &engine() { return engine_; }

private:
  uint64_t randomValue(const FieldInfo &field) {
    switch (engine_() % 4) {
    case 0:
      return 0;
    case 1:
      return maxValue(field);
    default:
      return std::uniform_int_distribution<uint64_t>(0, maxValue(field))(engine_);
    }
  }

  std::mt19937_64 engine_{20240607};
};

template <typename Function> std::string errorOf(Function function) {
  try {
    function();
  } catch (const tpu::Error &error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a tpu::Error";
  return {};
}

std::string assembleError(std::string_view text) {
  return errorOf([&] { assemble(text); });
}

} // namespace

TEST(OpcodeTable, IsConsistent) {
  std::set<std::string_view> mnemonics;
  std::set<unsigned> codes;
  for (const OpcodeInfo &info : opcodeTable()) {
    EXPECT_TRUE(mnemonics.insert(info.mnemonic).second) << info.mnemonic;
    EXPECT_TRUE(codes.insert(static_cast<unsigned>(info.opcode)).second) << info.mnemonic;
    EXPECT_LE(usedBits(info), kInstructionBytes * 8) << info.mnemonic;
    EXPECT_FALSE(info.semantics.empty()) << info.mnemonic;
    std::set<Field> fields;
    for (const FieldInfo &field : info.fields) {
      EXPECT_TRUE(fields.insert(field.field).second) << info.mnemonic;
      EXPECT_GE(field.bits, 1) << info.mnemonic;
      EXPECT_LE(field.bits, 63) << info.mnemonic;
    }
    EXPECT_EQ(findMnemonic(info.mnemonic), &info);
    EXPECT_EQ(findOpcode(static_cast<uint8_t>(info.opcode)), &info);
  }
  for (unsigned index = 0; index < kNumFields; ++index) {
    auto field = static_cast<Field>(index);
    EXPECT_FALSE(fieldName(field).empty());
    EXPECT_FALSE(fieldDescription(field).empty()) << fieldName(field);
  }
}

TEST(Isa, EveryOpcodeRoundTripsThroughEncodingAndAssembly) {
  InstructionSampler sampler;
  for (const OpcodeInfo &info : opcodeTable()) {
    for (int sample = 0; sample < kSamplesPerOpcode; ++sample) {
      Instruction instruction = sampler.sample(info);
      std::string text = disassemble(instruction);
      SCOPED_TRACE(text);
      EncodedInstruction bytes = encode(instruction);
      EXPECT_EQ(bytes[0], static_cast<uint8_t>(info.opcode));
      EXPECT_EQ(decode(bytes.data()), instruction);
      EXPECT_EQ(assembleLine(text), instruction);
      EXPECT_EQ(disassemble(assemble(text)), text + "\n");
    }
  }
}

TEST(Isa, AssemblerAcceptsAnyFieldOrderAndHexNumbers) {
  InstructionSampler sampler;
  for (const OpcodeInfo &info : opcodeTable()) {
    Instruction instruction = sampler.sample(info);
    std::vector<FieldInfo> fields = info.fields;
    std::shuffle(fields.begin(), fields.end(), sampler.engine());
    std::string text(info.mnemonic);
    for (const FieldInfo &field : fields)
      text += fmt::format(" {}={:#x}", fieldName(field.field), instruction.get(field.field));
    EXPECT_EQ(assembleLine(text), instruction) << text;
  }
}

TEST(Isa, DisassemblyUsesSymbolicNames) {
  Instruction load =
      makeInstruction(Opcode::DmaLoad, {{Field::DramAddr, 0x40},
                                        {Field::Space, 1},
                                        {Field::Rows, 2},
                                        {Field::Cols, 3},
                                        {Field::DType, static_cast<uint64_t>(DType::BF16)}});
  EXPECT_EQ(disassemble(load), "dma.ld dram_addr=0x40 dram_stride=0 space=acc sram_addr=0 "
                               "sram_stride=0 rows=2 cols=3 dtype=bf16");
  Instruction add = makeInstruction(Opcode::VAdd, {{Field::Broadcast, 1}, {Field::Src2Space, 1}});
  EXPECT_THAT(disassemble(add), HasSubstr("src2_space=acc src2_addr=0 broadcast=row"));
  add.set(Field::Broadcast, uint64_t(Broadcast::Column));
  EXPECT_THAT(disassemble(add), HasSubstr("src2_space=acc src2_addr=0 broadcast=column"));
  EXPECT_EQ(disassemble(makeInstruction(Opcode::SyncPush, {{Field::From, 3}, {Field::To, 2}})),
            "sync.push from=store to=compute");
}

namespace {

// A one-bit field added to an opcode later: `plain` assembles with it 0
// and prints without it; with `field`=1 it sets bit `bit` of the encoding
// and prints it; 2 does not fit.
void expectOptionalFlag(const std::string &plain, Field field, unsigned bit) {
  const std::string name(fieldName(field));
  Instruction unset = *assembleLine(plain);
  EXPECT_EQ(unset.get(field), 0u);
  EXPECT_EQ(disassemble(unset), plain);
  Instruction set = *assembleLine(plain + " " + name + "=1");
  EXPECT_EQ(set.get(field), 1u);
  EXPECT_EQ(disassemble(set), plain + " " + name + "=1");
  EncodedInstruction bytes = encode(set), unsetBytes = encode(unset);
  EXPECT_EQ(bytes[bit / 8] ^ unsetBytes[bit / 8], 1u << (bit % 8));
  EXPECT_EQ(decode(bytes.data()).get(field), 1u);
  EXPECT_THAT(errorOf([&] { assembleLine(plain + " " + name + "=2"); }),
              HasSubstr("field " + name + " = 2 does not fit in 1 bits"));
}

} // namespace

TEST(Isa, DmaTransposeIsOptionalInAssemblyAndPrintedOnlyWhenSet) {
  // The flag is the bit after dtype: 8 + 32 + 20 + 1 + 22 + 16 + 12 + 12 + 2 = 125.
  expectOptionalFlag("dma.st dram_addr=0x40 dram_stride=3 space=sp sram_addr=5 "
                     "sram_stride=2 rows=2 cols=3 dtype=f32",
                     Field::Transpose, 125);
}

TEST(Isa, SyncPushWeightsIsOptionalAndOnlyFromCompute) {
  // The flag is the bit after from and to: 8 + 2 + 2 = 12.
  expectOptionalFlag("sync.push from=compute to=load", Field::Weights, 12);
  EXPECT_THAT(errorOf([&] { assembleLine("sync.push from=load to=compute weights=1"); }),
              HasSubstr("sync.push: weights=1 needs from=compute"));
  EXPECT_THAT(errorOf([&] { assembleLine("sync.pop from=compute to=load weights=1"); }),
              HasSubstr("sync.pop: unknown field 'weights'"));
}

TEST(Isa, SyncRunsOnTheQueueItsFieldsName) {
  Instruction push = makeInstruction(Opcode::SyncPush, {{Field::From, 3}, {Field::To, 1}});
  Instruction pop = makeInstruction(Opcode::SyncPop, {{Field::From, 3}, {Field::To, 1}});
  EXPECT_EQ(push.queue(), Queue::Store);
  EXPECT_EQ(pop.queue(), Queue::Load);
  EXPECT_EQ(makeInstruction(Opcode::DmaLoad, {}).queue(), Queue::Load);
  EXPECT_EQ(makeInstruction(Opcode::DmaStore, {}).queue(), Queue::Store);
  EXPECT_EQ(makeInstruction(Opcode::MatMul, {}).queue(), Queue::Compute);
  EXPECT_EQ(makeInstruction(Opcode::Halt, {}).queue(), Queue::Control);
}

TEST(Isa, MakeInstructionRejectsFieldsOfOtherOpcodes) {
  EXPECT_THAT(errorOf([] {
                makeInstruction(Opcode::Halt, {{Field::Rows, 1}});
              }),
              HasSubstr("halt: has no field rows"));
}

TEST(Isa, EncodeRejectsEachFieldOnePastItsMaximum) {
  InstructionSampler sampler;
  for (const OpcodeInfo &info : opcodeTable())
    for (const FieldInfo &field : info.fields) {
      Instruction instruction = sampler.sample(info);
      instruction.set(field.field, maxValue(field) + 1);
      std::string message = errorOf([&] { encode(instruction); });
      EXPECT_THAT(message, HasSubstr(std::string(info.mnemonic) + ": field " +
                                     std::string(fieldName(field.field)) + " = " +
                                     std::to_string(maxValue(field) + 1)));
    }
}

TEST(Isa, EncodeRejectsUnusedFields) {
  InstructionSampler sampler;
  for (const OpcodeInfo &info : opcodeTable())
    for (unsigned index = 0; index < kNumFields; ++index) {
      auto field = static_cast<Field>(index);
      if (usesField(info, field))
        continue;
      Instruction instruction = sampler.sample(info);
      instruction.set(field, 1);
      EXPECT_THAT(errorOf([&] { encode(instruction); }),
                  HasSubstr(fmt::format("field {} is not used", fieldName(field))));
    }
}

TEST(Isa, EncodeRejectsInvalidEnumeratedValues) {
  Instruction control = makeInstruction(Opcode::SyncPush, {{Field::From, 0}, {Field::To, 2}});
  EXPECT_THAT(errorOf([&] { encode(control); }),
              HasSubstr("sync.push: field from = 0 is not one of load, compute, store"));
  Instruction same = makeInstruction(Opcode::SyncPop, {{Field::From, 2}, {Field::To, 2}});
  EXPECT_THAT(errorOf([&] { encode(same); }), HasSubstr("sync.pop: from and to are both compute"));
}

TEST(Isa, DecodeRejectsUnknownOpcodes) {
  for (unsigned code = 0; code < 256; ++code) {
    if (findOpcode(static_cast<uint8_t>(code)))
      continue;
    EncodedInstruction bytes{};
    bytes[0] = static_cast<uint8_t>(code);
    EXPECT_THAT(errorOf([&] { decode(bytes.data()); }),
                HasSubstr(fmt::format("unknown opcode {:#04x}", code)));
  }
}

TEST(Isa, DecodeRejectsEveryNonZeroPaddingBit) {
  InstructionSampler sampler;
  for (const OpcodeInfo &info : opcodeTable())
    for (unsigned bit = usedBits(info); bit < kInstructionBytes * 8; ++bit) {
      EncodedInstruction bytes = encode(sampler.sample(info));
      bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      EXPECT_THAT(errorOf([&] { decode(bytes.data()); }),
                  HasSubstr(fmt::format("padding bit {} is set", bit)));
    }
}

TEST(Isa, DecodeRejectsInvalidEnumeratedValues) {
  // Encodes `base`, then overwrites a 2-bit field behind encode()'s back.
  auto withTwoBitField = [](const Instruction &base, Field field, unsigned value) {
    EncodedInstruction bytes = encode(base);
    unsigned offset = fieldOffset(opcodeInfo(base.opcode), field);
    for (unsigned bit = 0; bit < 2; ++bit) {
      auto mask = static_cast<uint8_t>(1u << ((offset + bit) % 8));
      uint8_t &byte = bytes[(offset + bit) / 8];
      byte = ((value >> bit) & 1) ? (byte | mask) : (byte & ~mask);
    }
    return bytes;
  };
  Instruction push = makeInstruction(Opcode::SyncPush, {{Field::From, 1}, {Field::To, 2}});
  EncodedInstruction control = withTwoBitField(push, Field::To, 0);
  EXPECT_THAT(errorOf([&] { decode(control.data()); }), HasSubstr("field to = 0"));
  EncodedInstruction same = withTwoBitField(push, Field::To, 1);
  EXPECT_THAT(errorOf([&] { decode(same.data()); }), HasSubstr("from and to are both load"));
}

TEST(Assembler, SkipsCommentsAndBlankLines) {
  std::vector<Instruction> program = assemble("# a comment\n"
                                              "\n"
                                              "   ; another\n"
                                              "sync.push to=compute\tfrom=load  # trailing\n"
                                              "halt ; done\n");
  ASSERT_EQ(program.size(), 2u);
  EXPECT_EQ(program[0], makeInstruction(Opcode::SyncPush, {{Field::From, 1}, {Field::To, 2}}));
  EXPECT_EQ(program[1].opcode, Opcode::Halt);
  EXPECT_EQ(assembleLine("  # nothing"), std::nullopt);
}

TEST(Assembler, RejectsMalformedInstructionsNamingTheProblem) {
  const std::string mm = "mxu.mm src_addr=0 src_stride=0 dst_addr=0 dst_stride=0 rows=1 cols=1 "
                         "dtype=bf16 accumulate=0";
  EXPECT_EQ(assembleError("nop\nfrobnicate x=1"), "line 2: unknown mnemonic 'frobnicate'");
  EXPECT_EQ(assembleError(mm), "line 1: mxu.mm: missing field(s) flip");
  EXPECT_EQ(assembleError("sync.pop from=load"), "line 1: sync.pop: missing field(s) to");
  EXPECT_EQ(assembleError("\n\n" + mm + " flip=1 rows=2"),
            "line 3: mxu.mm: duplicate field 'rows'");
  EXPECT_EQ(assembleError(mm + " flip=1 bogus=2"), "line 1: mxu.mm: unknown field 'bogus'");
  EXPECT_EQ(assembleError(mm + " flip"), "line 1: mxu.mm: expected field=value, got 'flip'");
  EXPECT_EQ(assembleError("halt rows=1"), "line 1: halt: unknown field 'rows'");
  for (std::string bad : {"abc", "-1", "0x", "1.5", "99999999999999999999999", "sp", ""})
    EXPECT_EQ(assembleError(mm + " flip=" + bad),
              "line 1: mxu.mm: bad value '" + bad + "' for field flip");
  EXPECT_EQ(assembleError(mm + " flip=2"),
            "line 1: mxu.mm: field flip = 2 does not fit in 1 bits (max 1)");
  EXPECT_EQ(assembleError("sync.push from=load to=0"),
            "line 1: sync.push: field to = 0 is not one of load, compute, store");
  EXPECT_EQ(assembleError("sync.push from=load to=control"),
            "line 1: sync.push: bad value 'control' for field to");
  EXPECT_EQ(assembleError("sync.push from=load to=load"),
            "line 1: sync.push: from and to are both load");
}

TEST(Isa, DTypeHelpers) {
  for (DType dtype : {DType::F32, DType::BF16, DType::I8, DType::I32})
    EXPECT_EQ(parseDType(dtypeName(dtype)), dtype);
  EXPECT_EQ(parseDType("f16"), std::nullopt);
  EXPECT_EQ(dtypeBytes(DType::F32), 4u);
  EXPECT_EQ(dtypeBytes(DType::BF16), 2u);
  EXPECT_EQ(dtypeBytes(DType::I8), 1u);
  EXPECT_EQ(dtypeBytes(DType::I32), 4u);
  EXPECT_EQ(queueName(Queue::Compute), "compute");
  EXPECT_EQ(spaceName(Space::Accumulator), "acc");
}
