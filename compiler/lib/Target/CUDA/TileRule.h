// The tile-size rule of the CUDA backend's tensor-core GEMM (prelude/tpu_cuda.cuh, gemm_block).
// Plain C++17, no CUDA or MLIR: the emitter calls it to instantiate TileConfig<...>, and the tests
// use it to check that what it picks is valid and fits.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tpu::cuda {

// Dynamic shared memory one block may use after the opt-in (CUDA tuning guides: 163 KiB per block
// on A100/sm_80, 227 KiB on H100/sm_90).
constexpr int kSmemPerBlockSm80 = 163 * 1024;
constexpr int kSmemPerBlockSm90 = 227 * 1024;

// The template arguments of tpu_cuda::TileConfig<bm, bn, bk, warpsM, warpsN, stages>.
struct TileChoice {
  int bm, bn, bk;
  int warpsM, warpsN;
  int stages;

  constexpr int threads() const { return warpsM * warpsN * 32; }
  constexpr int stageBytes() const { return (bm + bn) * bk * 2; } // bf16 A and B tiles
  constexpr int smemBytes() const { return stages * stageBytes(); }
  // The static_asserts of TileConfig: whole 16x16 A and 16x16 B (two 8-column mma tiles) per
  // warp step, bk a multiple of the mma k.
  constexpr bool valid() const {
    return bk % 16 == 0 && bk > 0 && warpsM > 0 && warpsN > 0 && bm % (16 * warpsM) == 0 &&
           bn % (16 * warpsN) == 0 && threads() <= 1024 && stages >= 1;
  }
  constexpr bool operator==(const TileChoice &o) const {
    return bm == o.bm && bn == o.bn && bk == o.bk && warpsM == o.warpsM && warpsN == o.warpsN &&
           stages == o.stages;
  }
};

// The largest of 128, 64, 32 that the extent fills at least half of: a tile much larger than the
// extent only multiplies zero padding (an M = 1 decoder step gets 32 rows, not 128).
constexpr int tileExtent(int64_t extent) {
  if (extent > 64)
    return 128;
  if (extent > 32)
    return 64;
  return 32;
}

// Multiprocessors of the targets' reference parts (A100: 108; H100/H200 SXM: 132).
constexpr int kMultiprocessorsA100 = 108;
constexpr int kMultiprocessorsH100 = 132;

// Halves the larger of bm and bn (down to 64) while the grid of bm x bn tiles over `batch` M x N
// GEMMs leaves some of the `multiprocessors` idle.
constexpr void fillMultiprocessors(int &bm, int &bn, int64_t M, int64_t N, int64_t batch,
                                   int multiprocessors) {
  auto blocks = [&] {
    return ((M + bm - 1) / bm) * ((N + bn - 1) / bn) * std::max<int64_t>(1, batch);
  };
  while (blocks() < multiprocessors && std::max(bm, bn) > 64) {
    if (bm >= bn)
      bm /= 2;
    else
      bn /= 2;
  }
}

// Picks the GEMM tile for `batch` GEMMs C[M][N] = A[M][K] * B[K][N] given the dynamic shared
// memory a block may use (kSmemPerBlockSm80/Sm90) and, optionally, the GPU's multiprocessors:
//   - bm, bn: tileExtent of M and N (128 for big GEMMs: 128x128 is the usual sweet spot of
//     mma.sync kernels on sm_80/sm_90, 64 or 32 for small extents);
//   - when `multiprocessors` is given and the grid would leave some of them idle, the larger of
//     bm and bn is halved (down to 64) while that is so: a 512 x 512 GEMM gets 64 blocks of 64x64
//     instead of 16 blocks of 128x128;
//   - bk: 32 (16 when K <= 16, so a tiny reduction is not mostly zero padding);
//   - warps: one warp per 64x32 of the tile (128x128: 2x4 = 8 warps, 64x32 warp tiles of 4x4 mma
//     tiles, 64 fp32 accumulators per thread);
//   - stages: as many shared-memory buffers as fit, at most 4 (128x128x32 stages are 16 KiB:
//     4 stages = 64 KiB; every target's limit holds at least 2 of any tile here), but never more
//     than the number of k tiles: 1 (synchronous) when K fits one tile.
constexpr TileChoice chooseTile(int64_t M, int64_t N, int64_t K, int smemBytesPerBlock,
                                int multiprocessors = 0, int64_t batch = 1) {
  TileChoice tile{};
  tile.bm = tileExtent(M);
  tile.bn = tileExtent(N);
  fillMultiprocessors(tile.bm, tile.bn, M, N, batch, multiprocessors);
  tile.bk = K <= 16 ? 16 : 32;
  tile.warpsM = std::max(1, tile.bm / 64);
  tile.warpsN = std::max(1, tile.bn / 32);
  int64_t kTiles = std::max<int64_t>(1, (K + tile.bk - 1) / tile.bk);
  int fitting = std::max(1, smemBytesPerBlock / tile.stageBytes());
  tile.stages = static_cast<int>(std::min<int64_t>(std::min(fitting, 4), kTiles));
  return tile;
}

// The template arguments of tpu_cuda::HopperTileConfig<bm, bn, stages>
// (prelude/tpu_cuda_sm90a.cuh).
struct HopperTileChoice {
  int bm, bn, stages;

  constexpr int warpgroups() const { return bm / 64; }
  constexpr int threads() const { return warpgroups() * 128; }
  constexpr int stageBytes() const { return (bm + bn) * 64 * 2; } // bf16 A and B, 64 of K
  // HopperTileConfig::smem_bytes: alignment slack, the stages, an mbarrier per stage.
  constexpr int smemBytes() const { return 1024 + stages * (stageBytes() + 8); }
};

// The Hopper path's tile (sm_90a, GEMMs with constant B): bm and bn are 128 or, for extents of at
// most 64, 64 (a warpgroup computes 64 rows, a wgmma 64 or 128 columns), halved towards 64 as in
// chooseTile to fill the multiprocessors; 64 of K per stage (one 128-byte swizzle row of bf16);
// as many stages as fit, at most 4 and at most the k tiles, but at least 2 (the pipeline loads one
// stage while it reads another). 128 x 128: 32 KiB a stage, 4 stages, 64 accumulators a thread.
constexpr HopperTileChoice chooseHopperTile(int64_t M, int64_t N, int64_t K, int smemBytesPerBlock,
                                            int multiprocessors = 0, int64_t batch = 1) {
  HopperTileChoice tile{};
  tile.bm = M > 64 ? 128 : 64;
  tile.bn = N > 64 ? 128 : 64;
  fillMultiprocessors(tile.bm, tile.bn, M, N, batch, multiprocessors);
  int64_t kTiles = (K + 63) / 64;
  int fitting = (smemBytesPerBlock - 1024) / (tile.stageBytes() + 8);
  tile.stages =
      static_cast<int>(std::max<int64_t>(2, std::min<int64_t>(std::min(fitting, 4), kTiles)));
  return tile;
}

} // namespace tpu::cuda
