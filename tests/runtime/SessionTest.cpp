// Session: placing inputs, running on the simulator, fetching outputs.
#include "RuntimeTestUtil.h"

#include "tpu/isa/Error.h"
#include "tpu/runtime/Session.h"
#include "tpu/runtime/SimulatorBackend.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

namespace tpu::runtime::test {
namespace {

std::string errorOf(const std::function<void()> &action) {
  try {
    action();
  } catch (const Error &error) {
    return error.what();
  }
  return "";
}

TEST(Session, RunsOnTheSimulatorAndFetchesOutputs) {
  Session session(reluBundle(), "relu.tpub");
  session.setInput(0, floatTensor("x", {2, 4}, {1, -2, 3, -4, 0.5, -0.5, 0, 7}), "x.pb");
  SimulatorBackend backend;
  EXPECT_EQ(errorOf([&] { backend.stats(); }), "the simulator backend has not run yet");
  RunReport report = session.run(backend);
  const sim::SimStats &stats = backend.stats();
  EXPECT_GT(stats.total_cycles, 0u);
  // The figures every backend has are the simulator's: at the test config's
  // 1 GHz a cycle takes a nanosecond. Its JSON and summary are tpusim's.
  EXPECT_DOUBLE_EQ(report.device_seconds, static_cast<double>(stats.total_cycles) * 1e-9);
  EXPECT_EQ(report.host_seconds, stats.wall_seconds);
  EXPECT_EQ(report.json, sim::toJson(stats, session.bundle().config));
  EXPECT_EQ(report.summary, sim::formatSummary(stats, session.bundle().config));
  Tensor y = session.output(0);
  EXPECT_EQ(y.name, "y");
  EXPECT_EQ(y.type, ElementType::Float32);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(y.values, (std::vector<double>{1, 0, 3, 0, 0.5, 0, 0, 7}));

  // A second run starts from the same inputs, not from the first run's DRAM.
  session.run(backend);
  EXPECT_EQ(session.output(0).values, y.values);
}

// A backend that is not the simulator: y = relu(x) of reluBundle() on the host.
class HostReluBackend : public Backend {
public:
  std::string name() const override { return "host-relu"; }
  RunReport run(const Bundle &bundle, std::vector<uint8_t> &dram) override {
    for (uint64_t i = 0; i < bundle.inputs[0].elements(); ++i) {
      float x;
      std::memcpy(&x, dram.data() + bundle.inputs[0].dram_address + 4 * i, 4);
      float y = std::max(x, 0.0f);
      std::memcpy(dram.data() + bundle.outputs[0].dram_address + 4 * i, &y, 4);
    }
    RunReport report;
    report.device_seconds = 1e-6;
    report.json = {{"backend", name()}};
    return report;
  }
};

TEST(Session, RunsOnAnyBackend) {
  Session session(reluBundle(), "relu.tpub");
  session.setInput(0, floatTensor("x", {2, 4}, {1, -2, 3, -4, 0.5, -0.5, 0, 7}), "x.pb");
  HostReluBackend backend;
  RunReport report = session.run(backend);
  EXPECT_EQ(report.device_seconds, 1e-6);
  EXPECT_EQ(report.json, (nlohmann::json{{"backend", "host-relu"}}));
  EXPECT_EQ(session.output(0).values, (std::vector<double>{1, 0, 3, 0, 0.5, 0, 0, 7}));
}

TEST(Session, UnsetInputsAreZero) {
  Session session(reluBundle(), "relu.tpub");
  SimulatorBackend backend;
  session.run(backend);
  EXPECT_EQ(session.output(0).values, std::vector<double>(8, 0.0));
}

TEST(Session, Bf16AndInt8Inputs) {
  Bundle bundle = reluBundle();
  // The same program reading bf16: the input rounds to nearest even on the way in.
  bundle.inputs[0].dtype = DType::BF16;
  bundle.program[0].set(Field::DType, static_cast<uint64_t>(DType::BF16));
  Session session(bundle, "relu-bf16.tpub");
  session.setInput(
      0, floatTensor("x", {2, 4}, {1.0 + 1.0 / 256, 1.0 + 3.0 / 256, 0, 0, 0, 0, 0, 0}), "x.pb");
  SimulatorBackend backend;
  session.run(backend);
  EXPECT_EQ(session.output(0).values[0], 1.0);
  EXPECT_EQ(session.output(0).values[1], 1.0 + 4.0 / 256);

  bundle.inputs[0].dtype = DType::I8;
  Session quantized(bundle, "q.tpub");
  EXPECT_EQ(errorOf([&] {
              quantized.setInput(
                  0, Tensor{"x", ElementType::Int32, {2, 4}, {0, 0, 0, 300, 0, 0, 0, 0}}, "q.pb");
            }),
            "q.tpub: input 0 'x' (q.pb): element 3: value 300 does not fit int8");
}

TEST(Session, Int32WordsOfAnInt64OutputWiden) {
  Bundle bundle = int64OutputBundle();
  ASSERT_NO_THROW(bundle.validate());
  Session session(bundle, "indices.tpub");
  session.setInput(0, floatTensor("x", {2, 4}, {0, 1, 2, 3, 4094, 4095, -1, 7}), "x.pb");
  SimulatorBackend backend;
  session.run(backend);
  Tensor y = session.output(0);
  EXPECT_EQ(y.type, ElementType::Int64);
  EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(y.values, (std::vector<double>{0, 1, 2, 3, 4094, 4095, -1, 7}));
}

// reluBundle with v.exp as a training step would be: s' = exp(s), the
// output named as the input and marked state.
Bundle stateBundle() {
  Bundle bundle = reluBundle();
  for (isa::Instruction &instruction : bundle.program)
    if (instruction.opcode == Opcode::VRelu)
      instruction.opcode = Opcode::VExp;
  bundle.inputs[0].name = "s";
  bundle.outputs[0].name = "s";
  bundle.outputs[0].state = true;
  return bundle;
}

TEST(Session, StateStaysInDramBetweenRuns) {
  Bundle bundle = stateBundle();
  ASSERT_NO_THROW(bundle.validate());
  Session session(bundle, "state.tpub");
  std::vector<double> s0{0, 0.5, -1, 1, 0.25, -0.5, 2, -2};
  session.setInput(0, floatTensor("s", {2, 4}, s0), "s.pb");
  SimulatorBackend backend;
  auto expOf = [](std::vector<double> values) {
    for (double &value : values)
      value = static_cast<float>(std::exp(static_cast<float>(value)));
    return values;
  };
  session.run(backend);
  EXPECT_EQ(session.input(0).values, expOf(s0)) << "the update is the next run's input";
  session.run(backend, /*commitState=*/false);
  EXPECT_EQ(session.output(0).values, expOf(expOf(s0)));
  EXPECT_EQ(session.input(0).values, expOf(s0)) << "a run without commit leaves the state";
  session.run(backend);
  EXPECT_EQ(session.output(0).values, expOf(expOf(s0)));
  EXPECT_EQ(session.input(0).values, expOf(expOf(s0)));
}

TEST(Session, Int64IntoAnF32InputOfHostTypeI64) {
  Bundle bundle = reluBundle();
  bundle.inputs[0].host_type = HostType::I64;
  Session session(bundle, "labels.tpub");
  session.setInput(0, Tensor{"x", ElementType::Int64, {2, 4}, {0, 1, 2, 9, -1, 3, 16777216, 5}},
                   "labels.pb");
  SimulatorBackend backend;
  session.run(backend);
  EXPECT_EQ(session.output(0).values, (std::vector<double>{0, 1, 2, 9, 0, 3, 16777216, 5}));
  EXPECT_EQ(errorOf([&] {
              session.setInput(
                  0, Tensor{"x", ElementType::Int64, {2, 4}, {0, 1, 2, 16777217, 0, 0, 0, 0}},
                  "labels.pb");
            }),
            "labels.tpub: input 0 'x' (labels.pb): element 3: 16777217 is beyond 2^24, which the "
            "program's fp32 holds exactly");
  EXPECT_EQ(errorOf([&] {
              session.setInput(0, floatTensor("x", {2, 4}, std::vector<double>(8)), "labels.pb");
            }),
            "labels.tpub: input 0 'x' (labels.pb): the f32 input needs integer data, got float32");
}

TEST(Session, InputErrorsNameTheTensorAndTheFile) {
  Session session(reluBundle(), "relu.tpub");
  EXPECT_EQ(
      errorOf([&] {
        session.setInput(0, floatTensor("x", {4, 2}, std::vector<double>(8)), "data/input_0.pb");
      }),
      "relu.tpub: input 0 'x' (data/input_0.pb): shape [4, 2] differs from the model's [2, 4]");
  EXPECT_EQ(errorOf([&] {
              session.setInput(0, Tensor{"x", ElementType::Int64, {2, 4}, std::vector<double>(8)},
                               "data/input_0.pb");
            }),
            "relu.tpub: input 0 'x' (data/input_0.pb): the f32 input needs floating-point data, "
            "got int64");
  EXPECT_EQ(
      errorOf([&] {
        session.setInput(1, floatTensor("x", {2, 4}, std::vector<double>(8)), "data/input_1.pb");
      }),
      "relu.tpub: the model has 1 inputs, so there is no input 1 (data/input_1.pb)");
  EXPECT_EQ(errorOf([&] { session.output(0); }), "relu.tpub: no outputs before the first run");
}

TEST(Session, LoadsBundleFiles) {
  ScratchDirectory directory;
  writeBundle(reluBundle(), directory.file("relu.tpub"));
  Session session = Session::fromFile(directory.file("relu.tpub"));
  EXPECT_EQ(session.bundle().outputs[0].name, "y");
  EXPECT_THROW(Session::fromFile(directory.file("missing.tpub")), Error);
}

// Simulation errors surface from run() as tpu::Error.
TEST(Session, SimulatorErrorsPropagate) {
  Bundle bundle = reluBundle();
  bundle.program[0].set(Field::SramAddr, 300);
  Session session(bundle, "bad.tpub");
  SimulatorBackend backend;
  EXPECT_NE(errorOf([&] { session.run(backend); }).find("scratchpad range [300, 308) exceeds"),
            std::string::npos);
}

// A CUDA bundle's host image goes through a Session like DRAM; the simulator
// refuses the bundle rather than run an empty program on it.
TEST(Session, TheSimulatorRefusesACudaBundle) {
  Bundle bundle;
  bundle.dram_bytes = 256;
  bundle.inputs = {{"x", {2, 4}, isa::DType::F32, 0, TensorInfo::Role::Input}};
  bundle.outputs = {{"y", {2, 4}, isa::DType::F32, 128, TensorInfo::Role::Output}};
  bundle.cuda = CudaProgram{"sm_80", "full", "// source", {{"k0", "relu", "element", 64}}};
  Session session(bundle, "relu-cuda.tpub");
  session.setInput(0, floatTensor("x", {2, 4}, {1, -2, 3, -4, 0.5, -0.5, 0, 7}), "x.pb");
  EXPECT_EQ(session.input(0).values, (std::vector<double>{1, -2, 3, -4, 0.5, -0.5, 0, 7}));
  SimulatorBackend backend;
  EXPECT_EQ(errorOf([&] { session.run(backend); }),
            "the simulator runs accelerator bundles, and this is a CUDA bundle (tpusim runs it "
            "through the CUDA backend)");
}

} // namespace
} // namespace tpu::runtime::test
