// Encoder, decoder, assembler, disassembler and the docs table, all derived
// from the opcode table in OpcodeTable.cpp.
#include "tpu/isa/Isa.h"

#include "tpu/isa/Error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bitset>
#include <cctype>
#include <charconv>
#include <iterator>

namespace tpu::isa {
namespace {

struct FieldProperties {
  std::string_view name;
  FieldFormat format;
  std::string_view description;
  // Added to an existing opcode later: assembly may omit it (it is then 0)
  // and disassembly omits it when 0, so older assembly stays valid.
  bool optional = false;
};

// Indexed by Field.
constexpr FieldProperties kFieldProperties[] = {
    {"dram_addr", FieldFormat::Hex, "Byte address in DRAM of the first element."},
    {"dram_stride", FieldFormat::Unsigned,
     "Elements (of `dtype`) between the starts of consecutive DRAM rows."},
    {"space", FieldFormat::Space,
     "On-chip memory of the transfer: `sp` (scratchpad) or `acc` (accumulator)."},
    {"sram_addr", FieldFormat::Unsigned, "Word address on chip of the first element."},
    {"sram_stride", FieldFormat::Unsigned, "Words between the starts of consecutive on-chip rows."},
    {"rows", FieldFormat::Unsigned, "Number of rows."},
    {"cols", FieldFormat::Unsigned, "Number of columns (elements per row)."},
    {"dtype", FieldFormat::DType,
     "Element type `f32`, `bf16`, `i8` or `i32`: of the DRAM data for DMA, of the multiply "
     "operands for `mxu.mm` (must match the array's type)."},
    {"dst_space", FieldFormat::Space, "Memory of the destination: `sp` or `acc`."},
    {"dst_addr", FieldFormat::Unsigned, "Word address of the destination."},
    {"dst_stride", FieldFormat::Unsigned,
     "Words between the starts of consecutive destination rows."},
    {"src_space", FieldFormat::Space, "Memory of the source: `sp` or `acc`."},
    {"src_addr", FieldFormat::Unsigned, "Word address of the source."},
    {"src_stride", FieldFormat::Unsigned, "Words between the starts of consecutive source rows."},
    {"src2_space", FieldFormat::Space, "Memory of the second source: `sp` or `acc`."},
    {"src2_addr", FieldFormat::Unsigned, "Word address of the second source."},
    {"broadcast", FieldFormat::Broadcast,
     "How the second source is read: `none` (rows x cols), `row` (one row of cols, reused for "
     "every row), `scalar` (one element; two for `v.clamp`) or `column` (one column of rows, "
     "reused for every column)."},
    {"accumulate", FieldFormat::Flag, "1: add into the accumulators; 0: overwrite them."},
    {"flip", FieldFormat::Flag, "1: make the shadow weights active before streaming."},
    {"from", FieldFormat::Queue, "Queue that pushes the token: `load`, `compute` or `store`."},
    {"to", FieldFormat::Queue,
     "Queue that pops the token: `load`, `compute` or `store`; differs from `from`."},
    {"bound", FieldFormat::Unsigned,
     "Rows of the table `dma.gather` reads: an index i must lie in [-bound, bound)."},
    {"transpose", FieldFormat::Flag,
     "1: the on-chip block is the DRAM block transposed (row c of `rows` words holds DRAM column "
     "c); optional in assembly, omitted when 0.",
     true},
    {"weights", FieldFormat::Flag,
     "1 (`from=compute` only): the token waits for the queue's earlier `mxu.ldw` only, not its "
     "products or vector ops: the scratchpad a weight tile was loaded from is free once the "
     "tile is in the array; optional in assembly, omitted when 0.",
     true},
};
static_assert(std::size(kFieldProperties) == kNumFields, "one entry per Field");

const FieldProperties &properties(Field field) {
  return kFieldProperties[static_cast<unsigned>(field)];
}

// Names indexed by enum value.
constexpr std::string_view kDTypeNames[] = {"f32", "bf16", "i8", "i32"};
constexpr std::string_view kSpaceNames[] = {"sp", "acc"};
constexpr std::string_view kBroadcastNames[] = {"none", "row", "scalar", "column"};
constexpr std::string_view kQueueNames[] = {"control", "load", "compute", "store"};
constexpr std::string_view kUnitNames[] = {"controller", "DMA engine", "matrix unit",
                                           "vector unit"};

// Enums can hold any value of their underlying type (e.g. from a cast);
// never index past the names.
template <size_t N, typename Enum>
std::string_view nameOf(const std::string_view (&names)[N], Enum value) {
  auto index = static_cast<size_t>(value);
  return index < N ? names[index] : "invalid";
}

struct Symbol {
  std::string_view name;
  uint64_t value;
};

template <size_t N>
std::vector<Symbol> symbolsFrom(const std::string_view (&names)[N], uint64_t firstValue) {
  std::vector<Symbol> symbols;
  for (uint64_t value = firstValue; value < N; ++value)
    symbols.push_back({names[value], value});
  return symbols;
}

// The legal values of an enumerated format; empty for numeric formats.
const std::vector<Symbol> &symbols(FieldFormat format) {
  static const std::vector<Symbol> none;
  static const std::vector<Symbol> spaces = symbolsFrom(kSpaceNames, 0);
  static const std::vector<Symbol> dtypes = symbolsFrom(kDTypeNames, 0);
  static const std::vector<Symbol> broadcasts = symbolsFrom(kBroadcastNames, 0);
  // Tokens travel between the three data queues; the control queue has no channels.
  static const std::vector<Symbol> queues =
      symbolsFrom(kQueueNames, static_cast<uint64_t>(Queue::Load));
  switch (format) {
  case FieldFormat::Space:
    return spaces;
  case FieldFormat::DType:
    return dtypes;
  case FieldFormat::Broadcast:
    return broadcasts;
  case FieldFormat::Queue:
    return queues;
  case FieldFormat::Unsigned:
  case FieldFormat::Hex:
  case FieldFormat::Flag:
    break;
  }
  return none;
}

bool isLegalValue(FieldFormat format, uint64_t value) {
  const std::vector<Symbol> &legal = symbols(format);
  return legal.empty() ||
         std::any_of(legal.begin(), legal.end(), [&](const Symbol &s) { return s.value == value; });
}

std::string symbolList(FieldFormat format) {
  std::vector<std::string_view> names;
  for (const Symbol &symbol : symbols(format))
    names.push_back(symbol.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// Calls visit(FieldInfo, bit offset) for each field in encoding order and
// returns the first bit past the last field.
template <typename Visit> unsigned forEachFieldBits(const OpcodeInfo &info, Visit visit) {
  unsigned offset = kOpcodeBits;
  for (const FieldInfo &field : info.fields) {
    visit(field, offset);
    offset += field.bits;
  }
  return offset;
}

void writeBits(EncodedInstruction &bytes, unsigned offset, unsigned width, uint64_t value) {
  for (unsigned bit = 0; bit < width; ++bit)
    if ((value >> bit) & 1)
      bytes[(offset + bit) / 8] |= static_cast<uint8_t>(1u << ((offset + bit) % 8));
}

uint64_t readBits(const uint8_t *bytes, unsigned offset, unsigned width) {
  uint64_t value = 0;
  for (unsigned bit = 0; bit < width; ++bit)
    value |= static_cast<uint64_t>((bytes[(offset + bit) / 8] >> ((offset + bit) % 8)) & 1) << bit;
  return value;
}

// sync.push and sync.pop run on a queue named by one of their fields.
std::optional<Field> queueSelectingField(Opcode opcode) {
  if (opcode == Opcode::SyncPush)
    return Field::From;
  if (opcode == Opcode::SyncPop)
    return Field::To;
  return std::nullopt;
}

std::string formatValue(Field field, uint64_t value) {
  FieldFormat format = fieldFormat(field);
  if (format == FieldFormat::Hex)
    return fmt::format("{:#x}", value);
  for (const Symbol &symbol : symbols(format))
    if (symbol.value == value)
      return std::string(symbol.name);
  return std::to_string(value);
}

// Decimal or 0x-prefixed hex.
std::optional<uint64_t> parseNumber(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  uint64_t value = 0;
  const char *end = text.data() + text.size();
  auto [parsedEnd, error] = std::from_chars(text.data(), end, value, base);
  if (text.empty() || error != std::errc() || parsedEnd != end)
    return std::nullopt;
  return value;
}

std::optional<uint64_t> parseValue(Field field, std::string_view text) {
  for (const Symbol &symbol : symbols(fieldFormat(field)))
    if (symbol.name == text)
      return symbol.value;
  return parseNumber(text);
}

std::vector<std::string_view> splitWhitespace(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
    size_t start = pos;
    while (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (pos > start)
      tokens.push_back(text.substr(start, pos - start));
  }
  return tokens;
}

// Escapes '*' outside code spans so that "r*stride + c)*size" stays literal.
std::string escapeMarkdown(std::string_view text) {
  std::string escaped;
  bool inCode = false;
  for (char c : text) {
    if (c == '`')
      inCode = !inCode;
    if (c == '*' && !inCode)
      escaped += '\\';
    escaped += c;
  }
  return escaped;
}

} // namespace

const OpcodeInfo *findOpcode(uint8_t code) {
  static const std::array<const OpcodeInfo *, 256> byCode = [] {
    std::array<const OpcodeInfo *, 256> lookup{};
    for (const OpcodeInfo &info : opcodeTable())
      lookup[static_cast<uint8_t>(info.opcode)] = &info;
    return lookup;
  }();
  return byCode[code];
}

const OpcodeInfo &opcodeInfo(Opcode opcode) {
  const OpcodeInfo *info = findOpcode(static_cast<uint8_t>(opcode));
  if (!info)
    throw Error(fmt::format("unknown opcode {:#04x}", static_cast<unsigned>(opcode)));
  return *info;
}

const OpcodeInfo *findMnemonic(std::string_view mnemonic) {
  const std::vector<OpcodeInfo> &table = opcodeTable();
  auto it = std::find_if(table.begin(), table.end(),
                         [&](const OpcodeInfo &info) { return info.mnemonic == mnemonic; });
  return it == table.end() ? nullptr : &*it;
}

namespace {
// The compiler verifies every instruction after every pass (hundreds of thousands for ResNet-18
// on the 8x8 preset), so which fields an opcode has is a table built once, not a search.
const std::bitset<kNumFields> &fieldsOf(const OpcodeInfo &info) {
  static const std::array<std::bitset<kNumFields>, 256> fieldsByCode = [] {
    std::array<std::bitset<kNumFields>, 256> lookup{};
    for (const OpcodeInfo &opcode : opcodeTable())
      for (const FieldInfo &f : opcode.fields)
        lookup[static_cast<uint8_t>(opcode.opcode)].set(static_cast<unsigned>(f.field));
    return lookup;
  }();
  return fieldsByCode[static_cast<uint8_t>(info.opcode)];
}
} // namespace

bool usesField(const OpcodeInfo &info, Field field) {
  return fieldsOf(info).test(static_cast<unsigned>(field));
}

bool isTranscendental(Opcode opcode) {
  switch (opcode) {
  case Opcode::VExp:
  case Opcode::VRecip:
  case Opcode::VRsqrt:
  case Opcode::VSigmoid:
  case Opcode::VTanh:
  case Opcode::VLog:
    return true;
  default:
    return false;
  }
}

uint64_t fieldMaximum(Opcode opcode, Field field) {
  for (const FieldInfo &info : opcodeInfo(opcode).fields)
    if (info.field == field)
      return info.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << info.bits) - 1;
  return 0;
}

std::string_view fieldName(Field field) { return properties(field).name; }
std::string_view fieldDescription(Field field) { return properties(field).description; }
FieldFormat fieldFormat(Field field) { return properties(field).format; }

std::string_view dtypeName(DType dtype) { return nameOf(kDTypeNames, dtype); }

std::optional<DType> parseDType(std::string_view name) {
  for (unsigned value = 0; value < std::size(kDTypeNames); ++value)
    if (kDTypeNames[value] == name)
      return static_cast<DType>(value);
  return std::nullopt;
}

unsigned dtypeBytes(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::BF16:
    return 2;
  case DType::I8:
    return 1;
  }
  throw Error(fmt::format("invalid dtype {}", static_cast<unsigned>(dtype)));
}

std::string_view queueName(Queue queue) { return nameOf(kQueueNames, queue); }
std::string_view unitName(Unit unit) { return nameOf(kUnitNames, unit); }
std::string_view spaceName(Space space) { return nameOf(kSpaceNames, space); }

Queue Instruction::queue() const {
  if (std::optional<Field> field = queueSelectingField(opcode))
    return static_cast<Queue>(get(*field));
  return opcodeInfo(opcode).queue;
}

Instruction makeInstruction(Opcode opcode,
                            std::initializer_list<std::pair<Field, uint64_t>> fields) {
  const OpcodeInfo &info = opcodeInfo(opcode);
  Instruction instruction;
  instruction.opcode = opcode;
  for (const auto &[field, value] : fields) {
    if (!usesField(info, field))
      throw Error(fmt::format("{}: has no field {}", info.mnemonic, fieldName(field)));
    instruction.set(field, value);
  }
  return instruction;
}

void validateFields(const Instruction &instruction) {
  const OpcodeInfo &info = opcodeInfo(instruction.opcode);
  const std::bitset<kNumFields> &used = fieldsOf(info);
  for (unsigned index = 0; index < kNumFields; ++index) {
    Field field = static_cast<Field>(index);
    if (!used.test(index) && instruction.get(field) != 0)
      throw Error(fmt::format("{}: field {} is not used by this opcode but is {}", info.mnemonic,
                              fieldName(field), instruction.get(field)));
  }
  for (const FieldInfo &field : info.fields) {
    uint64_t value = instruction.get(field.field);
    if (field.bits < 64 && (value >> field.bits) != 0)
      throw Error(fmt::format("{}: field {} = {} does not fit in {} bits (max {})", info.mnemonic,
                              fieldName(field.field), value, field.bits,
                              (uint64_t{1} << field.bits) - 1));
    FieldFormat format = fieldFormat(field.field);
    if (!isLegalValue(format, value))
      throw Error(fmt::format("{}: field {} = {} is not one of {}", info.mnemonic,
                              fieldName(field.field), value, symbolList(format)));
  }
  if (usesField(info, Field::From) && usesField(info, Field::To) &&
      instruction.get(Field::From) == instruction.get(Field::To))
    throw Error(fmt::format("{}: from and to are both {}", info.mnemonic,
                            formatValue(Field::From, instruction.get(Field::From))));
  if (instruction.get(Field::Weights) != 0 &&
      instruction.get(Field::From) != uint64_t(Queue::Compute))
    throw Error(fmt::format("{}: weights=1 needs from=compute (only the compute queue loads "
                            "weights), not from={}",
                            info.mnemonic, formatValue(Field::From, instruction.get(Field::From))));
}

EncodedInstruction encode(const Instruction &instruction) {
  validateFields(instruction);
  EncodedInstruction bytes{};
  bytes[0] = static_cast<uint8_t>(instruction.opcode);
  forEachFieldBits(opcodeInfo(instruction.opcode), [&](const FieldInfo &field, unsigned offset) {
    writeBits(bytes, offset, field.bits, instruction.get(field.field));
  });
  return bytes;
}

Instruction decode(const uint8_t *bytes) {
  const OpcodeInfo *info = findOpcode(bytes[0]);
  if (!info)
    throw Error(fmt::format("unknown opcode {:#04x}", bytes[0]));
  Instruction instruction;
  instruction.opcode = info->opcode;
  unsigned paddingStart = forEachFieldBits(*info, [&](const FieldInfo &field, unsigned offset) {
    instruction.set(field.field, readBits(bytes, offset, field.bits));
  });
  for (unsigned bit = paddingStart; bit < kInstructionBytes * 8; ++bit)
    if (readBits(bytes, bit, 1) != 0)
      throw Error(fmt::format("{}: padding bit {} is set (bits {}-{} must be zero)", info->mnemonic,
                              bit, paddingStart, kInstructionBytes * 8 - 1));
  validateFields(instruction);
  return instruction;
}

std::string disassemble(const Instruction &instruction) {
  const OpcodeInfo &info = opcodeInfo(instruction.opcode);
  std::string text(info.mnemonic);
  for (const FieldInfo &field : info.fields)
    if (!properties(field.field).optional || instruction.get(field.field) != 0)
      text += fmt::format(" {}={}", fieldName(field.field),
                          formatValue(field.field, instruction.get(field.field)));
  return text;
}

std::string disassemble(const std::vector<Instruction> &program) {
  std::string text;
  for (const Instruction &instruction : program)
    text += disassemble(instruction) + '\n';
  return text;
}

std::optional<Instruction> assembleLine(std::string_view line) {
  std::vector<std::string_view> tokens = splitWhitespace(line.substr(0, line.find_first_of("#;")));
  if (tokens.empty())
    return std::nullopt;
  const OpcodeInfo *info = findMnemonic(tokens[0]);
  if (!info)
    throw Error(fmt::format("unknown mnemonic '{}'", tokens[0]));

  Instruction instruction;
  instruction.opcode = info->opcode;
  std::array<bool, kNumFields> seen{};
  for (auto token = tokens.begin() + 1; token != tokens.end(); ++token) {
    size_t equals = token->find('=');
    if (equals == std::string_view::npos)
      throw Error(fmt::format("{}: expected field=value, got '{}'", info->mnemonic, *token));
    std::string_view name = token->substr(0, equals);
    std::string_view valueText = token->substr(equals + 1);
    auto field = std::find_if(info->fields.begin(), info->fields.end(),
                              [&](const FieldInfo &f) { return fieldName(f.field) == name; });
    if (field == info->fields.end())
      throw Error(fmt::format("{}: unknown field '{}'", info->mnemonic, name));
    bool &alreadySeen = seen[static_cast<unsigned>(field->field)];
    if (alreadySeen)
      throw Error(fmt::format("{}: duplicate field '{}'", info->mnemonic, name));
    alreadySeen = true;
    std::optional<uint64_t> value = parseValue(field->field, valueText);
    if (!value)
      throw Error(fmt::format("{}: bad value '{}' for field {}", info->mnemonic, valueText, name));
    instruction.set(field->field, *value);
  }

  std::vector<std::string_view> missing;
  for (const FieldInfo &field : info->fields)
    if (!seen[static_cast<unsigned>(field.field)] && !properties(field.field).optional)
      missing.push_back(fieldName(field.field));
  if (!missing.empty())
    throw Error(fmt::format("{}: missing field(s) {}", info->mnemonic, fmt::join(missing, ", ")));
  validateFields(instruction);
  return instruction;
}

std::vector<Instruction> assemble(std::string_view text) {
  std::vector<Instruction> program;
  size_t lineNumber = 0;
  size_t lineStart = 0;
  while (lineStart <= text.size()) {
    size_t lineEnd = std::min(text.find('\n', lineStart), text.size());
    ++lineNumber;
    try {
      if (std::optional<Instruction> instruction =
              assembleLine(text.substr(lineStart, lineEnd - lineStart)))
        program.push_back(*instruction);
    } catch (const Error &error) {
      throw Error(fmt::format("line {}: {}", lineNumber, error.what()));
    }
    lineStart = lineEnd + 1;
  }
  return program;
}

std::string opcodeTableMarkdown() {
  std::string text =
      "## Opcode table\n\n"
      "Every instruction is 16 bytes. Byte 0 holds the opcode; the fields follow in the order "
      "listed, packed least-significant bit first from bit 8 (bit b of the instruction is bit "
      "b % 8 of byte b / 8). Bits past the last field must be zero.\n";
  for (const OpcodeInfo &info : opcodeTable()) {
    std::string queue = fmt::format("{} queue", queueName(info.queue));
    if (std::optional<Field> field = queueSelectingField(info.opcode))
      queue = fmt::format("runs on queue `{}`", fieldName(*field));
    text += fmt::format("\n### `{}` ({:#04x}, {}, {})\n\n{}\n\n", info.mnemonic,
                        static_cast<unsigned>(info.opcode), unitName(info.unit), queue,
                        escapeMarkdown(info.semantics));
    if (info.fields.empty()) {
      text += "No fields.\n";
      continue;
    }
    text += "| Field | Bits | Offset | Description |\n|---|---:|---:|---|\n";
    forEachFieldBits(info, [&](const FieldInfo &field, unsigned offset) {
      text += fmt::format("| `{}` | {} | {} | {} |\n", fieldName(field.field), field.bits, offset,
                          fieldDescription(field.field));
    });
  }
  return text;
}

} // namespace tpu::isa
