// The ISA level -> a bundle, one to one: every decision was made by the
// passes before; this only writes it down.
#include "tpu/Target/TPU/BundleEncoder.h"

#include "tpu/Dialect/Instructions.h"
#include "tpu/Dialect/TPUDialect.h"
#include "tpu/Dialect/TargetConfig.h"
#include "tpu/Target/TPU/ProgramBuilder.h"

#include "tpu/isa/LittleEndian.h"
#include "tpu/isa/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <fmt/format.h>

#include <cstring>

namespace tpu::codegen {
namespace {

using mlir::Value;

mlir::FailureOr<TensorInfo> tensorInfo(Value value, mlir::StringAttr name, std::string fallback,
                                       TensorInfo::Role role) {
  std::optional<uint64_t> address = mlir::tpu::dramAddress(value);
  if (!address)
    return mlir::emitError(value.getLoc(), "has no DRAM address; run tpu-plan-memory first");
  auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
  TensorInfo info;
  info.name = name ? name.str() : std::move(fallback);
  info.shape.assign(type.getShape().begin(), type.getShape().end());
  // Gather's and ArgMax's indices are int32 in DRAM; everything else is fp32.
  info.dtype = type.getElementType().isInteger(32) ? isa::DType::I32 : isa::DType::F32;
  info.dram_address = *address;
  info.role = role;
  return info;
}

// tpu-record-work's record, in the order of the bundle's source ops; an op
// with no record (halt) has no work, and a record of an op that has no
// instructions is dropped.
CompulsoryWork compulsoryWork(mlir::DictionaryAttr record,
                              const std::vector<std::string> &sourceOps) {
  auto integer = [](mlir::DictionaryAttr dict, llvm::StringRef key) {
    return uint64_t(llvm::cast<mlir::IntegerAttr>(dict.get(key)).getInt());
  };
  llvm::StringMap<SourceWork> byName;
  for (mlir::Attribute entry : llvm::cast<mlir::ArrayAttr>(record.get("source_ops"))) {
    auto op = llvm::cast<mlir::DictionaryAttr>(entry);
    SourceWork work;
    llvm::ArrayRef<int64_t> gemms =
        llvm::cast<mlir::DenseI64ArrayAttr>(op.get("gemms")).asArrayRef();
    for (size_t i = 0; i + 4 <= gemms.size(); i += 4)
      work.gemms.push_back({uint64_t(gemms[i]), uint64_t(gemms[i + 1]), uint64_t(gemms[i + 2]),
                            uint64_t(gemms[i + 3])});
    work.vector_elements = integer(op, "vector_elements");
    work.transcendental_elements = integer(op, "transcendental_elements");
    work.dram_bytes = integer(op, "dram_bytes");
    byName[llvm::cast<mlir::StringAttr>(op.get("name")).getValue()] = work;
  }
  CompulsoryWork work;
  work.dram_bytes = integer(record, "dram_bytes");
  for (const std::string &name : sourceOps)
    work.source_ops.push_back(byName.lookup(name));
  return work;
}

} // namespace

mlir::FailureOr<Bundle> encodeBundle(mlir::func::FuncOp main) {
  mlir::FailureOr<mlir::tpu::TargetAttr> target = mlir::tpu::getTarget(main);
  if (mlir::failed(target))
    return mlir::failure();
  auto dramBytes = main->getAttrOfType<mlir::IntegerAttr>(mlir::tpu::kDramBytesAttr);
  if (!dramBytes)
    return main.emitError("has no DRAM size; run tpu-plan-memory first");
  Bundle bundle;
  bundle.config = mlir::tpu::hardwareConfig(*target);
  bundle.constant_address = 0;
  bundle.dram_bytes = uint64_t(dramBytes.getInt());

  for (mlir::BlockArgument arg : main.getArguments()) {
    mlir::FailureOr<TensorInfo> input = tensorInfo(
        arg,
        main.getArgAttrOfType<mlir::StringAttr>(arg.getArgNumber(), mlir::tpu::kTensorNameAttr),
        fmt::format("input_{}", arg.getArgNumber()), TensorInfo::Role::Input);
    if (mlir::failed(input))
      return mlir::failure();
    // Integers the program reads as f32 (a training step's labels).
    if (auto host =
            main.getArgAttrOfType<mlir::TypeAttr>(arg.getArgNumber(), mlir::tpu::kHostTypeAttr)) {
      if (!host.getValue().isInteger(64) || input->dtype != isa::DType::F32)
        return main.emitError() << "input " << arg.getArgNumber() << " is stored as "
                                << isa::dtypeName(input->dtype) << " for the host's "
                                << host.getValue() << "; only f32 for i64 is";
      input->host_type = HostType::I64;
    }
    bundle.inputs.push_back(*input);
  }

  llvm::StringMap<uint32_t> sourceIndex;
  const size_t operations = main.getBody().front().getOperations().size();
  bundle.program.reserve(operations);
  bundle.source_of.reserve(operations);
  for (mlir::Operation &op : main.getBody().front()) {
    if (auto inst = llvm::dyn_cast<mlir::tpu::InstOp>(op)) {
      std::string source = mlir::tpu::sourceName(op.getLoc());
      auto [entry, added] = sourceIndex.try_emplace(source, bundle.source_ops.size());
      if (added)
        bundle.source_ops.push_back(source);
      bundle.program.push_back(mlir::tpu::instructionOf(inst));
      bundle.source_of.push_back(entry->second);
    } else if (auto constant = llvm::dyn_cast<mlir::tpu::DramConstantOp>(op)) {
      auto data = llvm::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
      if (!data || !data.getElementType().isF32())
        return constant.emitError("holds no f32 elements");
      uint64_t address = uint64_t(constant.getAddress());
      std::vector<float> values(data.getValues<float>().begin(), data.getValues<float>().end());
      isa::DType dtype = dramDType(constant.getResult());
      uint64_t end = address + values.size() * isa::dtypeBytes(dtype);
      if (bundle.constants.size() < end)
        bundle.constants.resize(end);
      uint8_t *image = bundle.constants.data() + address;
      if (dtype == isa::DType::BF16) {
        // Rounded to nearest even, as the array would round it; the fp32
        // values stay for the output check's reference run.
        for (size_t i = 0; i < values.size(); ++i)
          writeLittleEndian(image + 2 * i, 2, floatToBF16(values[i]));
        bundle.reference_constants.push_back({address, std::move(values)});
      } else {
        std::memcpy(image, values.data(), values.size() * sizeof(float));
      }
    } else if (auto ret = llvm::dyn_cast<mlir::func::ReturnOp>(op)) {
      // The program ends where the function returns.
      auto [entry, added] = sourceIndex.try_emplace("halt", bundle.source_ops.size());
      if (added)
        bundle.source_ops.push_back("halt");
      bundle.program.push_back(isa::makeInstruction(isa::Opcode::Halt, {}));
      bundle.source_of.push_back(entry->second);
      for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
        mlir::FailureOr<TensorInfo> output = tensorInfo(
            value, main.getResultAttrOfType<mlir::StringAttr>(index, mlir::tpu::kTensorNameAttr),
            fmt::format("output_{}", index), TensorInfo::Role::Output);
        if (mlir::failed(output))
          return mlir::failure();
        if (auto length =
                main.getResultAttrOfType<mlir::IntegerAttr>(index, mlir::tpu::kReductionLengthAttr))
          output->reduction_length = uint64_t(length.getInt());
        if (auto host = main.getResultAttrOfType<mlir::TypeAttr>(index, mlir::tpu::kHostTypeAttr)) {
          if (!host.getValue().isInteger(64) || output->dtype != isa::DType::I32)
            return main.emitError()
                   << "output " << index << " is stored as " << isa::dtypeName(output->dtype)
                   << " for the host's " << host.getValue() << "; only i32 words for i64 are";
          output->host_type = HostType::I64;
        }
        // A result named as an input is that input's next value (a training
        // step's parameters and buffers, docs/compiler.md).
        for (const TensorInfo &input : bundle.inputs)
          if (input.name == output->name && input.shape == output->shape &&
              input.dtype == output->dtype)
            output->state = true;
        bundle.outputs.push_back(*output);
      }
    } else if (llvm::isa<mlir::tpu::SignalOp, mlir::tpu::AwaitOp, mlir::tpu::DependOp>(op)) {
      return op.emitError("is no instruction yet; run tpu-schedule-tokens first");
    } else if (!llvm::isa<mlir::tpu::StoredOp, mlir::tpu::ViewOp, mlir::arith::ConstantOp>(op)) {
      return op.emitError("is not at the ISA level; run tpu-lower-to-isa first");
    }
  }
  if (auto record = main->getAttrOfType<mlir::DictionaryAttr>(mlir::tpu::kWorkAttr))
    bundle.work = compulsoryWork(record, bundle.source_ops);
  return bundle;
}

} // namespace tpu::codegen
