// The ISA level of the TPU dialect: tpu.inst written as the ISA's assembly
// and checked by its opcode table, the order between the queues, and the
// tensors the program has stored.
#include "tpu/Dialect/Instructions.h"

#include "tpu/isa/Error.h"

#include "mlir/IR/OpImplementation.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::tpu;

::tpu::isa::Instruction mlir::tpu::instructionOf(InstOp op) {
  const ::tpu::isa::OpcodeInfo *info = ::tpu::isa::findMnemonic(op.getMnemonic());
  ::tpu::isa::Instruction instruction;
  instruction.opcode = info->opcode;
  for (auto [field, value] : llvm::zip(info->fields, op.getFields()))
    instruction.set(field.field, uint64_t(value));
  return instruction;
}

std::vector<std::pair<InstOp, ::tpu::isa::Instruction>>
mlir::tpu::decodeInstructions(Block &block) {
  std::vector<std::pair<InstOp, ::tpu::isa::Instruction>> program;
  // Reserved: a program can hold hundreds of thousands of instructions.
  program.reserve(block.getOperations().size());
  for (Operation &op : block)
    if (auto inst = dyn_cast<InstOp>(op))
      program.emplace_back(inst, instructionOf(inst));
  return program;
}

SmallVector<int64_t> mlir::tpu::instructionFields(const ::tpu::isa::Instruction &instruction) {
  SmallVector<int64_t> fields;
  for (const ::tpu::isa::FieldInfo &field : ::tpu::isa::opcodeInfo(instruction.opcode).fields)
    fields.push_back(int64_t(instruction.get(field.field)));
  return fields;
}

InstOp mlir::tpu::createInstruction(OpBuilder &builder, Location location,
                                    const ::tpu::isa::Instruction &instruction) {
  return builder.create<InstOp>(location, ::tpu::isa::opcodeInfo(instruction.opcode).mnemonic,
                                instructionFields(instruction));
}

LogicalResult InstOp::verify() {
  const ::tpu::isa::OpcodeInfo *info = ::tpu::isa::findMnemonic(getMnemonic());
  if (!info)
    return emitOpError() << "unknown mnemonic '" << getMnemonic() << "'";
  if (getFields().size() != info->fields.size())
    return emitOpError() << getMnemonic() << " has " << info->fields.size() << " fields, got "
                         << getFields().size();
  if (llvm::any_of(getFields(), [](int64_t value) { return value < 0; }))
    return emitOpError("fields are unsigned");
  try {
    ::tpu::isa::validateFields(instructionOf(*this));
  } catch (const ::tpu::Error &error) {
    return emitOpError() << error.what();
  }
  return success();
}

// The ISA's assembly: a mnemonic and field=value pairs, read by the isa
// library's assembler so that the two syntaxes cannot drift apart.
ParseResult InstOp::parse(OpAsmParser &parser, OperationState &result) {
  StringRef mnemonic;
  if (parser.parseKeyword(&mnemonic))
    return failure();
  const ::tpu::isa::OpcodeInfo *opcode = ::tpu::isa::findMnemonic(mnemonic);
  if (!opcode)
    return parser.emitError(parser.getNameLoc()) << "unknown mnemonic '" << mnemonic << "'";
  // Only the opcode's fields: the next operation's name must not be read as one.
  SmallVector<StringRef> fieldNames;
  for (const ::tpu::isa::FieldInfo &field : opcode->fields)
    fieldNames.push_back(::tpu::isa::fieldName(field.field));
  std::string line = mnemonic.str();
  StringRef name;
  while (succeeded(parser.parseOptionalKeyword(&name, fieldNames))) {
    std::string value;
    APInt number;
    StringRef keyword;
    if (parser.parseEqual())
      return failure();
    OptionalParseResult integer = parser.parseOptionalInteger(number);
    if (integer.has_value()) {
      if (failed(*integer))
        return failure();
      value = std::to_string(number.getZExtValue());
    } else if (succeeded(parser.parseOptionalKeyword(&keyword))) {
      value = keyword.str();
    } else {
      return parser.emitError(parser.getCurrentLocation(), "expected the value of field ") << name;
    }
    line += fmt::format(" {}={}", name.str(), value);
  }
  ::tpu::isa::Instruction instruction;
  try {
    instruction = *::tpu::isa::assembleLine(line);
  } catch (const ::tpu::Error &error) {
    return parser.emitError(parser.getNameLoc()) << error.what();
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &builder = parser.getBuilder();
  result.getOrAddProperties<Properties>().mnemonic =
      builder.getStringAttr(::tpu::isa::opcodeInfo(instruction.opcode).mnemonic);
  result.getOrAddProperties<Properties>().fields =
      builder.getDenseI64ArrayAttr(instructionFields(instruction));
  return success();
}

void InstOp::print(OpAsmPrinter &printer) {
  printer << ' ' << ::tpu::isa::disassemble(instructionOf(*this));
  printer.printOptionalAttrDict((*this)->getAttrs(), {"mnemonic", "fields"});
}

LogicalResult SignalOp::verify() {
  if (getFrom() == getTo())
    return emitOpError("signals its own queue");
  if (getWeights() && getFrom() != Queue::compute)
    return emitOpError("says weight loads are done, which only the compute queue issues");
  return success();
}

LogicalResult DependOp::verify() {
  if (getFrom() == getTo())
    return emitOpError("makes a queue depend on itself");
  return success();
}

ParseResult DramConstantOp::parse(OpAsmParser &parser, OperationState &result) {
  uint64_t address = 0;
  ElementsAttr value;
  if (parser.parseInteger(address) || parser.parseAttribute(value) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.getOrAddProperties<Properties>().address =
      parser.getBuilder().getI64IntegerAttr(int64_t(address));
  result.getOrAddProperties<Properties>().value = value;
  result.addTypes(value.getType());
  return success();
}

void DramConstantOp::print(OpAsmPrinter &printer) {
  printer << ' ' << fmt::format("{:#x}", uint64_t(getAddress())) << ' ';
  printer.printAttribute(getValue());
  printer.printOptionalAttrDict((*this)->getAttrs(), {"address", "value"});
}

LogicalResult DramConstantOp::verify() {
  if (getValue().getType() != getType())
    return emitOpError("result type must be the value's type");
  return success();
}

// `0x140 : T`, or `0x140 from %a, %b : A, B -> T`.
ParseResult StoredOp::parse(OpAsmParser &parser, OperationState &result) {
  uint64_t address = 0;
  SmallVector<OpAsmParser::UnresolvedOperand> inputs;
  SmallVector<Type> inputTypes;
  Type type;
  if (parser.parseInteger(address))
    return failure();
  bool hasInputs = succeeded(parser.parseOptionalKeyword("from"));
  if (hasInputs && parser.parseOperandList(inputs))
    return failure();
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon())
    return failure();
  if (hasInputs &&
      (parser.parseTypeList(inputTypes) || parser.parseArrow() ||
       parser.resolveOperands(inputs, inputTypes, parser.getNameLoc(), result.operands)))
    return failure();
  if (parser.parseType(type))
    return failure();
  result.getOrAddProperties<Properties>().address =
      parser.getBuilder().getI64IntegerAttr(int64_t(address));
  result.addTypes(type);
  return success();
}

void StoredOp::print(OpAsmPrinter &printer) {
  printer << ' ' << fmt::format("{:#x}", uint64_t(getAddress()));
  if (!getInputs().empty())
    printer << " from " << getInputs();
  printer.printOptionalAttrDict((*this)->getAttrs(), {"address"});
  printer << " : ";
  if (!getInputs().empty())
    printer << getInputs().getTypes() << " -> ";
  printer << getType();
}
