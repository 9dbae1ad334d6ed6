// A view of a workload source: rate scaling, a time window, a request limit, skipping
// malformed lines (counted) instead of stopping at the first, a default model for
// requests that name none, and (strict) refusing requests for a model outside a list.
//
//   WorkloadWindow w(OpenWorkload(path, "auto"), {.rate_scale = 2.0, .num_requests = 1000});
//   while (auto r = w.Next()) ...   // arrivals twice as dense, at most 1,000 requests
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workload/workload_source.h"

namespace fleetsim {

struct WindowOptions {
  double rate_scale = 1.0;              // arrival times divided by this
  std::optional<SimTime> duration;      // only arrivals before this (after scaling)
  std::optional<int64_t> num_requests;  // at most this many
  bool skip_bad_lines = false;          // skip and count malformed lines
  // The model of a request that names none (--model); "": such requests stay model-less
  // and may go to any instance group.
  std::string default_model;
  // Strict (--strict-models): a request naming a model outside this list is a malformed
  // line (an InputError at its line naming `model`, or skipped and counted with
  // skip_bad_lines), not a request rejected later with no_model.
  std::optional<std::vector<std::string>> known_models;
};

class WorkloadWindow : public WorkloadSource {
 public:
  WorkloadWindow(std::unique_ptr<WorkloadSource> source, WindowOptions options);
  std::optional<WorkloadRequest> Next() override;
  std::string format() const override { return source_->format(); }
  std::string path() const override { return source_->path(); }
  std::optional<int64_t> expected_requests() const override;
  int64_t skipped_lines() const { return skipped_; }
  // Passing over needs the inner source's, and no bad line to meet: a strict model list
  // can make a request one by its model (which passing over does not make), and a line
  // skipped as bad would take no position.
  bool can_pass_over() const override {
    return source_->can_pass_over() && !options_.known_models && !options_.skip_bad_lines;
  }
  std::optional<SimTime> PassOver() override;

 private:
  // The arrival scaled; nullopt (and the window ended) for one past the duration.
  std::optional<SimTime> Admit(SimTime arrival);
  // Gives a model-less request the default; refuses one for an unknown model (strict).
  void ApplyModelRules(WorkloadRequest& r) const;

  std::unique_ptr<WorkloadSource> source_;
  WindowOptions options_;
  StopRule stop_;  // num_requests, duration (after scaling)
  int64_t skipped_ = 0;
};

}  // namespace fleetsim
