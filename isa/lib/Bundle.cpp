#include "tpu/isa/Bundle.h"

#include "Files.h"
#include "JsonCursor.h"
#include "tpu/isa/Error.h"
#include "tpu/isa/Legality.h"
#include "tpu/isa/LittleEndian.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <set>

namespace tpu {
namespace {

using detail::JsonCursor;
using isa::Instruction;
using isa::Opcode;

// The header of each version this build reads: version 2 adds reference_bytes.
uint32_t headerBytesOf(uint32_t version) { return version == 1 ? 48 : 56; }
constexpr uint64_t kMaxDramBytes = uint64_t{1} << 34; // 16 GiB

void appendLittleEndian(std::vector<uint8_t> &bytes, uint64_t value, unsigned size) {
  bytes.resize(bytes.size() + size);
  writeLittleEndian(bytes.data() + bytes.size() - size, size, value);
}

std::string describeInstruction(const Instruction &instruction) {
  if (!isa::findOpcode(static_cast<uint8_t>(instruction.opcode)))
    return fmt::format("opcode {:#04x}", static_cast<unsigned>(instruction.opcode));
  return isa::disassemble(instruction);
}

[[noreturn]] void failInstruction(size_t index, const Instruction &instruction,
                                  std::string_view problem) {
  throw Error(
      fmt::format("instruction {} ({}): {}", index, describeInstruction(instruction), problem));
}

struct DramRange {
  uint64_t begin;
  uint64_t end;
  std::string what;
};

// Checks each tensor on its own and returns its DRAM range.
DramRange checkTensor(const TensorInfo &tensor, std::string_view role, uint64_t dramBytes) {
  std::string what = fmt::format("{} '{}'", role, tensor.name);
  if (tensor.name.empty())
    throw Error(fmt::format("an {} has an empty name", role));
  if (tensor.host_type == HostType::I64 &&
      tensor.dtype != (tensor.role == TensorInfo::Role::Output ? isa::DType::I32 : isa::DType::F32))
    throw Error(fmt::format(
        "{}: host type i64 is for outputs stored as i32 and inputs stored as f32 only", what));
  if (tensor.state && tensor.role != TensorInfo::Role::Output)
    throw Error(fmt::format("{}: only outputs are state", what));
  uint64_t bytes = isa::dtypeBytes(tensor.dtype);
  for (int64_t dim : tensor.shape) {
    if (dim <= 0)
      throw Error(fmt::format("{}: dimension {} is not positive", what, dim));
    // bytes * dim > dramBytes, without overflow.
    if (bytes > dramBytes / static_cast<uint64_t>(dim))
      throw Error(fmt::format("{}: larger than dram_bytes {}", what, dramBytes));
    bytes *= static_cast<uint64_t>(dim);
  }
  if (tensor.dram_address > dramBytes - bytes)
    throw Error(fmt::format("{}: {} bytes at {:#x} exceed dram_bytes {:#x}", what, bytes,
                            tensor.dram_address, dramBytes));
  return {tensor.dram_address, tensor.dram_address + bytes, what};
}

void checkDramLayout(const Bundle &bundle) {
  if (bundle.dram_bytes > kMaxDramBytes)
    throw Error(fmt::format("dram_bytes {} exceeds the 16 GiB limit", bundle.dram_bytes));
  uint64_t constantBytes = bundle.constants.size();
  if (constantBytes > bundle.dram_bytes ||
      bundle.constant_address > bundle.dram_bytes - constantBytes)
    throw Error(fmt::format("constants: {} bytes at {:#x} exceed dram_bytes {:#x}", constantBytes,
                            bundle.constant_address, bundle.dram_bytes));

  std::vector<DramRange> ranges;
  if (constantBytes != 0)
    ranges.push_back(
        {bundle.constant_address, bundle.constant_address + constantBytes, "the constants"});
  // Names are unique, but for a state output, which is named as its input.
  std::set<std::string> names;
  for (const auto &[tensors, role] :
       {std::pair{&bundle.inputs, "input"}, std::pair{&bundle.outputs, "output"}})
    for (const TensorInfo &tensor : *tensors) {
      ranges.push_back(checkTensor(tensor, role, bundle.dram_bytes));
      if (tensor.state) {
        const TensorInfo *input = stateInput(bundle, tensor);
        if (!input)
          throw Error(fmt::format("state output '{}' has no input of its name", tensor.name));
        if (input->shape != tensor.shape || input->dtype != tensor.dtype)
          throw Error(fmt::format("state output '{}' differs from its input in shape or dtype",
                                  tensor.name));
        if (!names.insert(tensor.name + "\n(state)").second)
          throw Error(fmt::format("tensor name '{}' is used twice", tensor.name));
      } else if (!names.insert(tensor.name).second) {
        throw Error(fmt::format("tensor name '{}' is used twice", tensor.name));
      }
    }
  if (bundle.training)
    for (const std::string &name : bundle.training->parameters) {
      auto isState = [&](const TensorInfo &output) { return output.state && output.name == name; };
      if (std::none_of(bundle.outputs.begin(), bundle.outputs.end(), isState))
        throw Error(fmt::format("training parameter '{}' is no state tensor", name));
    }

  std::sort(ranges.begin(), ranges.end(),
            [](const DramRange &a, const DramRange &b) { return a.begin < b.begin; });
  // Compare each range with the one reaching furthest among those before it.
  const DramRange *furthest = nullptr;
  for (const DramRange &range : ranges) {
    if (furthest && range.begin < furthest->end)
      throw Error(fmt::format("{} [{:#x}, {:#x}) overlaps {} [{:#x}, {:#x})", range.what,
                              range.begin, range.end, furthest->what, furthest->begin,
                              furthest->end));
    if (!furthest || range.end > furthest->end)
      furthest = &range;
  }
}

// Each reference constant lies in the constants, where the image holds its
// values rounded to bf16.
void checkReferenceConstants(const Bundle &bundle) {
  for (size_t index = 0; index < bundle.reference_constants.size(); ++index) {
    const ReferenceConstant &constant = bundle.reference_constants[index];
    std::string what = fmt::format("reference_constants[{}]", index);
    uint64_t bytes = constant.values.size() * 2;
    if (constant.values.empty() || constant.dram_address < bundle.constant_address ||
        constant.dram_address - bundle.constant_address > bundle.constants.size() ||
        bytes > bundle.constants.size() - (constant.dram_address - bundle.constant_address))
      throw Error(fmt::format("{}: {} bf16 elements at {:#x} are not inside the constants", what,
                              constant.values.size(), constant.dram_address));
    const uint8_t *image =
        bundle.constants.data() + (constant.dram_address - bundle.constant_address);
    for (size_t i = 0; i < constant.values.size(); ++i)
      if (readLittleEndian(image + 2 * i, 2) != floatToBF16(constant.values[i]))
        throw Error(fmt::format("{}: element {} of the image is not its value {} rounded to bf16",
                                what, i, constant.values[i]));
  }
}

void checkSourceMap(const Bundle &bundle) {
  if (bundle.source_of.size() != bundle.program.size())
    throw Error(fmt::format("source_of has {} entries for {} instructions", bundle.source_of.size(),
                            bundle.program.size()));
  for (size_t index = 0; index < bundle.source_of.size(); ++index)
    if (bundle.source_of[index] >= bundle.source_ops.size())
      throw Error(fmt::format("source_of[{}] is {}, but there are {} source ops", index,
                              bundle.source_of[index], bundle.source_ops.size()));
}

// One pass in program order, as the simulator meets the instructions.
void checkProgram(const Bundle &bundle) {
  const std::vector<Instruction> &program = bundle.program;
  checkProgramNotEmpty(program);
  WeightTiles weightTiles(bundle.config);
  for (size_t index = 0; index < program.size(); ++index) {
    const Instruction &instruction = program[index];
    try {
      checkHaltPlacement(instruction, index, program.size());
      isa::validateFields(instruction);
      checkFitsMachine(instruction, bundle.config, bundle.dram_bytes);
      if (instruction.opcode == Opcode::LoadWeights)
        weightTiles.loadWeights(instruction);
      else if (instruction.opcode == Opcode::MatMul)
        weightTiles.multiply(instruction);
    } catch (const Error &error) {
      failInstruction(index, instruction, error.what());
    }
  }
}

void checkWork(const Bundle &bundle) {
  if (!bundle.work)
    return;
  const std::vector<SourceWork> &ops = bundle.work->source_ops;
  if (ops.size() != bundle.source_ops.size())
    throw Error(fmt::format("work.source_ops has {} entries for {} source ops", ops.size(),
                            bundle.source_ops.size()));
  for (size_t index = 0; index < ops.size(); ++index) {
    for (const GemmShape &gemm : ops[index].gemms)
      if (gemm.batch == 0 || gemm.m == 0 || gemm.k == 0 || gemm.n == 0)
        throw Error(fmt::format("work.source_ops[{}]: a gemm has a zero dimension", index));
    if (ops[index].transcendental_elements > ops[index].vector_elements)
      throw Error(fmt::format("work.source_ops[{}]: transcendental_elements exceeds "
                              "vector_elements",
                              index));
  }
}

// A CUDA bundle: a program for the GPU and float32 tensors laid out in the
// host image, nothing of the accelerator's.
void checkCudaProgram(const Bundle &bundle) {
  const CudaProgram &cuda = *bundle.cuda;
  if (!bundle.program.empty() || !bundle.source_ops.empty() || !bundle.source_of.empty() ||
      !bundle.constants.empty() || bundle.constant_address != 0 || bundle.training || bundle.work)
    throw Error("a CUDA bundle has no instructions, source ops, constants, training or work");
  if (!std::regex_match(cuda.gpu, std::regex("sm_[0-9]+a?")))
    throw Error(fmt::format("cuda.gpu '{}' is no GPU architecture such as sm_80", cuda.gpu));
  if (cuda.source.empty())
    throw Error("a CUDA bundle needs its CUDA source");
  if (cuda.kernels.empty())
    throw Error("cuda.kernels is empty");
  for (const auto &[tensors, role] :
       {std::pair{&bundle.inputs, "input"}, std::pair{&bundle.outputs, "output"}})
    for (const TensorInfo &tensor : *tensors)
      if (tensor.dtype != isa::DType::F32 || tensor.host_type != HostType::Stored || tensor.state)
        throw Error(
            fmt::format("{} '{}': a CUDA bundle's tensors are plain f32", role, tensor.name));
}

nlohmann::json workJson(const CompulsoryWork &work) {
  nlohmann::json ops = nlohmann::json::array();
  for (const SourceWork &op : work.source_ops) {
    nlohmann::json gemms = nlohmann::json::array();
    for (const GemmShape &gemm : op.gemms)
      gemms.push_back({gemm.batch, gemm.m, gemm.k, gemm.n});
    ops.push_back({{"gemms", gemms},
                   {"vector_elements", op.vector_elements},
                   {"transcendental_elements", op.transcendental_elements},
                   {"dram_bytes", op.dram_bytes}});
  }
  return {{"dram_bytes", work.dram_bytes}, {"source_ops", ops}};
}

CompulsoryWork parseWork(const JsonCursor &json) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  json.expectObject({"dram_bytes", "source_ops"});
  CompulsoryWork work;
  work.dram_bytes = json["dram_bytes"].unsignedInteger(0, kMax);
  for (const JsonCursor &op : json["source_ops"].arrayElements()) {
    op.expectObject({"gemms", "vector_elements", "transcendental_elements", "dram_bytes"});
    SourceWork entry;
    for (const JsonCursor &gemm : op["gemms"].arrayElements()) {
      std::vector<JsonCursor> dims = gemm.arrayElements();
      if (dims.size() != 4)
        gemm.fail("must be [batch, m, k, n]");
      entry.gemms.push_back({dims[0].unsignedInteger(1, kMax), dims[1].unsignedInteger(1, kMax),
                             dims[2].unsignedInteger(1, kMax), dims[3].unsignedInteger(1, kMax)});
    }
    entry.vector_elements = op["vector_elements"].unsignedInteger(0, kMax);
    entry.transcendental_elements = op["transcendental_elements"].unsignedInteger(0, kMax);
    entry.dram_bytes = op["dram_bytes"].unsignedInteger(0, kMax);
    work.source_ops.push_back(std::move(entry));
  }
  return work;
}

nlohmann::json tensorJson(const TensorInfo &tensor) {
  nlohmann::json json = {{"name", tensor.name},
                         {"shape", tensor.shape},
                         {"dtype", isa::dtypeName(tensor.dtype)},
                         {"dram_address", tensor.dram_address},
                         {"reduction_length", tensor.reduction_length}};
  // Only where it differs from the dtype's, so that other bundles read as
  // they did before the key existed.
  if (tensor.host_type == HostType::I64)
    json["host_type"] = "i64";
  if (tensor.state)
    json["state"] = true;
  return json;
}

TensorInfo parseTensor(const JsonCursor &json, TensorInfo::Role role) {
  json.expectObject({"name", "shape", "dtype", "dram_address", "reduction_length"},
                    {"host_type", "state"});
  TensorInfo tensor;
  tensor.role = role;
  tensor.name = json["name"].string();
  for (const JsonCursor &dim : json["shape"].arrayElements())
    tensor.shape.push_back(
        static_cast<int64_t>(dim.unsignedInteger(0, std::numeric_limits<int64_t>::max())));
  JsonCursor dtype = json["dtype"];
  std::optional<isa::DType> parsed = isa::parseDType(dtype.string());
  if (!parsed)
    dtype.fail("must be one of f32, bf16, i8, i32");
  tensor.dtype = *parsed;
  if (json.contains("host_type")) {
    JsonCursor host = json["host_type"];
    if (host.string() != "i64")
      host.fail("must be i64");
    tensor.host_type = HostType::I64;
  }
  if (json.contains("state"))
    tensor.state = json["state"].boolean();
  tensor.dram_address =
      json["dram_address"].unsignedInteger(0, std::numeric_limits<uint64_t>::max());
  tensor.reduction_length =
      json["reduction_length"].unsignedInteger(0, std::numeric_limits<uint64_t>::max());
  return tensor;
}

// The source itself comes from the constants section; `sourceBytes` is the
// size the metadata gives it, checked against that section's.
CudaProgram parseCudaProgram(const JsonCursor &json, uint64_t &sourceBytes) {
  json.expectObject({"gpu", "fusion", "source_bytes", "kernels"});
  CudaProgram cuda;
  cuda.gpu = json["gpu"].string();
  cuda.fusion = json["fusion"].string();
  sourceBytes = json["source_bytes"].unsignedInteger(0, std::numeric_limits<uint64_t>::max());
  for (const JsonCursor &kernel : json["kernels"].arrayElements()) {
    kernel.expectObject({"name", "source_ops", "kind", "global_bytes"});
    cuda.kernels.push_back(
        {kernel["name"].string(), kernel["source_ops"].string(), kernel["kind"].string(),
         kernel["global_bytes"].unsignedInteger(0, std::numeric_limits<uint64_t>::max())});
  }
  return cuda;
}

std::string metadataJson(const Bundle &bundle) {
  auto tensors = [](const std::vector<TensorInfo> &list) {
    nlohmann::json array = nlohmann::json::array();
    for (const TensorInfo &tensor : list)
      array.push_back(tensorJson(tensor));
    return array;
  };
  nlohmann::json json = {{"inputs", tensors(bundle.inputs)},
                         {"outputs", tensors(bundle.outputs)},
                         {"source_ops", bundle.source_ops},
                         {"source_of", bundle.source_of}};
  if (bundle.cuda) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const CudaKernel &kernel : bundle.cuda->kernels)
      kernels.push_back({{"name", kernel.name},
                         {"source_ops", kernel.source_ops},
                         {"kind", kernel.kind},
                         {"global_bytes", kernel.global_bytes}});
    json["cuda"] = {{"gpu", bundle.cuda->gpu},
                    {"fusion", bundle.cuda->fusion},
                    {"source_bytes", bundle.cuda->source.size()},
                    {"kernels", kernels}};
  } else {
    json["config"] = bundle.config.toJson();
  }
  if (bundle.training)
    json["training"] = {{"model", bundle.training->model_path},
                        {"parameters", bundle.training->parameters}};
  if (bundle.work)
    json["work"] = workJson(*bundle.work);
  for (const ReferenceConstant &constant : bundle.reference_constants)
    json["reference_constants"].push_back(
        {{"dram_address", constant.dram_address}, {"elements", constant.values.size()}});
  return json.dump();
}

// The reference constants get their places and sizes here, which must add
// up to the `referenceBytes` of the reference section (checked before
// anything is allocated for them), and their values from that section.
// `cudaSourceBytes`: a CUDA bundle's cuda.source_bytes.
void parseMetadata(const uint8_t *begin, const uint8_t *end, uint64_t referenceBytes,
                   Bundle &bundle, uint64_t &cudaSourceBytes) {
  constexpr const char *kOrigin = "bundle metadata";
  try {
    nlohmann::json json = nlohmann::json::parse(begin, end);
    JsonCursor root(json, kOrigin);
    root.expectObject({"inputs", "outputs", "source_ops", "source_of"},
                      {"config", "training", "work", "cuda", "reference_constants"});
    // An accelerator bundle has a config, a CUDA bundle its program instead.
    if (root.contains("cuda") == root.contains("config"))
      throw Error(fmt::format("{}: needs exactly one of 'config' (an accelerator bundle) and "
                              "'cuda' (a CUDA bundle)",
                              kOrigin));
    if (root.contains("config"))
      bundle.config = HardwareConfig::fromJson(json.at("config"), "bundle metadata: config");
    else
      bundle.cuda = parseCudaProgram(root["cuda"], cudaSourceBytes);
    for (const JsonCursor &tensor : root["inputs"].arrayElements())
      bundle.inputs.push_back(parseTensor(tensor, TensorInfo::Role::Input));
    for (const JsonCursor &tensor : root["outputs"].arrayElements())
      bundle.outputs.push_back(parseTensor(tensor, TensorInfo::Role::Output));
    for (const JsonCursor &op : root["source_ops"].arrayElements())
      bundle.source_ops.push_back(op.string());
    for (const JsonCursor &source : root["source_of"].arrayElements())
      bundle.source_of.push_back(
          static_cast<uint32_t>(source.unsignedInteger(0, std::numeric_limits<uint32_t>::max())));
    if (root.contains("training")) {
      JsonCursor training = root["training"];
      training.expectObject({"model", "parameters"});
      bundle.training = TrainingInfo{training["model"].string(), {}};
      for (const JsonCursor &name : training["parameters"].arrayElements())
        bundle.training->parameters.push_back(name.string());
    }
    if (root.contains("work"))
      bundle.work = parseWork(root["work"]);
    std::vector<std::pair<uint64_t, uint64_t>> references; // address, elements
    uint64_t referenceElements = 0;
    if (root.contains("reference_constants"))
      for (const JsonCursor &constant : root["reference_constants"].arrayElements()) {
        constant.expectObject({"dram_address", "elements"});
        references.emplace_back(
            constant["dram_address"].unsignedInteger(0, std::numeric_limits<uint64_t>::max()),
            constant["elements"].unsignedInteger(1, std::numeric_limits<uint32_t>::max()));
        referenceElements += references.back().second; // each below 2^32: no overflow
      }
    if (referenceElements * 4 != referenceBytes)
      throw Error(fmt::format("the reference section has {} bytes, the metadata's "
                              "reference_constants need {}",
                              referenceBytes, referenceElements * 4));
    for (auto [address, elements] : references)
      bundle.reference_constants.push_back({address, std::vector<float>(elements)});
  } catch (const nlohmann::json::exception &error) {
    throw Error(fmt::format("{}: invalid JSON: {}", kOrigin, detail::jsonErrorText(error.what())));
  }
}

} // namespace

const TensorInfo *stateInput(const Bundle &bundle, const TensorInfo &output) {
  if (!output.state)
    return nullptr;
  for (const TensorInfo &input : bundle.inputs)
    if (input.name == output.name)
      return &input;
  return nullptr;
}

uint64_t TensorInfo::elements() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return count;
}

void Bundle::validate() const {
  if (cuda) {
    checkCudaProgram(*this);
    checkDramLayout(*this);
    return;
  }
  config.validate("bundle config");
  checkDramLayout(*this);
  checkReferenceConstants(*this);
  checkSourceMap(*this);
  checkWork(*this);
  checkProgram(*this);
}

uint32_t crc32(const uint8_t *data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> entries{};
    for (uint32_t byte = 0; byte < 256; ++byte) {
      uint32_t crc = byte;
      for (int bit = 0; bit < 8; ++bit)
        crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
      entries[byte] = crc;
    }
    return entries;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i)
    crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::vector<uint8_t> serializeBundle(const Bundle &bundle) {
  std::string metadata = metadataJson(bundle);
  if (bundle.program.size() > std::numeric_limits<uint32_t>::max() ||
      metadata.size() > std::numeric_limits<uint32_t>::max())
    throw Error("bundle too large: instruction count and metadata size must fit in 32 bits");

  std::vector<uint8_t> bytes(std::begin(kBundleMagic), std::end(kBundleMagic));
  appendLittleEndian(bytes, kBundleVersion, 4);
  appendLittleEndian(bytes, headerBytesOf(kBundleVersion), 4);
  appendLittleEndian(bytes, 0, 4); // CRC, filled in below
  appendLittleEndian(bytes, bundle.program.size(), 4);
  appendLittleEndian(bytes, metadata.size(), 4);
  // A CUDA bundle's constants section holds its source.
  const std::vector<uint8_t> source =
      bundle.cuda ? std::vector<uint8_t>(bundle.cuda->source.begin(), bundle.cuda->source.end())
                  : std::vector<uint8_t>();
  const std::vector<uint8_t> &constants = bundle.cuda ? source : bundle.constants;
  appendLittleEndian(bytes, constants.size(), 8);
  appendLittleEndian(bytes, bundle.constant_address, 8);
  appendLittleEndian(bytes, bundle.dram_bytes, 8);
  size_t referenceBytesAt = bytes.size();
  appendLittleEndian(bytes, 0, 8); // reference_bytes, filled in below
  for (size_t index = 0; index < bundle.program.size(); ++index) {
    isa::EncodedInstruction encoded;
    try {
      encoded = isa::encode(bundle.program[index]);
    } catch (const Error &error) {
      throw Error(fmt::format("instruction {}: {}", index, error.what()));
    }
    bytes.insert(bytes.end(), encoded.begin(), encoded.end());
  }
  bytes.insert(bytes.end(), metadata.begin(), metadata.end());
  bytes.insert(bytes.end(), constants.begin(), constants.end());
  size_t referenceStart = bytes.size();
  for (const ReferenceConstant &constant : bundle.reference_constants)
    for (float value : constant.values)
      appendLittleEndian(bytes, floatBits(value), 4);
  writeLittleEndian(bytes.data() + referenceBytesAt, 8, bytes.size() - referenceStart);

  uint32_t crc =
      crc32(bytes.data() + kBundleCrcCoverageStart, bytes.size() - kBundleCrcCoverageStart);
  writeLittleEndian(bytes.data() + kBundleCrcOffset, 4, crc);
  return bytes;
}

Bundle parseBundle(const std::vector<uint8_t> &bytes) {
  // Magic, version and header size fit in the oldest version's header.
  if (bytes.size() < headerBytesOf(kOldestBundleVersion))
    throw Error(fmt::format("bundle is {} bytes, too short for the {}-byte header", bytes.size(),
                            headerBytesOf(kOldestBundleVersion)));
  const uint8_t *data = bytes.data();
  if (!std::equal(std::begin(kBundleMagic), std::end(kBundleMagic), data))
    throw Error("not a TPU bundle (bad magic)");
  auto version = static_cast<uint32_t>(readLittleEndian(data + 4, 4));
  if (version < kOldestBundleVersion || version > kBundleVersion)
    throw Error(fmt::format("bundle version {}, this build reads {} to {}", version,
                            kOldestBundleVersion, kBundleVersion));
  auto headerBytes = static_cast<uint32_t>(readLittleEndian(data + 8, 4));
  if (headerBytes != headerBytesOf(version))
    throw Error(fmt::format("bundle header is {} bytes, version {} has {}", headerBytes, version,
                            headerBytesOf(version)));
  if (bytes.size() < headerBytes)
    throw Error(fmt::format("bundle is {} bytes, too short for the {}-byte header", bytes.size(),
                            headerBytes));
  auto storedCrc = static_cast<uint32_t>(readLittleEndian(data + kBundleCrcOffset, 4));
  uint64_t numInstructions = readLittleEndian(data + 16, 4);
  uint64_t metadataBytes = readLittleEndian(data + 20, 4);
  uint64_t constantBytes = readLittleEndian(data + 24, 8);
  uint64_t referenceBytes = version == 1 ? 0 : readLittleEndian(data + 48, 8);

  // Subtract section by section so that no sum of untrusted sizes can overflow.
  uint64_t remaining = bytes.size() - headerBytes;
  const std::pair<const char *, uint64_t> sections[] = {
      {"instructions", numInstructions * isa::kInstructionBytes},
      {"metadata", metadataBytes},
      {"constants", constantBytes},
      {"reference", referenceBytes}};
  for (const auto &[name, size] : sections) {
    if (size > remaining)
      throw Error(fmt::format("bundle truncated: the {} section needs {} bytes, {} remain", name,
                              size, remaining));
    remaining -= size;
  }
  if (remaining != 0)
    throw Error(fmt::format("bundle has {} trailing bytes after its sections", remaining));
  if (crc32(data + kBundleCrcCoverageStart, bytes.size() - kBundleCrcCoverageStart) != storedCrc)
    throw Error("checksum mismatch: bundle is corrupt");

  Bundle bundle;
  bundle.constant_address = readLittleEndian(data + 32, 8);
  bundle.dram_bytes = readLittleEndian(data + 40, 8);
  const uint8_t *cursor = data + headerBytes;
  bundle.program.reserve(numInstructions); // the file holds them: checked above
  for (uint64_t index = 0; index < numInstructions; ++index) {
    try {
      bundle.program.push_back(isa::decode(cursor));
    } catch (const Error &error) {
      throw Error(fmt::format("instruction {}: {}", index, error.what()));
    }
    cursor += isa::kInstructionBytes;
  }
  uint64_t cudaSourceBytes = 0;
  parseMetadata(cursor, cursor + metadataBytes, referenceBytes, bundle, cudaSourceBytes);
  cursor += metadataBytes;
  if (bundle.cuda) {
    if (cudaSourceBytes != constantBytes)
      throw Error(fmt::format("bundle metadata: cuda.source_bytes is {}, the source section has {}",
                              cudaSourceBytes, constantBytes));
    bundle.cuda->source.assign(cursor, cursor + constantBytes);
  } else {
    bundle.constants.assign(cursor, cursor + constantBytes);
  }
  cursor += constantBytes;
  for (ReferenceConstant &constant : bundle.reference_constants)
    for (float &value : constant.values) {
      value = bitsFloat(static_cast<uint32_t>(readLittleEndian(cursor, 4)));
      cursor += 4;
    }
  bundle.validate();
  return bundle;
}

void writeBundle(const Bundle &bundle, const std::string &path) {
  bundle.validate();
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file)
    file.write(reinterpret_cast<const char *>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  if (file)
    file.close();
  if (!file)
    throw Error(fmt::format("{}: cannot write bundle: {}", path, std::strerror(errno)));
}

Bundle readBundle(const std::string &path) {
  std::vector<uint8_t> bytes = detail::readFile(path, "bundle");
  try {
    return parseBundle(bytes);
  } catch (const Error &error) {
    throw Error(fmt::format("{}: {}", path, error.what()));
  }
}

} // namespace tpu
