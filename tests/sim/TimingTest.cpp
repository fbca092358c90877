// The timing model of docs/simulator.md, checked against closed forms: the
// DRAM channel, the matrix unit (one mm over many shapes and array sizes, and
// chains of weight tiles that overlap), the vector unit (transcendentals at
// their own rate and energy), banks and the queues.
// simulate() runs every program in cycle mode (the PE registers stepped one
// cycle at a time) and in fast mode, and requires both to agree.
#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>

namespace tpu::sim::test {
namespace {

const WorkStats &opcodeStats(const SimStats &stats, Opcode opcode) {
  std::string_view name = isa::opcodeInfo(opcode).mnemonic;
  auto it = std::find_if(stats.by_opcode.begin(), stats.by_opcode.end(),
                         [&](const WorkStats &work) { return work.name == name; });
  if (it == stats.by_opcode.end())
    throw Error(std::string("no ") + std::string(name) + " ran");
  return *it;
}

// smallConfig(): DRAM latency 10 cycles at 8 bytes per cycle with one
// request outstanding, vector latency 2 with 4 lanes, a 4 x 4 array, one
// bank per memory.
TEST(Timing, LoadComputeStorePipeline) {
  std::vector<uint8_t> dram(256);
  Bundle bundle = makeBundle(
      {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 2, 4, DType::F32), // pc 0
       push(Queue::Load, Queue::Compute), pop(Queue::Load, Queue::Compute),
       vectorUnary(Opcode::VRelu, {Space::Scratchpad, 8}, {Space::Scratchpad, 0}, 2, 4), // pc 3
       push(Queue::Compute, Queue::Store), pop(Queue::Compute, Queue::Store),
       dmaStore(128, 4, Space::Scratchpad, 8, 4, 2, 4, DType::F32), halt()},
      dram.size());
  SimStats stats = simulate(bundle, dram);
  // Instruction pc is dispatched at cycle pc.
  // load:    dma.ld, two 16-byte requests one at a time: 0 + 10 latency, bus 10..12;
  //          12 + 10, bus 22..24. push 24..25 (token at 24).
  // compute: pop from 2, token at 24, done 25; v.relu 25..29 (2 + 2 rows * ceil(4/4));
  //          push 29..30.
  // store:   pop from 5, token at 29, done 30; dma.st 30 + 10, bus 40..42; 42 + 10, bus 52..54.
  EXPECT_EQ(stats.total_cycles, 54u);
  const ComponentStats &load = stats.component(Component::DmaLoad);
  EXPECT_EQ(load.busy, 4u);
  EXPECT_EQ(load.stalled[unsigned(StallReason::Dram)], 20u);
  EXPECT_EQ(load.idle, 54u - 24);
  const ComponentStats &vector = stats.component(Component::Vector);
  EXPECT_EQ(vector.busy, 4u);
  EXPECT_EQ(vector.stalled[unsigned(StallReason::Token)], 22u); // 2..24
  EXPECT_EQ(vector.instructions, 1u);
  const ComponentStats &store = stats.component(Component::DmaStore);
  EXPECT_EQ(store.busy, 4u);
  EXPECT_EQ(store.stalled[unsigned(StallReason::Token)], 24u); // 5..29
  EXPECT_EQ(store.stalled[unsigned(StallReason::Dram)], 20u);
  EXPECT_EQ(stats.component(Component::Controller).busy, 8u);
  EXPECT_EQ(stats.dram_bytes_read, 32u);
  EXPECT_EQ(stats.dram_bytes_written, 32u);
  EXPECT_EQ(stats.scratchpad.writes, 8u + 8);
  EXPECT_EQ(stats.scratchpad.reads, 8u + 8);
  EXPECT_EQ(stats.macs, 0u);
  // Energy from the config's per-access figures: 64 DRAM bytes at 10 pJ,
  // 32 scratchpad words at 2 pJ, 8 vector elements at 0.5 pJ, 100 mW static.
  EXPECT_DOUBLE_EQ(stats.energy.dram_pj, 640.0);
  EXPECT_DOUBLE_EQ(stats.energy.scratchpad_pj, 64.0);
  EXPECT_DOUBLE_EQ(stats.energy.vector_pj, 4.0);
  EXPECT_DOUBLE_EQ(stats.energy.static_pj, 100.0 * 54);
}

// One dma.ld of `rows` requests of `rowBytes`: with O requests outstanding,
// latency L and b = ceil(rowBytes / bandwidth) bus cycles per request, the
// transfer ends at L + n b when O b >= L + b (the bus is the limit), else
// each wave of O requests costs L + b: floor((n-1)/O) (L + b) + L + ((n-1) mod O + 1) b.
uint64_t transferCycles(uint64_t rows, uint64_t rowBytes, double bandwidth, uint64_t latency,
                        uint64_t outstanding) {
  uint64_t b = static_cast<uint64_t>(std::ceil(static_cast<double>(rowBytes) / bandwidth));
  if (outstanding * b >= latency + b)
    return latency + rows * b;
  return (rows - 1) / outstanding * (latency + b) + latency + ((rows - 1) % outstanding + 1) * b;
}

class DramTransfer
    : public ::testing::TestWithParam<std::tuple<uint64_t, uint64_t, double, uint32_t, uint32_t>> {
};

TEST_P(DramTransfer, MatchesTheClosedForm) {
  auto [rows, cols, bandwidth, latency, outstanding] = GetParam();
  HardwareConfig config = smallConfig();
  config.dram.bytes_per_cycle = bandwidth;
  config.dram.latency_cycles = latency;
  config.dram.max_outstanding = outstanding;
  std::vector<uint8_t> dram(4096);
  Bundle bundle =
      makeBundle({dmaLoad(0, cols, Space::Scratchpad, 0, cols, rows, cols, DType::F32), halt()},
                 dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  uint64_t expected = transferCycles(rows, cols * 4, bandwidth, latency, outstanding);
  EXPECT_EQ(stats.total_cycles, std::max<uint64_t>(expected, 2)); // halt dispatches at 1
  EXPECT_EQ(stats.component(Component::DmaLoad).busy,
            rows * static_cast<uint64_t>(std::ceil(cols * 4 / bandwidth)));
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, DramTransfer,
    ::testing::Values(std::make_tuple(1, 4, 8.0, 10, 1), std::make_tuple(8, 4, 8.0, 10, 1),
                      std::make_tuple(8, 4, 8.0, 10, 2), std::make_tuple(8, 4, 8.0, 10, 6),
                      std::make_tuple(8, 4, 8.0, 10, 16), std::make_tuple(7, 3, 2.5, 0, 1),
                      std::make_tuple(16, 16, 64.0, 100, 4), std::make_tuple(16, 16, 64.0, 100, 32),
                      std::make_tuple(5, 1, 0.5, 3, 2), std::make_tuple(9, 20, 16.0, 7, 3),
                      std::make_tuple(12, 8, 32.0, 40, 5)));

// The same DRAM rows loaded transposed: the corner turn moves one on-chip row
// (a DRAM column) of up to W = floor(bandwidth / 4) words a cycle from the
// first data on, so the transfer ends at max(the DRAM closed form,
// L + cols * ceil(rows / W)).
TEST_P(DramTransfer, TransposedEndsWithTheSlowerOfDramAndTheCornerTurn) {
  auto [rows, cols, bandwidth, latency, outstanding] = GetParam();
  HardwareConfig config = smallConfig();
  config.scratchpad = {4096, 1};
  config.dram.bytes_per_cycle = bandwidth;
  config.dram.latency_cycles = latency;
  config.dram.max_outstanding = outstanding;
  std::vector<uint8_t> dram(4096);
  Bundle bundle = makeBundle(
      {transposed(dmaLoad(0, cols, Space::Scratchpad, 0, rows, rows, cols, DType::F32)), halt()},
      dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  uint64_t width = std::max<uint64_t>(1, static_cast<uint64_t>(bandwidth / 4));
  uint64_t turn = latency + cols * ((rows + width - 1) / width);
  uint64_t expected =
      std::max(transferCycles(rows, cols * 4, bandwidth, latency, outstanding), turn);
  EXPECT_EQ(stats.total_cycles, std::max<uint64_t>(expected, 2));
  if (rows == 1) { // the bus run and the turn both start at L: busy for the longer
    EXPECT_EQ(stats.component(Component::DmaLoad).busy,
              std::max(turn - latency, static_cast<uint64_t>(std::ceil(cols * 4 / bandwidth))));
  }
}

// An array of R x C with memories large enough for every shape below.
HardwareConfig arrayConfig(uint32_t rows, uint32_t cols) {
  HardwareConfig config = smallConfig();
  config.name = "test-array";
  config.array.rows = rows;
  config.array.cols = cols;
  config.scratchpad = {512 * 1024, 1};
  config.accumulator = {512 * 1024, 1};
  config.dram.bytes_per_cycle = 64;
  config.dram.max_outstanding = 16;
  return config;
}

struct Chain {
  uint32_t arrayRows, arrayCols;
  uint64_t m, k, n;
  unsigned tiles; // weight tiles, each loaded and multiplied (mm accumulates after the first)
};

// The documented closed form for a chain of tiles t = 0, 1, ...: ldw(t), then
// mm(t) with flip, all in the compute queue, starting at cycle t0:
//   ldw_start(t) = max(mm_start(t-1), ldw_start(t-1) + k, mm_end(t-2)),
//   mm_start(t)  = max(ldw_start(t) + k, mm_start(t-1) + m),
//   mm_end(t)    = mm_start(t) + m + R + n - 1.
struct ChainTimes {
  std::vector<uint64_t> ldwStart, mmStart, mmEnd;
};

ChainTimes closedForm(const Chain &chain, uint64_t t0) {
  ChainTimes times;
  for (unsigned t = 0; t < chain.tiles; ++t) {
    uint64_t ldw = t0;
    if (t >= 1)
      ldw = std::max({ldw, times.mmStart[t - 1], times.ldwStart[t - 1] + chain.k});
    if (t >= 2)
      ldw = std::max(ldw, times.mmEnd[t - 2]);
    uint64_t mm = ldw + chain.k;
    if (t >= 1)
      mm = std::max(mm, times.mmStart[t - 1] + chain.m);
    times.ldwStart.push_back(ldw);
    times.mmStart.push_back(mm);
    times.mmEnd.push_back(mm + chain.m + chain.arrayRows + chain.n - 1);
  }
  return times;
}

class MatrixTiming : public ::testing::TestWithParam<Chain> {};

TEST_P(MatrixTiming, MatchesTheClosedFormAndTheReference) {
  const Chain &chain = GetParam();
  const uint64_t m = chain.m, k = chain.k, n = chain.n;
  // DRAM: A (m x k) at 0, W (k x n) after it, C (m x n) after that; on chip
  // A and W in the scratchpad, C in the accumulator.
  uint64_t wAddress = 4 * m * k, cAddress = wAddress + 4 * k * n;
  uint64_t spW = m * k;
  std::vector<uint8_t> dram(cAddress + 4 * m * n);
  std::vector<float> a = testValues(m * k, 11), w = testValues(k * n, 12);
  putFloats(dram, 0, a);
  putFloats(dram, wAddress, w);

  std::vector<Instruction> compute;
  for (unsigned t = 0; t < chain.tiles; ++t) {
    compute.push_back(loadWeights(spW, n, k, n));
    MatMulFields mm;
    mm.srcAddr = 0;
    mm.srcStride = k;
    mm.dstStride = n;
    mm.rows = m;
    mm.cols = k;
    mm.flip = true;
    mm.accumulate = t > 0;
    compute.push_back(matMul(mm));
  }
  Bundle bundle =
      makeBundle(loadComputeStore(
                     {dmaLoad(0, k, Space::Scratchpad, 0, k, m, k, DType::F32),
                      dmaLoad(wAddress, n, Space::Scratchpad, spW, n, k, n, DType::F32)},
                     compute, {dmaStore(cAddress, n, Space::Accumulator, 0, n, m, n, DType::F32)}),
                 dram.size(), arrayConfig(chain.arrayRows, chain.arrayCols));

  // Per-instruction times from both modes' traces, which must agree.
  std::vector<TraceEvent> events[2];
  for (Mode mode : {Mode::Cycle, Mode::Fast}) {
    std::vector<uint8_t> image = dram;
    SimOptions options;
    options.mode = mode;
    options.trace = true;
    SimStats stats = tpu::sim::simulate(bundle, image, options);
    for (const TraceEvent &event : stats.events)
      if (event.component == Component::Matrix &&
          isa::opcodeInfo(bundle.program[event.pc].opcode).unit == isa::Unit::Matrix)
        events[mode == Mode::Cycle ? 0 : 1].push_back(event);
  }
  ASSERT_EQ(events[0].size(), 2u * chain.tiles);
  ASSERT_EQ(events[1].size(), events[0].size());

  std::sort(events[0].begin(), events[0].end(),
            [](const TraceEvent &x, const TraceEvent &y) { return x.pc < y.pc; });
  uint64_t t0 = events[0][0].start; // the first ldw starts once the operands are in
  ChainTimes expected = closedForm(chain, t0);
  for (unsigned t = 0; t < chain.tiles; ++t) {
    const TraceEvent &ldw = events[0][2 * t], &mm = events[0][2 * t + 1];
    EXPECT_EQ(ldw.start, expected.ldwStart[t]) << "ldw " << t;
    EXPECT_EQ(ldw.end, expected.ldwStart[t] + k) << "ldw " << t;
    EXPECT_EQ(mm.start, expected.mmStart[t]) << "mm " << t;
    EXPECT_EQ(mm.end, expected.mmEnd[t]) << "mm " << t;
  }
  for (const TraceEvent &fast : events[1]) {
    auto same = std::find_if(events[0].begin(), events[0].end(),
                             [&](const TraceEvent &e) { return e.pc == fast.pc; });
    EXPECT_EQ(same->start, fast.start);
    EXPECT_EQ(same->end, fast.end);
  }

  // The data: every tile adds the same product, in order.
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.macs, chain.tiles * m * k * n);
  std::vector<float> product = referenceMatMulBF16(a, w, m, k, n), expectedC = product;
  for (unsigned t = 1; t < chain.tiles; ++t)
    for (size_t i = 0; i < expectedC.size(); ++i)
      expectedC[i] += product[i];
  std::vector<float> c = getFloats(dram, cAddress, m * n);
  for (size_t i = 0; i < c.size(); ++i)
    ASSERT_EQ(floatBits(c[i]), floatBits(expectedC[i])) << "element " << i;
}

std::vector<Chain> matrixCases() {
  std::vector<Chain> cases;
  // One mm over many shapes per array size, ragged tiles included.
  const std::pair<uint32_t, uint32_t> arrays[] = {{1, 1},  {4, 4},  {8, 8},   {16, 16},
                                                  {8, 16}, {16, 8}, {32, 32}, {128, 128}};
  for (auto [rows, cols] : arrays) {
    uint64_t half = std::max<uint64_t>(1, rows / 2);
    const std::tuple<uint64_t, uint64_t, uint64_t> shapes[] = {
        {1, 1, 1},
        {1, rows, cols},
        {5, rows, cols},
        {2 * rows + 3, std::max<uint64_t>(1, rows - 1), std::max<uint64_t>(1, cols - 1)},
        {17, half, 1},
        {rows, 1, cols},
        {3, half, std::max<uint64_t>(1, cols / 3)}};
    for (auto [m, k, n] : shapes)
      cases.push_back({rows, cols, m, k, n, 1});
  }
  // Chains of weight tiles: the shadow plane loads while the array computes;
  // with few rows per tile the weights are the bottleneck, with many the
  // activations, and with one the draining of the plane before a reload.
  const Chain chains[] = {{4, 4, 1, 4, 4, 5},     {4, 4, 2, 3, 2, 4},    {4, 4, 12, 4, 4, 4},
                          {8, 8, 8, 8, 8, 3},     {8, 8, 30, 8, 8, 3},   {8, 4, 5, 8, 3, 6},
                          {16, 16, 4, 16, 16, 4}, {16, 16, 64, 7, 9, 3}, {32, 32, 40, 32, 32, 3}};
  cases.insert(cases.end(), std::begin(chains), std::end(chains));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ArraysAndShapes, MatrixTiming, ::testing::ValuesIn(matrixCases()),
                         [](const ::testing::TestParamInfo<Chain> &info) {
                           const Chain &c = info.param;
                           return std::to_string(c.arrayRows) + "x" + std::to_string(c.arrayCols) +
                                  "_m" + std::to_string(c.m) + "_k" + std::to_string(c.k) + "_n" +
                                  std::to_string(c.n) + "_tiles" + std::to_string(c.tiles) + "_" +
                                  std::to_string(info.index);
                         });

TEST(Timing, VectorLanesAndDispatchBound) {
  std::vector<uint8_t> dram(64);
  // 3 rows of 5 on 4 lanes: 2 + 3 * 2 = 8 cycles.
  Bundle vector = makeBundle(
      {vectorUnary(Opcode::VExp, {Space::Accumulator, 0}, {Space::Scratchpad, 0}, 3, 5), halt()},
      dram.size());
  EXPECT_EQ(simulate(vector, dram).total_cycles, 8u);

  // Nothing but the controller: one cycle per instruction.
  std::vector<Instruction> nops(9, isa::makeInstruction(Opcode::Nop, {}));
  nops.push_back(halt());
  SimStats stats = simulate(makeBundle(nops, dram.size()), dram);
  EXPECT_EQ(stats.total_cycles, 10u);
  EXPECT_EQ(stats.component(Component::Controller).busy, 10u);
  EXPECT_EQ(opcodeStats(stats, Opcode::Nop).instructions, 9u);
}

// smallConfig() with a transcendental unit that takes 3 cycles for each group
// of 4 lanes and 2.25 pJ an element; an add-class element stays 1 cycle per
// group and 0.5 pJ.
HardwareConfig slowTranscendentalsConfig() {
  HardwareConfig config = smallConfig();
  config.vector.transcendental_cycles_per_group = 3;
  config.energy.vector_transcendental_pj = 2.25;
  return config;
}

// What docs/isa.md calls the transcendentals.
bool documentedTranscendental(Opcode opcode) {
  for (Opcode transcendental : {Opcode::VExp, Opcode::VRecip, Opcode::VRsqrt, Opcode::VSigmoid,
                                Opcode::VTanh, Opcode::VLog})
    if (opcode == transcendental)
      return true;
  return false;
}

// One instruction of every vector opcode in the table, 3 rows of 5.
std::vector<Instruction> everyVectorOp() {
  std::vector<Instruction> ops;
  for (const isa::OpcodeInfo &info : isa::opcodeTable()) {
    if (info.unit != isa::Unit::Vector)
      continue;
    if (isa::usesField(info, Field::Src2Addr))
      ops.push_back(vectorBinary(
          info.opcode, {Space::Accumulator, 0}, {Space::Scratchpad, 0}, {Space::Scratchpad, 64},
          info.opcode == Opcode::VClamp ? isa::Broadcast::Scalar : isa::Broadcast::None, 3, 5));
    else
      ops.push_back(
          vectorUnary(info.opcode, {Space::Accumulator, 0}, {Space::Scratchpad, 0}, 3, 5));
  }
  return ops;
}

TEST(Timing, TranscendentalsTakeTheirOwnCyclesAndEnergy) {
  HardwareConfig config = slowTranscendentalsConfig();
  std::vector<uint8_t> dram(64);
  unsigned transcendentals = 0;
  for (const Instruction &op : everyVectorOp()) {
    std::string name(isa::opcodeInfo(op.opcode).mnemonic);
    bool transcendental = documentedTranscendental(op.opcode);
    transcendentals += transcendental;
    SimStats stats = simulate(makeBundle({op, halt()}, dram.size(), config), dram);
    // 3 rows of ceil(5 / 4) = 2 groups after a latency of 2: 2 + 6 * 3 = 20
    // cycles for a transcendental, 2 + 6 = 8 for the rest; 15 elements at
    // 2.25 or 0.5 pJ.
    EXPECT_EQ(stats.total_cycles, transcendental ? 20u : 8u) << name;
    EXPECT_EQ(stats.component(Component::Vector).busy, transcendental ? 20u : 8u) << name;
    EXPECT_EQ(stats.vector_elements, 15u) << name;
    EXPECT_EQ(stats.vector_transcendental_elements, transcendental ? 15u : 0u) << name;
    EXPECT_DOUBLE_EQ(stats.energy.vector_pj, transcendental ? 33.75 : 7.5) << name;
  }
  EXPECT_EQ(transcendentals, 6u);
}

TEST(Timing, VectorEnergyAddsBothClasses) {
  HardwareConfig config = slowTranscendentalsConfig();
  std::vector<uint8_t> dram(64);
  // v.tanh 4 x 9 then v.mul 4 x 9, both 4 rows of ceil(9 / 4) = 3 groups:
  // the tanh occupies the unit 0..2 + 12 * 3 = 38, the mul (dispatched at 1)
  // 38..38 + 2 + 12 = 52.
  Bundle bundle =
      makeBundle({vectorUnary(Opcode::VTanh, {Space::Scratchpad, 64}, {Space::Scratchpad, 0}, 4, 9),
                  vectorBinary(Opcode::VMul, {Space::Accumulator, 0}, {Space::Scratchpad, 0},
                               {Space::Scratchpad, 64}, isa::Broadcast::None, 4, 9),
                  halt()},
                 dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.total_cycles, 52u);
  EXPECT_EQ(opcodeStats(stats, Opcode::VTanh).cycles, 38u);
  EXPECT_EQ(opcodeStats(stats, Opcode::VMul).cycles, 14u);
  EXPECT_EQ(stats.vector_elements, 72u);
  EXPECT_EQ(stats.vector_transcendental_elements, 36u);
  // 36 elements at 2.25 pJ and 36 at 0.5 pJ.
  EXPECT_DOUBLE_EQ(stats.energy.vector_pj, 36 * 2.25 + 36 * 0.5);
}

TEST(Timing, BankConflictsSerialiseComponents) {
  // Two scratchpad banks of 128 words. A long dma.ld into bank 0 and a v.copy
  // (issued at cycle 1) reading bank 0 or bank 1.
  HardwareConfig config = smallConfig();
  config.scratchpad = {1024, 2};
  std::vector<uint8_t> dram(1024);
  auto run = [&](uint64_t copySource) {
    Bundle bundle = makeBundle(
        {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 4, 4, DType::F32),
         vectorUnary(Opcode::VCopy, {Space::Accumulator, 0}, {Space::Scratchpad, copySource}, 1, 4),
         halt()},
        dram.size(), config);
    return simulate(bundle, dram);
  };
  // dma.ld: four 16-byte requests, one outstanding: 4 * (10 + 2) = 48 cycles.
  // The copy takes 2 + 1 = 3 cycles: 1..4 from bank 1, 48..51 from bank 0.
  SimStats apart = run(128);
  EXPECT_EQ(apart.total_cycles, 48u);
  EXPECT_EQ(apart.component(Component::Vector).stalled[unsigned(StallReason::Bank)], 0u);
  SimStats together = run(64);
  EXPECT_EQ(together.total_cycles, 51u);
  EXPECT_EQ(together.component(Component::Vector).stalled[unsigned(StallReason::Bank)], 47u);
}

TEST(Timing, TheTwoDmaQueuesShareTheBus) {
  // A load and a store of 4 rows of 16 bytes each, issued at cycles 0 and 1,
  // 16 requests may be outstanding: the load holds the bus 10..18, the store's
  // data is ready at 11 and follows on the bus, 18..26.
  HardwareConfig config = smallConfig();
  config.dram.max_outstanding = 16;
  std::vector<uint8_t> dram(1024);
  Bundle bundle = makeBundle({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 4, 4, DType::F32),
                              dmaStore(512, 4, Space::Accumulator, 0, 4, 4, 4, DType::F32), halt()},
                             dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.total_cycles, 26u);
  EXPECT_EQ(stats.component(Component::DmaStore).stalled[unsigned(StallReason::Dram)], 25u - 8);
}

TEST(Timing, BackToBackTransfersOverlapTheirLatencyAndTokensWaitForTheirTransfers) {
  // Two loads of one 16-byte row each, each followed by a push; 16 requests
  // may be outstanding. Neither push holds up the load queue, so the second
  // load starts at 2, a cycle after the first push, and its request is in
  // flight with the first one's: bus 10..12 and 12..14, not 10..12 and
  // 23..25. Each token is visible once its load has landed: at 12 and 14.
  // compute: pops done 13 and 15; v.add 15..18 (2 + 1 row); push 18..19.
  // store:   pop done 19; dma.st 19 + 10, bus 29..31.
  HardwareConfig config = smallConfig();
  config.dram.max_outstanding = 16;
  std::vector<uint8_t> dram(256);
  putFloats(dram, 0, {1, 2, 3, 4, 10, 20, 30, 40});
  Bundle bundle = makeBundle(
      {dmaLoad(0, 4, Space::Scratchpad, 0, 4, 1, 4, DType::F32), push(Queue::Load, Queue::Compute),
       dmaLoad(16, 4, Space::Scratchpad, 4, 4, 1, 4, DType::F32), push(Queue::Load, Queue::Compute),
       pop(Queue::Load, Queue::Compute), pop(Queue::Load, Queue::Compute),
       vectorBinary(Opcode::VAdd, {Space::Scratchpad, 8}, {Space::Scratchpad, 0},
                    {Space::Scratchpad, 4}, isa::Broadcast::None, 1, 4),
       push(Queue::Compute, Queue::Store), pop(Queue::Compute, Queue::Store),
       dmaStore(128, 4, Space::Scratchpad, 8, 4, 1, 4, DType::F32), halt()},
      dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.total_cycles, 31u);
  EXPECT_EQ(getFloats(dram, 128, 4), (std::vector<float>{11, 22, 33, 44}));
  const ComponentStats &load = stats.component(Component::DmaLoad);
  EXPECT_EQ(load.busy, 4u);                                  // bus 10..14
  EXPECT_EQ(load.stalled[unsigned(StallReason::Dram)], 10u); // the rest of 0..14
  EXPECT_EQ(stats.component(Component::Vector).stalled[unsigned(StallReason::Token)],
            14u - 4 - 1); // the pops wait 4..12 and 13..14
}

TEST(Timing, CornerTurnsOfBackToBackTransposedLoadsFollowEachOther) {
  // Two transposed loads of one 32-byte DRAM row each (bus 4 cycles), whose
  // corner turns move 8 segments of one word (W = 2): 8 cycles each. The
  // second load starts at 1 and its data follows the first's on the bus,
  // 14..18, but its turn waits for the first one's, 10..18: 18..26. Serial
  // transfers would end at 36, overlapping turns at 19.
  HardwareConfig config = smallConfig();
  config.dram.max_outstanding = 16;
  std::vector<uint8_t> dram(256);
  Bundle bundle =
      makeBundle({transposed(dmaLoad(0, 8, Space::Scratchpad, 0, 1, 1, 8, DType::F32)),
                  transposed(dmaLoad(32, 8, Space::Scratchpad, 8, 1, 1, 8, DType::F32)), halt()},
                 dram.size(), config);
  SimStats stats = simulate(bundle, dram);
  EXPECT_EQ(stats.total_cycles, 26u);
  const ComponentStats &load = stats.component(Component::DmaLoad);
  EXPECT_EQ(load.busy, 16u);                                 // bus and turns, 10..26
  EXPECT_EQ(load.stalled[unsigned(StallReason::Dram)], 10u); // 0..10
}

TEST(Timing, CyclesDoNotDependOnTheClock) {
  std::vector<uint8_t> dram(256);
  HardwareConfig fast = smallConfig();
  fast.clock_ghz = 2.7;
  Bundle bundle = makeBundle({dmaLoad(0, 4, Space::Scratchpad, 0, 4, 3, 4, DType::BF16), halt()},
                             dram.size(), fast);
  // Three 8-byte requests, one at a time: 3 * (10 + 1).
  EXPECT_EQ(simulate(bundle, dram).total_cycles, 33u);
}

} // namespace
} // namespace tpu::sim::test
