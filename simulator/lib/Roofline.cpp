// The roofline: a lower bound on the cycles of a source op's or the model's
// compulsory work, from the timing rules of docs/simulator.md
// (docs/simulator.md#roofline gives the formulas and why each term bounds).
#include "tpu/sim/Simulator.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tpu::sim {
namespace {

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

} // namespace

uint64_t matrixCycles(const std::vector<GemmShape> &gemms, const HardwareConfig &config) {
  if (gemms.empty())
    return 0;
  const uint64_t R = config.array.rows, C = config.array.cols;
  // Every product in its ideal form: each weight tile of k <= R rows and
  // n <= C columns loaded once and all m rows streamed through it.
  uint64_t tiles = 0, streamed = 0, loaded = 0;
  uint64_t kMin = R, nMin = C, mMin = gemms.front().m;
  std::map<uint64_t, uint64_t> links; // a tile's ldw-to-drain time -> how many tiles
  for (const GemmShape &gemm : gemms) {
    const uint64_t kTiles = ceilDiv(gemm.k, R), nTiles = ceilDiv(gemm.n, C);
    const uint64_t kLast = gemm.k - (kTiles - 1) * R, nLast = gemm.n - (nTiles - 1) * C;
    tiles += gemm.batch * kTiles * nTiles;
    streamed += gemm.batch * kTiles * nTiles * gemm.m;
    loaded += gemm.batch * nTiles * gemm.k;
    kMin = std::min(kMin, kLast);
    nMin = std::min(nMin, nLast);
    mMin = std::min(mMin, gemm.m);
    for (auto [k, kCount] : {std::pair{R, kTiles - 1}, std::pair{kLast, uint64_t{1}}})
      for (auto [n, nCount] : {std::pair{C, nTiles - 1}, std::pair{nLast, uint64_t{1}}})
        links[k + gemm.m + R + n - 1] += gemm.batch * kCount * nCount;
  }
  const uint64_t drain = R + nMin - 1;
  // The array takes one row per cycle: the first tile's weights, every row,
  // the last drain.
  uint64_t stream = kMin + streamed + drain;
  // Weight loads take a row per cycle, one after another; the last tile's
  // rows and drain follow.
  uint64_t weights = loaded + mMin + drain;
  // Two weight planes: a tile's load waits for the product two tiles back to
  // drain, so every other tile up to the last runs load, stream and drain in
  // sequence: at least the ceil(tiles / 2) shortest of them.
  uint64_t planes = 0, left = (tiles + 1) / 2;
  for (auto [link, count] : links) {
    uint64_t take = std::min(left, count);
    planes += take * link;
    left -= take;
  }
  return std::max({stream, weights, planes});
}

uint64_t vectorCycles(uint64_t elements, uint64_t transcendental, const HardwareConfig &config) {
  if (elements == 0)
    return 0;
  uint64_t groups = elements - transcendental +
                    transcendental * uint64_t{config.vector.transcendental_cycles_per_group};
  return config.vector.pipeline_latency + ceilDiv(groups, config.vector.lanes);
}

namespace {

uint64_t memoryCycles(uint64_t bytes, const HardwareConfig &config) {
  return static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / config.dram.bytes_per_cycle));
}

} // namespace

Roofline roofline(const SourceWork &work, const HardwareConfig &config) {
  Roofline bound{matrixCycles(work.gemms, config),
                 vectorCycles(work.vector_elements, work.transcendental_elements, config),
                 memoryCycles(work.dram_bytes, config)};
  if (work.dram_bytes > 0)
    bound.memory_latency_cycles = config.dram.latency_cycles;
  return bound;
}

Roofline roofline(const CompulsoryWork &work, const HardwareConfig &config) {
  SourceWork all;
  for (const SourceWork &op : work.source_ops) {
    all.gemms.insert(all.gemms.end(), op.gemms.begin(), op.gemms.end());
    all.vector_elements += op.vector_elements;
    all.transcendental_elements += op.transcendental_elements;
  }
  all.dram_bytes = work.dram_bytes;
  Roofline bound = roofline(all, config);
  // All of the model's compute works on data from DRAM and ends in DRAM: it
  // starts after a load's latency and its last result takes a store's.
  if (bound.computeCycles() > 0 && work.dram_bytes > 0)
    bound.compute_latency_cycles = 2 * uint64_t{config.dram.latency_cycles};
  return bound;
}

} // namespace tpu::sim
