#!/usr/bin/env python3
"""Checks the PTX of a CUDA file tpuc wrote: every GEMM kernel (one with a
tpu_cuda::TileConfig) runs on tensor cores fed from shared memory
(mma.sync.aligned.m16n8k16 and ldmatrix) and, where its tile has more than
one stage, copies global to shared memory with cp.async; every Hopper GEMM
kernel (a tpu_cuda::HopperTileConfig, --gpu=sm_90a) issues warpgroup MMA
(wgmma.mma_async) fed by TMA (cp.async.bulk.tensor) and waits on mbarriers.

usage: check-ptx.py MODEL.cu MODEL.ptx"""
import re
import sys


def main():
    source_path, ptx_path = sys.argv[1:3]
    source = open(source_path).read()
    ptx = open(ptx_path).read()
    tiles = dict(re.findall(r"using (k\d+_\w+)_tile = tpu_cuda::TileConfig<"
                            r"\d+, \d+, \d+, \d+, \d+, (\d+)>;", source))
    hopper = re.findall(r"using (k\d+_\w+)_tile = tpu_cuda::HopperTileConfig<", source)
    # Each kernel's PTX runs from its .entry to the next one.
    entries = {}
    for match in re.finditer(r"\.entry (\w+)\(", ptx):
        entries[match.group(1)] = match.start()
    starts = sorted(entries.values()) + [len(ptx)]
    bodies = {name: ptx[at:starts[starts.index(at) + 1]] for name, at in entries.items()}
    failures = []
    kernels = [(kernel, f"{stages} stages", ["mma.sync.aligned.m16n8k16", "ldmatrix"] +
                (["cp.async"] if int(stages) > 1 else [])) for kernel, stages in tiles.items()]
    kernels += [(kernel, "Hopper", ["wgmma.mma_async.sync.aligned.m64n", "wgmma.fence",
                                    "wgmma.commit_group", "wgmma.wait_group",
                                    "cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity",
                                    "mbarrier.arrive.expect_tx"]) for kernel in hopper]
    for kernel, what, needed in kernels:
        mangled = [name for name in bodies if re.search(rf"\d{kernel}P", name)]
        if len(mangled) != 1:
            failures.append(f"{kernel}: {len(mangled)} PTX entries")
            continue
        body = bodies[mangled[0]]
        for instruction in needed:
            if instruction not in body:
                failures.append(f"{kernel} ({what}): no {instruction}")
    for failure in failures:
        print(f"check-ptx: {failure}")
    print(f"check-ptx: {len(kernels)} GEMM kernels ({len(hopper)} Hopper) of {len(bodies)} checked, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
