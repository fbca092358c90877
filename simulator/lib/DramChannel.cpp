#include "DramChannel.h"

#include <algorithm>
#include <cmath>

namespace tpu::sim {

uint64_t DramChannel::busCycles(uint64_t bytes) const {
  return static_cast<uint64_t>(
      std::ceil(static_cast<double>(bytes) / config_.dram.bytes_per_cycle));
}

DramSchedule DramChannel::transfer(uint64_t start, uint64_t rows, uint64_t rowBytes) {
  DramSchedule schedule;
  schedule.completion = start;
  schedule.lastIssue = start;
  uint64_t occupancy = busCycles(rowBytes);
  for (uint64_t row = 0; row < rows; ++row) {
    uint64_t issue = start;
    if (inFlight_.size() == config_.dram.max_outstanding) {
      issue = std::max(issue, inFlight_.front());
      inFlight_.pop_front();
    }
    schedule.lastIssue = issue;
    uint64_t busStart = std::max(issue + config_.dram.latency_cycles, busFree_);
    busFree_ = busStart + occupancy;
    inFlight_.push_back(busFree_);
    if (!schedule.busRuns.empty() && schedule.busRuns.back().second == busStart)
      schedule.busRuns.back().second = busFree_;
    else
      schedule.busRuns.emplace_back(busStart, busFree_);
    schedule.completion = busFree_;
  }
  return schedule;
}

} // namespace tpu::sim
