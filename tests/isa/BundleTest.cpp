#include "tpu/isa/Bundle.h"
#include "tpu/isa/Error.h"
#include "tpu/isa/LittleEndian.h"
#include "tpu/isa/Numerics.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

using namespace tpu;
using isa::Field;
using isa::Opcode;
using ::testing::HasSubstr;

namespace {

// Header offsets, as docs/bundle.md lays them out.
constexpr size_t kVersionOffset = 4;
constexpr size_t kHeaderBytesOffset = 8;
constexpr size_t kCrcOffset = 12;
constexpr size_t kNumInstructionsOffset = 16;
constexpr size_t kMetadataBytesOffset = 20;
constexpr size_t kConstantBytesOffset = 24;
constexpr size_t kReferenceBytesOffset = 48;
constexpr size_t kHeaderBytes = 56;
constexpr size_t kVersion1HeaderBytes = 48;

// x (4x8 f32) at 0x0, the weights (8x8 bf16 constants) at 0x100, y (4x8 f32)
// at 0x200: y = relu(x * W) on the 8x8 preset.
constexpr const char *kSmallProgram = R"(
dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=0 sram_stride=8 rows=4 cols=8 dtype=f32
dma.ld dram_addr=0x100 dram_stride=8 space=sp sram_addr=32 sram_stride=8 rows=8 cols=8 dtype=bf16
sync.push from=load to=compute
sync.pop from=load to=compute
mxu.ldw src_addr=32 src_stride=8 rows=8 cols=8
mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 cols=8 dtype=bf16 accumulate=0 flip=1
v.relu dst_space=sp dst_addr=96 src_space=acc src_addr=0 rows=4 cols=8
sync.push from=compute to=store
sync.pop from=compute to=store
dma.st dram_addr=0x200 dram_stride=8 space=sp sram_addr=96 sram_stride=8 rows=4 cols=8 dtype=f32
halt
)";

Bundle smallBundle() {
  Bundle bundle;
  bundle.config = HardwareConfig::load("tpu-8x8");
  bundle.program = isa::assemble(kSmallProgram);
  for (unsigned i = 0; i < 128; ++i)
    bundle.constants.push_back(static_cast<uint8_t>(i * 7));
  bundle.constant_address = 0x100;
  bundle.dram_bytes = 0x280;
  bundle.inputs = {{"x", {4, 8}, isa::DType::F32, 0x0, TensorInfo::Role::Input}};
  bundle.outputs = {{"y", {4, 8}, isa::DType::F32, 0x200, TensorInfo::Role::Output, 8}};
  bundle.source_ops = {"input x", "fc1", "relu1", "output y"};
  bundle.source_of = {0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3};
  return bundle;
}

void expectSameTensors(const std::vector<TensorInfo> &a, const std::vector<TensorInfo> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    EXPECT_EQ(a[i].shape, b[i].shape);
    EXPECT_EQ(a[i].dtype, b[i].dtype);
    EXPECT_EQ(a[i].dram_address, b[i].dram_address);
    EXPECT_EQ(a[i].role, b[i].role);
    EXPECT_EQ(a[i].reduction_length, b[i].reduction_length);
    EXPECT_EQ(a[i].host_type, b[i].host_type);
    EXPECT_EQ(a[i].state, b[i].state);
  }
}

void expectSameBundle(const Bundle &a, const Bundle &b) {
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(isa::disassemble(a.program), isa::disassemble(b.program));
  EXPECT_TRUE(a.program == b.program);
  EXPECT_EQ(a.constants, b.constants);
  EXPECT_EQ(a.constant_address, b.constant_address);
  EXPECT_EQ(a.dram_bytes, b.dram_bytes);
  expectSameTensors(a.inputs, b.inputs);
  expectSameTensors(a.outputs, b.outputs);
  EXPECT_EQ(a.source_ops, b.source_ops);
  EXPECT_EQ(a.source_of, b.source_of);
  ASSERT_EQ(a.training.has_value(), b.training.has_value());
  if (a.training) {
    EXPECT_EQ(a.training->model_path, b.training->model_path);
    EXPECT_EQ(a.training->parameters, b.training->parameters);
  }
  EXPECT_EQ(a.work.has_value(), b.work.has_value());
  if (a.work && b.work) {
    EXPECT_TRUE(*a.work == *b.work);
  }
  EXPECT_TRUE(a.reference_constants == b.reference_constants);
  ASSERT_EQ(a.cuda.has_value(), b.cuda.has_value());
  if (a.cuda) {
    EXPECT_EQ(a.cuda->gpu, b.cuda->gpu);
    EXPECT_EQ(a.cuda->fusion, b.cuda->fusion);
    EXPECT_EQ(a.cuda->source, b.cuda->source);
    EXPECT_TRUE(a.cuda->kernels == b.cuda->kernels);
  }
}

// smallBundle() with its weights as a compiler writes them: the 64 values
// rounded to bf16 in the image, and the values themselves (none of which is
// a bf16 number) as the reference constant.
Bundle bundleWithReferenceConstants() {
  Bundle bundle = smallBundle();
  ReferenceConstant weights{bundle.constant_address, {}};
  for (int i = 0; i < 64; ++i)
    weights.values.push_back(0.1f * static_cast<float>(i - 32) + 1e-3f);
  for (size_t i = 0; i < weights.values.size(); ++i)
    writeLittleEndian(bundle.constants.data() + 2 * i, 2, floatToBF16(weights.values[i]));
  bundle.reference_constants = {weights};
  return bundle;
}

// A CUDA bundle (tpuc --target=cuda -o OUT.tpub): x (4x8 f32) at 0 and y
// (4x8 f32) at 128 in the host image, and the source.
Bundle cudaBundle() {
  Bundle bundle;
  bundle.dram_bytes = 256;
  bundle.inputs = {{"x", {4, 8}, isa::DType::F32, 0, TensorInfo::Role::Input}};
  bundle.outputs = {{"y", {4, 8}, isa::DType::F32, 128, TensorInfo::Role::Output, 8}};
  bundle.cuda = CudaProgram{"sm_90a",
                            "full",
                            "// generated\nint main() { return 0; }\n",
                            {{"fc1_k0", "fc1 (Gemm), relu1 (Relu)", "gemm", 512}}};
  return bundle;
}

// The small bundle as a training step: y is also an input (at 0x80), which
// the output y updates, and starts as the model's initializer y.
Bundle trainingBundle() {
  Bundle bundle = smallBundle();
  bundle.inputs.push_back({"y", {4, 8}, isa::DType::F32, 0x80, TensorInfo::Role::Input});
  bundle.outputs[0].state = true;
  bundle.training = TrainingInfo{"/models/mlp.onnx", {"y"}};
  return bundle;
}

// smallBundle() with the compiler's record of its work: fc1 a 4x8x8 product,
// relu1 32 elements.
Bundle bundleWithWork() {
  Bundle bundle = smallBundle();
  CompulsoryWork work;
  work.dram_bytes = 128 + 256 + 128;
  work.source_ops = {{}, {{{1, 4, 8, 8}}, 0, 0, 384}, {{}, 32, 0, 0}, {{}, 0, 0, 128}};
  bundle.work = work;
  return bundle;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  try {
    parseBundle(bytes);
  } catch (const Error &error) {
    return error.what();
  }
  return "(accepted)";
}

void putLittleEndian(std::vector<uint8_t> &bytes, size_t offset, uint64_t value, unsigned size) {
  writeLittleEndian(bytes.data() + offset, size, value);
}

uint32_t getU32(const std::vector<uint8_t> &bytes, size_t offset) {
  return static_cast<uint32_t>(readLittleEndian(bytes.data() + offset, 4));
}

// The CRC covers every byte after its own field.
void refreshCrc(std::vector<uint8_t> &bytes) {
  size_t start = kCrcOffset + 4;
  putLittleEndian(bytes, kCrcOffset, crc32(bytes.data() + start, bytes.size() - start), 4);
}

size_t metadataOffset(const std::vector<uint8_t> &bytes) {
  return kHeaderBytes + getU32(bytes, kNumInstructionsOffset) * isa::kInstructionBytes;
}

nlohmann::json metadataOf(const std::vector<uint8_t> &bytes) {
  auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(metadataOffset(bytes));
  return nlohmann::json::parse(begin, begin + getU32(bytes, kMetadataBytesOffset));
}

// A copy of `bytes` with other metadata text and a matching size and CRC.
std::vector<uint8_t> withMetadata(const std::vector<uint8_t> &bytes, const std::string &metadata) {
  auto begin = bytes.begin() + static_cast<std::ptrdiff_t>(metadataOffset(bytes));
  std::vector<uint8_t> result(bytes.begin(), begin);
  result.insert(result.end(), metadata.begin(), metadata.end());
  result.insert(result.end(), begin + getU32(bytes, kMetadataBytesOffset), bytes.end());
  putLittleEndian(result, kMetadataBytesOffset, metadata.size(), 4);
  refreshCrc(result);
  return result;
}

} // namespace

TEST(Bundle, RoundTripsThroughBytesAndFiles) {
  Bundle bundle = smallBundle();
  ASSERT_NO_THROW(bundle.validate());
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "TPUB");
  EXPECT_EQ(getU32(bytes, kVersionOffset), kBundleVersion);
  EXPECT_EQ(getU32(bytes, kNumInstructionsOffset), bundle.program.size());
  expectSameBundle(parseBundle(bytes), bundle);

  std::string path = ::testing::TempDir() + "round-trip.tpub";
  writeBundle(bundle, path);
  expectSameBundle(readBundle(path), bundle);
}

TEST(Bundle, RoundTripsTransposedTransfers) {
  Bundle bundle = smallBundle();
  // x lands transposed: 8 rows of 4 words, as dense as before.
  bundle.program[0].set(isa::Field::Transpose, 1).set(isa::Field::SramStride, 4);
  ASSERT_NO_THROW(bundle.validate());
  Bundle parsed = parseBundle(serializeBundle(bundle));
  expectSameBundle(parsed, bundle);
  EXPECT_EQ(parsed.program[0].get(isa::Field::Transpose), 1u);
}

TEST(Bundle, RoundTripsTheOptionalWork) {
  EXPECT_FALSE(metadataOf(serializeBundle(smallBundle())).contains("work"));
  EXPECT_FALSE(parseBundle(serializeBundle(smallBundle())).work.has_value());
  Bundle bundle = bundleWithWork();
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  nlohmann::json work = metadataOf(bytes)["work"];
  EXPECT_EQ(work["dram_bytes"], 512);
  EXPECT_EQ(work["source_ops"][1]["gemms"], nlohmann::json::parse("[[1, 4, 8, 8]]"));
  expectSameBundle(parseBundle(bytes), bundle);
}

TEST(Bundle, RoundTripsACudaBundle) {
  Bundle bundle = cudaBundle();
  EXPECT_EQ(bundle.target(), "cuda");
  EXPECT_EQ(smallBundle().target(), "tpu");
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  EXPECT_EQ(getU32(bytes, kNumInstructionsOffset), 0u);
  EXPECT_EQ(getU32(bytes, kConstantBytesOffset), bundle.cuda->source.size());
  nlohmann::json metadata = metadataOf(bytes);
  EXPECT_FALSE(metadata.contains("config"));
  EXPECT_EQ(metadata["cuda"]["gpu"], "sm_90a");
  EXPECT_EQ(metadata["cuda"]["kernels"][0]["kind"], "gemm");
  expectSameBundle(parseBundle(bytes), bundle);
  // Accelerator bundles stay as they were: a config, no cuda key.
  EXPECT_FALSE(metadataOf(serializeBundle(smallBundle())).contains("cuda"));
}

TEST(Bundle, RejectsMalformedCudaBundles) {
  std::vector<uint8_t> bytes = serializeBundle(cudaBundle());
  const nlohmann::json metadata = metadataOf(bytes);
  struct Mutation {
    std::function<void(nlohmann::json &)> mutate;
    std::string expected;
  };
  const std::string both = "bundle metadata: needs exactly one of 'config' (an accelerator "
                           "bundle) and 'cuda' (a CUDA bundle)";
  const Mutation mutations[] = {
      {[](auto &json) { json.erase("cuda"); }, both},
      {[&](auto &json) { json["config"] = metadataOf(serializeBundle(smallBundle()))["config"]; },
       both},
      {[](auto &json) { json["cuda"]["gpu"] = "ampere"; },
       "cuda.gpu 'ampere' is no GPU architecture such as sm_80"},
      {[](auto &json) { json["cuda"]["source_bytes"] = 3; },
       "bundle metadata: cuda.source_bytes is 3, the source section has 38"},
      {[](auto &json) { json["cuda"]["kernels"] = nlohmann::json::array(); },
       "cuda.kernels is empty"},
      {[](auto &json) { json["cuda"]["kernels"][0].erase("kind"); },
       "bundle metadata: cuda.kernels[0].kind: missing"},
      {[](auto &json) { json["outputs"][0]["dtype"] = "bf16"; },
       "output 'y': a CUDA bundle's tensors are plain f32"},
      {[](auto &json) { json["outputs"][0]["dram_address"] = 64; },
       "output 'y' [0x40, 0xc0) overlaps input 'x' [0x0, 0x80)"},
      {[](auto &json) { json["source_ops"] = {"fc1"}; },
       "a CUDA bundle has no instructions, source ops, constants, training or work"},
  };
  for (const Mutation &mutation : mutations) {
    nlohmann::json changed = metadata;
    mutation.mutate(changed);
    EXPECT_EQ(parseError(withMetadata(bytes, changed.dump())), mutation.expected);
  }
}

TEST(Bundle, RejectsMalformedWork) {
  std::vector<uint8_t> bytes = serializeBundle(bundleWithWork());
  const nlohmann::json metadata = metadataOf(bytes);
  struct Mutation {
    std::function<void(nlohmann::json &)> mutate;
    std::string expected;
  };
  const Mutation mutations[] = {
      {[](auto &json) { json["work"].erase("dram_bytes"); },
       "bundle metadata: work.dram_bytes: missing"},
      {[](auto &json) {
         json["work"]["source_ops"][1]["gemms"][0] = {1, 4, 8};
       },
       "bundle metadata: work.source_ops[1].gemms[0]: must be [batch, m, k, n] (got [1,4,8])"},
      {[](auto &json) { json["work"]["source_ops"][1]["gemms"][0][2] = 0; },
       "bundle metadata: work.source_ops[1].gemms[0][2]: must be an integer in [1, "
       "18446744073709551615] (got 0)"},
      {[](auto &json) { json["work"]["source_ops"][2]["flops"] = 1; },
       "bundle metadata: work.source_ops[2].flops: unknown key"},
      {[](auto &json) { json["work"]["source_ops"].erase(3); },
       "work.source_ops has 3 entries for 4 source ops"},
      {[](auto &json) { json["work"]["source_ops"][2]["transcendental_elements"] = 33; },
       "work.source_ops[2]: transcendental_elements exceeds vector_elements"},
  };
  for (const Mutation &mutation : mutations) {
    nlohmann::json changed = metadata;
    mutation.mutate(changed);
    EXPECT_EQ(parseError(withMetadata(bytes, changed.dump())), mutation.expected);
  }
}

TEST(Bundle, RecordsTheHostTypeOfInt64OutputsOnly) {
  Bundle bundle = smallBundle();
  EXPECT_FALSE(metadataOf(serializeBundle(bundle))["outputs"][0].contains("host_type"));
  bundle.outputs[0].dtype = isa::DType::I32;
  bundle.outputs[0].host_type = HostType::I64;
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  EXPECT_EQ(metadataOf(bytes)["outputs"][0]["host_type"], "i64");
  expectSameBundle(parseBundle(bytes), bundle);
}

TEST(Bundle, RecordsStateAndTheTrainingOriginOnlyWhereThere) {
  nlohmann::json plain = metadataOf(serializeBundle(smallBundle()));
  EXPECT_FALSE(plain.contains("training"));
  EXPECT_FALSE(plain["outputs"][0].contains("state"));
  Bundle bundle = trainingBundle();
  bundle.inputs[0].host_type = HostType::I64; // labels: f32 words from int64
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  nlohmann::json metadata = metadataOf(bytes);
  EXPECT_EQ(metadata["outputs"][0]["state"], true);
  EXPECT_EQ(metadata["inputs"][0]["host_type"], "i64");
  EXPECT_EQ(metadata["training"]["model"], "/models/mlp.onnx");
  EXPECT_EQ(metadata["training"]["parameters"], nlohmann::json::array({"y"}));
  Bundle parsed = parseBundle(bytes);
  expectSameBundle(parsed, bundle);
  EXPECT_EQ(stateInput(parsed, parsed.outputs[0]), &parsed.inputs[1]);
  EXPECT_EQ(stateInput(smallBundle(), smallBundle().outputs[0]), nullptr);
}

TEST(Bundle, RejectsInconsistentState) {
  struct Case {
    const char *name;
    std::function<void(Bundle &)> mutate;
    std::string expected;
  };
  const Case cases[] = {
      {"state without its input", [](Bundle &b) { b.inputs[1].name = "z"; },
       "state output 'y' has no input of its name"},
      {"state of another shape",
       [](Bundle &b) {
         b.inputs[1].shape = {8, 4};
       },
       "state output 'y' differs from its input in shape or dtype"},
      {"input named as a plain output", [](Bundle &b) { b.outputs[0].state = false; },
       "tensor name 'y' is used twice"},
      {"parameter not state", [](Bundle &b) { b.training->parameters = {"x"}; },
       "training parameter 'x' is no state tensor"},
      {"int64 host type of an i32 input",
       [](Bundle &b) {
         b.inputs[1].host_type = HostType::I64;
         b.inputs[1].dtype = isa::DType::I32;
       },
       "input 'y': host type i64 is for outputs stored as i32 and inputs stored as f32 only"},
  };
  for (const Case &c : cases) {
    Bundle bundle = trainingBundle();
    c.mutate(bundle);
    try {
      bundle.validate();
      ADD_FAILURE() << c.name << ": accepted";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()), c.expected) << c.name;
    }
  }
  nlohmann::json metadata = metadataOf(serializeBundle(trainingBundle()));
  std::vector<uint8_t> bytes = serializeBundle(trainingBundle());
  metadata["outputs"][0]["state"] = 1;
  EXPECT_EQ(parseError(withMetadata(bytes, metadata.dump())),
            "bundle metadata: outputs[0].state: must be true or false (got 1)");
  metadata = metadataOf(bytes);
  metadata["training"].erase("parameters");
  EXPECT_EQ(parseError(withMetadata(bytes, metadata.dump())),
            "bundle metadata: training.parameters: missing");
}

TEST(Bundle, RejectsEveryTruncation) {
  std::vector<uint8_t> bytes = serializeBundle(smallBundle());
  for (size_t size = 0; size < bytes.size(); ++size)
    EXPECT_THROW(parseBundle(std::vector<uint8_t>(bytes.begin(), bytes.begin() + size)), Error)
        << "prefix of " << size << " bytes";
  EXPECT_EQ(parseError({bytes.begin(), bytes.begin() + 10}),
            "bundle is 10 bytes, too short for the 48-byte header");
  EXPECT_EQ(parseError({bytes.begin(), bytes.end() - 1}),
            "bundle truncated: the constants section needs 128 bytes, 127 remain");
}

TEST(Bundle, RejectsEverySingleBitFlip) {
  std::vector<uint8_t> bytes = serializeBundle(smallBundle());
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = bytes;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_THROW(parseBundle(flipped), Error) << "bit " << bit;
  }
}

TEST(Bundle, RejectsBadHeaders) {
  std::vector<uint8_t> bytes = serializeBundle(smallBundle());

  std::vector<uint8_t> magic = bytes;
  magic[0] = 'X';
  EXPECT_EQ(parseError(magic), "not a TPU bundle (bad magic)");

  std::vector<uint8_t> version = bytes;
  putLittleEndian(version, kVersionOffset, 3, 4);
  EXPECT_EQ(parseError(version), "bundle version 3, this build reads 1 to 2");
  putLittleEndian(version, kVersionOffset, 0, 4);
  EXPECT_EQ(parseError(version), "bundle version 0, this build reads 1 to 2");

  std::vector<uint8_t> header = bytes;
  putLittleEndian(header, kHeaderBytesOffset, 64, 4);
  EXPECT_EQ(parseError(header), "bundle header is 64 bytes, version 2 has 56");
  putLittleEndian(header, kHeaderBytesOffset, 48, 4);
  EXPECT_EQ(parseError(header), "bundle header is 48 bytes, version 2 has 56");

  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  EXPECT_EQ(parseError(trailing), "bundle has 1 trailing bytes after its sections");

  std::vector<uint8_t> reference = bytes;
  putLittleEndian(reference, kReferenceBytesOffset, 4, 8);
  EXPECT_EQ(parseError(reference),
            "bundle truncated: the reference section needs 4 bytes, 0 remain");

  // Sizes near the limits of their fields must not overflow or allocate.
  std::vector<uint8_t> instructions = bytes;
  putLittleEndian(instructions, kNumInstructionsOffset, 0xffffffff, 4);
  EXPECT_THAT(parseError(instructions),
              HasSubstr("the instructions section needs 68719476720 bytes"));
  std::vector<uint8_t> constants = bytes;
  putLittleEndian(constants, kConstantBytesOffset, ~uint64_t{0}, 8);
  EXPECT_THAT(parseError(constants), HasSubstr("bundle truncated: the constants section"));

  std::vector<uint8_t> corrupt = bytes;
  corrupt[metadataOffset(bytes) + 3] ^= 0x20;
  EXPECT_EQ(parseError(corrupt), "checksum mismatch: bundle is corrupt");
}

TEST(Bundle, RoundTripsTheReferenceConstants) {
  EXPECT_FALSE(metadataOf(serializeBundle(smallBundle())).contains("reference_constants"));
  Bundle bundle = bundleWithReferenceConstants();
  std::vector<uint8_t> bytes = serializeBundle(bundle);
  EXPECT_EQ(metadataOf(bytes)["reference_constants"],
            nlohmann::json::parse(R"([{"dram_address": 256, "elements": 64}])"));
  // The reference section, the values as fp32, ends the file.
  EXPECT_EQ(readLittleEndian(bytes.data() + kReferenceBytesOffset, 8), 64u * 4);
  EXPECT_EQ(readLittleEndian(bytes.data() + bytes.size() - 4, 4),
            floatBits(bundle.reference_constants[0].values.back()));
  expectSameBundle(parseBundle(bytes), bundle);
}

TEST(Bundle, LoadsVersion1Bundles) {
  // Version 1, as it was written: the 48-byte header without
  // reference_bytes, and no reference section.
  Bundle bundle = bundleWithWork();
  std::vector<uint8_t> old = serializeBundle(bundle);
  old.erase(old.begin() + kVersion1HeaderBytes, old.begin() + kHeaderBytes);
  putLittleEndian(old, kVersionOffset, 1, 4);
  putLittleEndian(old, kHeaderBytesOffset, kVersion1HeaderBytes, 4);
  refreshCrc(old);
  expectSameBundle(parseBundle(old), bundle);

  old.push_back(0);
  refreshCrc(old);
  EXPECT_EQ(parseError(old), "bundle has 1 trailing bytes after its sections");
}

TEST(Bundle, RejectsInconsistentReferenceConstants) {
  struct Case {
    const char *name;
    std::function<void(Bundle &)> mutate;
    std::string expected;
  };
  const Case cases[] = {
      {"image not the values rounded",
       [](Bundle &b) { b.reference_constants[0].values[5] = 100.0f; },
       "reference_constants[0]: element 5 of the image is not its value 100 rounded to bf16"},
      {"before the constants", [](Bundle &b) { b.reference_constants[0].dram_address = 0xfe; },
       "reference_constants[0]: 64 bf16 elements at 0xfe are not inside the constants"},
      {"past the constants", [](Bundle &b) { b.reference_constants[0].dram_address = 0x102; },
       "reference_constants[0]: 64 bf16 elements at 0x102 are not inside the constants"},
      {"empty", [](Bundle &b) { b.reference_constants[0].values.clear(); },
       "reference_constants[0]: 0 bf16 elements at 0x100 are not inside the constants"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Bundle bundle = bundleWithReferenceConstants();
    c.mutate(bundle);
    try {
      bundle.validate();
      ADD_FAILURE() << "accepted";
    } catch (const Error &error) {
      EXPECT_EQ(std::string(error.what()), c.expected);
    }
  }

  // The metadata's element counts must match the reference section.
  std::vector<uint8_t> bytes = serializeBundle(bundleWithReferenceConstants());
  nlohmann::json metadata = metadataOf(bytes);
  metadata["reference_constants"][0]["elements"] = 63;
  EXPECT_EQ(parseError(withMetadata(bytes, metadata.dump())),
            "the reference section has 256 bytes, the metadata's reference_constants need 252");
  // Checked before anything is allocated for the values.
  metadata["reference_constants"][0]["elements"] = 4294967295u;
  EXPECT_EQ(parseError(withMetadata(bytes, metadata.dump())),
            "the reference section has 256 bytes, the metadata's reference_constants need "
            "17179869180");
  metadata["reference_constants"][0]["elements"] = 0;
  EXPECT_THAT(parseError(withMetadata(bytes, metadata.dump())),
              HasSubstr("reference_constants[0].elements: must be an integer in [1, "));
}

TEST(Bundle, RejectsUndecodableInstructionsNamingTheIndex) {
  std::vector<uint8_t> bytes = serializeBundle(smallBundle());
  std::vector<uint8_t> unknown = bytes;
  unknown[kHeaderBytes + 3 * isa::kInstructionBytes] = 0xff;
  refreshCrc(unknown);
  EXPECT_EQ(parseError(unknown), "instruction 3: unknown opcode 0xff");

  std::vector<uint8_t> padding = bytes;
  padding[kHeaderBytes + isa::kInstructionBytes - 1] |= 0x80;
  refreshCrc(padding);
  EXPECT_THAT(parseError(padding), HasSubstr("instruction 0: dma.ld: padding bit 127 is set"));
}

TEST(Bundle, RejectsMalformedMetadata) {
  std::vector<uint8_t> bytes = serializeBundle(smallBundle());
  const nlohmann::json metadata = metadataOf(bytes);
  EXPECT_THAT(parseError(withMetadata(bytes, "{\"config\": ")),
              HasSubstr("bundle metadata: invalid JSON: parse error"));

  struct Mutation {
    std::function<void(nlohmann::json &)> mutate;
    std::string expected;
  };
  const Mutation mutations[] = {
      {[](auto &json) { json["inputs"] = 5; }, "bundle metadata: inputs: must be an array (got 5)"},
      {[](auto &json) { json.erase("source_of"); }, "bundle metadata: source_of: missing"},
      {[](auto &json) { json["extra"] = 1; }, "bundle metadata: extra: unknown key"},
      {[](auto &json) { json["inputs"][0]["dtype"] = "f64"; },
       "bundle metadata: inputs[0].dtype: must be one of f32, bf16, i8, i32 (got \"f64\")"},
      {[](auto &json) { json["outputs"][0]["shape"][1] = "8"; },
       "bundle metadata: outputs[0].shape[1]: must be an integer in [0, 9223372036854775807] "
       "(got \"8\")"},
      {[](auto &json) { json["outputs"][0]["host_type"] = "i16"; },
       "bundle metadata: outputs[0].host_type: must be i64 (got \"i16\")"},
      {[](auto &json) { json["source_of"][0] = -1; },
       "bundle metadata: source_of[0]: must be an integer in [0, 4294967295] (got -1)"},
      {[](auto &json) { json["source_ops"][2] = nullptr; },
       "bundle metadata: source_ops[2]: must be a string (got null)"},
      {[](auto &json) { json["config"]["array"]["rows"] = 0; },
       "bundle metadata: config: array.rows: must be an integer in [1, 2048] (got 0)"},
  };
  for (const Mutation &mutation : mutations) {
    nlohmann::json changed = metadata;
    mutation.mutate(changed);
    EXPECT_EQ(parseError(withMetadata(bytes, changed.dump())), mutation.expected);
  }
}

TEST(Bundle, RejectsInconsistentContent) {
  struct Case {
    const char *name;
    std::function<void(Bundle &)> mutate;
    std::string expected;
  };
  const Case cases[] = {
      {"tensor outside DRAM", [](Bundle &b) { b.outputs[0].dram_address = 0x240; },
       "output 'y': 128 bytes at 0x240 exceed dram_bytes 0x280"},
      {"overlapping tensors", [](Bundle &b) { b.outputs[0].dram_address = 0x40; },
       "output 'y' [0x40, 0xc0) overlaps input 'x' [0x0, 0x80)"},
      {"tensor over constants", [](Bundle &b) { b.inputs[0].dram_address = 0xc0; },
       "the constants [0x100, 0x180) overlaps input 'x' [0xc0, 0x140)"},
      {"constants outside DRAM", [](Bundle &b) { b.constant_address = 0x210; },
       "constants: 128 bytes at 0x210 exceed dram_bytes 0x280"},
      {"DRAM too large", [](Bundle &b) { b.dram_bytes = (uint64_t{16} << 30) + 1; },
       "dram_bytes 17179869185 exceeds the 16 GiB limit"},
      {"duplicate name", [](Bundle &b) { b.outputs[0].name = "x"; },
       "tensor name 'x' is used twice"},
      {"empty name", [](Bundle &b) { b.inputs[0].name.clear(); }, "an input has an empty name"},
      {"int64 host type of f32 data", [](Bundle &b) { b.outputs[0].host_type = HostType::I64; },
       "output 'y': host type i64 is for outputs stored as i32 and inputs stored as f32 only"},
      {"zero dimension",
       [](Bundle &b) {
         b.inputs[0].shape = {4, 0};
       },
       "input 'x': dimension 0 is not positive"},
      {"huge tensor",
       [](Bundle &b) {
         b.inputs[0].shape = {1 << 30, 1 << 30, 1 << 30};
       },
       "input 'x': larger than dram_bytes 640"},
      {"short source map", [](Bundle &b) { b.source_of.pop_back(); },
       "source_of has 10 entries for 11 instructions"},
      {"bad source index", [](Bundle &b) { b.source_of[3] = 9; },
       "source_of[3] is 9, but there are 4 source ops"},
      {"invalid config", [](Bundle &b) { b.config.array.cols = 4096; },
       "config: array.cols: must be an integer in [1, 2048] (got 4096)"},
      {"empty program",
       [](Bundle &b) {
         b.program.clear();
         b.source_of.clear();
       },
       "the program is empty"},
      {"missing halt",
       [](Bundle &b) {
         b.program.pop_back();
         b.source_of.pop_back();
       },
       "instruction 9 (dma.st dram_addr=0x200 dram_stride=8 space=sp sram_addr=96 sram_stride=8 "
       "rows=4 cols=8 dtype=f32): the program must end with halt"},
      {"early halt", [](Bundle &b) { b.program[2] = isa::makeInstruction(Opcode::Halt, {}); },
       "instruction 2 (halt): halt before the end"},
      {"DMA out of scratchpad", [](Bundle &b) { b.program[0].set(Field::SramAddr, 16384 - 8); },
       "instruction 0 (dma.ld dram_addr=0x0 dram_stride=8 space=sp sram_addr=16376 sram_stride=8 "
       "rows=4 cols=8 dtype=f32): scratchpad range [16376, 16408) exceeds 16384 words"},
      {"DMA out of accumulator",
       [](Bundle &b) { b.program[0].set(Field::Space, 1).set(Field::SramAddr, 4080); },
       "accumulator range [4080, 4112) exceeds 4096 words"},
      {"DMA out of DRAM", [](Bundle &b) { b.program[9].set(Field::DramAddr, 0x260); },
       "instruction 9 (dma.st dram_addr=0x260 dram_stride=8 space=sp sram_addr=96 sram_stride=8 "
       "rows=4 cols=8 dtype=f32): DRAM range [0x260, 0x2e0) exceeds dram_bytes 0x280"},
      {"empty DMA", [](Bundle &b) { b.program[0].set(Field::Rows, 0); },
       "rows and cols must be at least 1"},
      {"weights larger than the array", [](Bundle &b) { b.program[4].set(Field::Rows, 16); },
       "instruction 4 (mxu.ldw src_addr=32 src_stride=8 rows=16 cols=8): weight tile 16 x 8 "
       "exceeds the 8 x 8 array"},
      {"weights out of scratchpad", [](Bundle &b) { b.program[4].set(Field::SrcAddr, 16380); },
       "src scratchpad range [16380, 16444) exceeds 16384 words"},
      {"matmul wider than the array", [](Bundle &b) { b.program[5].set(Field::Cols, 9); },
       "cols 9 exceeds the array's 8 rows"},
      {"matmul dtype",
       [](Bundle &b) { b.program[5].set(Field::DType, static_cast<uint64_t>(isa::DType::I8)); },
       "dtype i8 differs from the array's bf16"},
      {"matmul against a narrower tile", [](Bundle &b) { b.program[4].set(Field::Rows, 4); },
       "instruction 5 (mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 cols=8 "
       "dtype=bf16 accumulate=0 flip=1): cols 8 exceeds the active weight tile's 4 rows"},
      {"matmul without weights", [](Bundle &b) { b.program[5].set(Field::Flip, 0); },
       "no active weights"},
      {"flip without a weight load", [](Bundle &b) { b.program[4] = b.program[5]; },
       "instruction 4 (mxu.mm"},
      {"second flip without a weight load", [](Bundle &b) { b.program[6] = b.program[5]; },
       "instruction 6 (mxu.mm src_addr=0 src_stride=8 dst_addr=0 dst_stride=8 rows=4 cols=8 "
       "dtype=bf16 accumulate=0 flip=1): flip with no weights in the shadow buffer"},
      {"matmul result past the accumulator",
       [](Bundle &b) { b.program[5].set(Field::DstAddr, 4068); },
       "dst accumulator range [4068, 4100) exceeds 4096 words"},
      {"vector source out of range", [](Bundle &b) { b.program[6].set(Field::SrcAddr, 4070); },
       "src accumulator range [4070, 4102) exceeds 4096 words"},
      {"vector second source out of range",
       [](Bundle &b) {
         b.program[6] = isa::assemble("v.add dst_space=sp dst_addr=96 src_space=acc src_addr=0 "
                                      "src2_space=sp src2_addr=16380 rows=4 cols=8 broadcast=row")
                            .at(0);
       },
       "src2 scratchpad range [16380, 16388) exceeds 16384 words"},
      {"clamp without scalar bounds",
       [](Bundle &b) {
         b.program[6] = isa::assemble("v.clamp dst_space=sp dst_addr=96 src_space=acc src_addr=0 "
                                      "src2_space=sp src2_addr=0 rows=4 cols=8 broadcast=none")
                            .at(0);
       },
       "v.clamp needs broadcast=scalar"},
  };
  for (const Case &test : cases) {
    SCOPED_TRACE(test.name);
    Bundle bundle = smallBundle();
    test.mutate(bundle);
    try {
      bundle.validate();
      ADD_FAILURE() << "validate() accepted it";
    } catch (const Error &error) {
      EXPECT_THAT(error.what(), HasSubstr(test.expected));
    }
    EXPECT_THAT(parseError(serializeBundle(bundle)), HasSubstr(test.expected));
  }
}

TEST(Bundle, ChecksOperandShapesPerOpcode) {
  // v.rowsum writes rows x 1, so it fits where a full-width result would not.
  Bundle bundle = smallBundle();
  bundle.program[6] = isa::assemble("v.rowsum dst_space=acc dst_addr=4092 src_space=acc "
                                    "src_addr=0 rows=4 cols=8")
                          .at(0);
  EXPECT_NO_THROW(bundle.validate());
  bundle.program[6].opcode = Opcode::VRelu;
  EXPECT_THROW(bundle.validate(), Error);

  bundle.program[6] = isa::assemble("v.clamp dst_space=sp dst_addr=96 src_space=acc src_addr=0 "
                                    "src2_space=sp src2_addr=16382 rows=4 cols=8 broadcast=scalar")
                          .at(0);
  EXPECT_NO_THROW(bundle.validate());
  bundle.program[6].set(Field::Src2Addr, 16383);
  EXPECT_THROW(bundle.validate(), Error);
}

// Instructions built in memory never passed the encoder's field checks.
TEST(Bundle, ValidateChecksTheFieldsOfInstructionsBuiltInMemory) {
  Bundle bundle = smallBundle();
  bundle.program[0].set(Field::Broadcast, 1);
  try {
    bundle.validate();
    FAIL() << "accepted";
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()),
              "instruction 0 (" + isa::disassemble(bundle.program[0]) +
                  "): dma.ld: field broadcast is not used by this opcode but is 1");
  }
}

TEST(Bundle, SerializeRejectsUnencodableInstructions) {
  Bundle bundle = smallBundle();
  bundle.program[2].set(Field::To, 1);
  try {
    serializeBundle(bundle);
    FAIL() << "accepted";
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "instruction 2: sync.push: from and to are both load");
  }
}

TEST(Bundle, FileErrorsNameThePath) {
  std::string garbage = ::testing::TempDir() + "garbage.tpub";
  std::ofstream(garbage) << "this is not a bundle, but it is long enough for a header........";
  try {
    readBundle(garbage);
    FAIL() << "accepted";
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()), garbage + ": not a TPU bundle (bad magic)");
  }
  std::string missing = ::testing::TempDir() + "missing.tpub";
  EXPECT_THROW(
      {
        try {
          readBundle(missing);
        } catch (const Error &error) {
          EXPECT_EQ(std::string(error.what()), missing + ": cannot read bundle: no such file");
          throw;
        }
      },
      Error);
  std::string unwritable = ::testing::TempDir() + "no-such-dir/out.tpub";
  try {
    writeBundle(smallBundle(), unwritable);
    FAIL() << "wrote into a missing directory";
  } catch (const Error &error) {
    EXPECT_THAT(error.what(), HasSubstr(unwritable + ": cannot write bundle"));
  }
  Bundle invalid = smallBundle();
  invalid.program.pop_back();
  invalid.source_of.pop_back();
  EXPECT_THROW(writeBundle(invalid, ::testing::TempDir() + "invalid.tpub"), Error);
}

TEST(Bundle, Crc32MatchesTheStandardCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const uint8_t *>(check.data()), check.size()), 0xCBF43926u);
}
