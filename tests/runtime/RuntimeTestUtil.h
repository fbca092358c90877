// A tiny valid bundle and a scratch directory for runtime and tpusim tests.
#pragma once

#include "SimTestUtil.h"
#include "tpu/runtime/Tensor.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

namespace tpu::runtime::test {

using namespace tpu::sim::test;

// y = relu(x) for x: f32 [2, 4] at DRAM 0, y: f32 [2, 4] at DRAM 64.
inline Bundle reluBundle() {
  Bundle bundle =
      makeBundle(loadComputeStore({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 2, 4, DType::F32)},
                                  {vectorUnary(Opcode::VRelu, {Space::Scratchpad, 8},
                                               {Space::Scratchpad, 0}, 2, 4)},
                                  {dmaStore(64, 4, Space::Scratchpad, 8, 4, 2, 4, DType::F32)}),
                 128);
  TensorInfo x;
  x.name = "x";
  x.shape = {2, 4};
  x.dram_address = 0;
  TensorInfo y = x;
  y.name = "y";
  y.dram_address = 64;
  y.role = TensorInfo::Role::Output;
  bundle.inputs = {x};
  bundle.outputs = {y};
  bundle.source_ops = {"Relu"};
  bundle.source_of.assign(bundle.program.size(), 0);
  return bundle;
}

// reluBundle with v.cvt.f2i for the relu: y = x rounded to int32 words, an
// int64 output of the model.
inline Bundle int64OutputBundle() {
  Bundle bundle = reluBundle();
  for (isa::Instruction &instruction : bundle.program)
    if (instruction.opcode == Opcode::VRelu)
      instruction.opcode = Opcode::VCvtF2I;
    else if (instruction.opcode == Opcode::DmaStore)
      instruction.set(Field::DType, static_cast<uint64_t>(DType::I32));
  bundle.outputs[0].dtype = DType::I32;
  bundle.outputs[0].host_type = HostType::I64;
  return bundle;
}

inline Tensor floatTensor(std::string name, std::vector<int64_t> shape,
                          std::vector<double> values) {
  return Tensor{std::move(name), ElementType::Float32, std::move(shape), std::move(values)};
}

// A fresh directory under the system's temporary directory, removed afterwards.
class ScratchDirectory {
public:
  ScratchDirectory() {
    const ::testing::TestInfo *test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("tpu-") + test->test_suite_name() + "-" + test->name() + "-" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path_); }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  const std::filesystem::path &path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace tpu::runtime::test
