// A view of a workload source: rate scaling, a time window, a request limit, and skipping
// malformed lines (counted) instead of stopping at the first.
//
//   WorkloadWindow w(OpenWorkload(path, "auto"), {.rate_scale = 2.0, .num_requests = 1000});
//   while (auto r = w.Next()) ...   // arrivals twice as dense, at most 1,000 requests
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "workload/workload_source.h"

namespace fleetsim {

struct WindowOptions {
  double rate_scale = 1.0;              // arrival times divided by this
  std::optional<SimTime> duration;      // only arrivals before this (after scaling)
  std::optional<int64_t> num_requests;  // at most this many
  bool skip_bad_lines = false;          // skip and count malformed lines
};

class WorkloadWindow : public WorkloadSource {
 public:
  WorkloadWindow(std::unique_ptr<WorkloadSource> source, WindowOptions options);
  std::optional<WorkloadRequest> Next() override;
  std::string format() const override { return source_->format(); }
  std::optional<int64_t> expected_requests() const override;
  int64_t skipped_lines() const { return skipped_; }

 private:
  std::unique_ptr<WorkloadSource> source_;
  WindowOptions options_;
  int64_t emitted_ = 0;
  int64_t skipped_ = 0;
  bool done_ = false;
};

}  // namespace fleetsim
