// The instruction set of the systolic-array accelerator.
//
// Every instruction is 128 bits: an 8-bit opcode followed by that opcode's
// fields, packed least-significant first. The opcode table in Isa.cpp is the
// single source of truth: encoder, decoder, assembler, disassembler and the
// table in docs/isa.md are all derived from it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpu::isa {

constexpr unsigned kInstructionBytes = 16;
// Instructions each queue holds dispatched but not yet started; the front end
// dispatches in program order and stalls while the next one's queue is full.
constexpr unsigned kQueueDepth = 32;
constexpr unsigned kOpcodeBits = 8;

// The queue (and so the unit) an instruction is issued to. Sync instructions
// run on the queue named by their fields.
enum class Queue : uint8_t { Control = 0, Load = 1, Compute = 2, Store = 3 };
constexpr unsigned kNumQueues = 4;

// The hardware unit that carries an instruction out.
enum class Unit : uint8_t { Controller, Dma, Matrix, Vector };

// On-chip memories an address can name.
enum class Space : uint8_t { Scratchpad = 0, Accumulator = 1 };

// Element types of DRAM data. On chip every element is a 32-bit word: fp32
// bits for float types, a sign-extended int32 for integer types.
enum class DType : uint8_t { F32 = 0, BF16 = 1, I8 = 2, I32 = 3 };

// How the second source of a vector op is read.
enum class Broadcast : uint8_t {
  None = 0,   // same shape as the first source
  Row = 1,    // one row, reused for every row (bias add)
  Scalar = 2, // one element (v.clamp: two elements, lo then hi)
  Column = 3, // one column, reused for every column (x - its row's maximum)
};

enum class Opcode : uint8_t {
  Nop = 0x00,
  Halt = 0x01,
  SyncPush = 0x02,
  SyncPop = 0x03,
  DmaLoad = 0x10,
  DmaStore = 0x11,
  DmaGather = 0x12,
  LoadWeights = 0x20,
  MatMul = 0x21,
  VAdd = 0x30,
  VSub = 0x31,
  VMul = 0x32,
  VMax = 0x33,
  VMin = 0x34,
  VClamp = 0x35,
  VGreater = 0x36,
  VGreaterEqual = 0x37,
  VCopy = 0x38,
  VRelu = 0x39,
  VExp = 0x3a,
  VRecip = 0x3b,
  VRsqrt = 0x3c,
  VRowSum = 0x3d,
  VRowMax = 0x3e,
  VCvtI2F = 0x3f,
  VCvtF2I = 0x40,
  VSigmoid = 0x41,
  VTanh = 0x42,
  VLog = 0x43,
  VEqual = 0x44,
};

// Every field any instruction can carry. Each opcode uses a subset, with its
// own bit width per field (see OpcodeInfo).
enum class Field : uint8_t {
  DramAddr,   // byte address in DRAM
  DramStride, // elements between consecutive DRAM rows
  Space,      // on-chip memory of a DMA transfer (Space)
  SramAddr,   // word address on chip
  SramStride, // words between consecutive on-chip rows
  Rows,
  Cols,
  DType, // DType of DRAM data (DMA) or of the multiply (mxu.mm)
  DstSpace,
  DstAddr,
  DstStride,
  SrcSpace,
  SrcAddr,
  SrcStride,
  Src2Space,
  Src2Addr,
  Broadcast,  // Broadcast
  Accumulate, // 1: add into the accumulators, 0: overwrite
  Flip,       // 1: swap the shadow weights in before streaming
  From,       // Queue that pushes the token
  To,         // Queue that pops it
  Bound,      // rows of the table dma.gather indexes
  Transpose,  // 1: the DMA's on-chip block is the DRAM block transposed
  Weights,    // 1: a compute queue's sync.push waits for its weight loads only
  Count_
};
constexpr unsigned kNumFields = static_cast<unsigned>(Field::Count_);

// How a field's value is written in assembly.
enum class FieldFormat : uint8_t { Unsigned, Hex, Space, DType, Broadcast, Queue, Flag };

struct FieldInfo {
  Field field;
  uint8_t bits;
};

struct OpcodeInfo {
  Opcode opcode;
  std::string_view mnemonic;
  Queue queue; // for sync.push/pop: the From / To field decides at run time
  Unit unit;
  std::vector<FieldInfo> fields;
  std::string_view semantics; // one sentence, for docs/isa.md
};

const std::vector<OpcodeInfo> &opcodeTable();
const OpcodeInfo &opcodeInfo(Opcode opcode);
const OpcodeInfo *findOpcode(uint8_t code);
const OpcodeInfo *findMnemonic(std::string_view mnemonic);
bool usesField(const OpcodeInfo &info, Field field);
// The vector operations computed by table lookup and interpolation rather than
// in one pass of an adder or multiplier (v.exp, v.recip, v.rsqrt, v.sigmoid,
// v.tanh, v.log): they get their own throughput and energy from the config
// (docs/config.md).
bool isTranscendental(Opcode opcode);
// The largest value `field` holds in `opcode`'s encoding (0 when unused).
uint64_t fieldMaximum(Opcode opcode, Field field);
std::string_view fieldName(Field field);
std::string_view fieldDescription(Field field);
FieldFormat fieldFormat(Field field);
std::string_view dtypeName(DType dtype);
std::optional<DType> parseDType(std::string_view name);
unsigned dtypeBytes(DType dtype);
std::string_view queueName(Queue queue);
std::string_view unitName(Unit unit);
std::string_view spaceName(Space space);

// A decoded instruction: the opcode and the value of every field (fields the
// opcode does not use are zero).
struct Instruction {
  Opcode opcode = Opcode::Nop;
  std::array<uint64_t, kNumFields> values{};

  uint64_t get(Field field) const { return values[static_cast<unsigned>(field)]; }
  Instruction &set(Field field, uint64_t value) {
    values[static_cast<unsigned>(field)] = value;
    return *this;
  }
  // The queue this instruction runs on (resolves sync.push / sync.pop).
  Queue queue() const;
  bool operator==(const Instruction &other) const {
    return opcode == other.opcode && values == other.values;
  }
  bool operator!=(const Instruction &other) const { return !(*this == other); }
};

// Builds an instruction, checking that every field belongs to the opcode.
// Range checks happen in encode().
Instruction makeInstruction(Opcode opcode,
                            std::initializer_list<std::pair<Field, uint64_t>> fields);

using EncodedInstruction = std::array<uint8_t, kInstructionBytes>;

// Throws tpu::Error naming the opcode and field when a value does not fit or a
// field the opcode does not use is non-zero.
EncodedInstruction encode(const Instruction &instruction);
// Throws tpu::Error on an unknown opcode, non-zero padding bits or an invalid
// enumerated value.
Instruction decode(const uint8_t *bytes);
// The field checks encode() makes, for instructions built in memory: throws
// tpu::Error naming the opcode and field when a value does not fit, an
// enumerated value (space, dtype, broadcast, queue) is invalid, sync's from
// equals its to, or a field the opcode does not use is non-zero.
void validateFields(const Instruction &instruction);

// One line, e.g. "dma.ld dram_addr=0x40 space=sp sram_addr=0 ...".
std::string disassemble(const Instruction &instruction);
// Parses one line of assembly (comments start with '#' or ';'). Returns
// nullopt for a blank or comment-only line. Throws tpu::Error naming the
// problem otherwise.
std::optional<Instruction> assembleLine(std::string_view line);
// Whole programs: one instruction per line. Errors name the line number.
std::vector<Instruction> assemble(std::string_view text);
std::string disassemble(const std::vector<Instruction> &program);

// Markdown table of every opcode with its fields and semantics; docs/isa.md
// embeds it and a test keeps the two in step.
std::string opcodeTableMarkdown();

} // namespace tpu::isa
