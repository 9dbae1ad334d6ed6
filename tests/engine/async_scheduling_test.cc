// vLLM's async scheduling (v1/engine/core.py step_with_batch_queue, two batches in flight):
// step K+1 is scheduled when step K starts, so an arrival during K joins K+2, and a
// request that finishes in K holds its sequence slot through K+1's schedule. Without it an
// arrival during K joins K+1. Either way the engine takes a request in (queued_ts) at the
// first step boundary after its arrival.
#include <algorithm>

#include <gtest/gtest.h>

#include "engine/engine_setup.h"
#include "engine/instance.h"
#include "engine/test_models.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

EngineSetup MakeEngine(const std::string& bundle_dir, bool async, int max_num_seqs) {
  EngineConfig config;
  config.async_scheduling = async;
  config.max_num_seqs = max_num_seqs;
  config.max_num_batched_tokens = 8192;
  config.max_model_len = 32768;
  return testing::EngineWithBlocks("llama-3.1-8b", bundle_dir, config, 5000);
}

struct Outcome {
  std::vector<RequestRecord> records;  // by id
  std::vector<StepRecord> steps;
  // The step a time starts, -1 when none does.
  int StepStartingAt(SimTime t) const {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].start == t) return static_cast<int>(i);
    }
    return -1;
  }
};

struct Arrival {
  SimTime at;
  int64_t prompt, output;
};

Outcome Simulate(const EngineSetup& setup, const std::vector<Arrival>& arrivals, bool fast) {
  std::unique_ptr<Instance> instance = setup.MakeInstance();
  instance->SetFastDecode(fast);
  Outcome run;
  instance->OnStep([&](const StepRecord& s) { run.steps.push_back(s); });
  for (std::size_t i = 0; i < arrivals.size(); ++i) {
    auto r = std::make_unique<Request>();
    r->id = static_cast<int64_t>(i);
    r->name = "r" + std::to_string(i);
    r->prompt_tokens = arrivals[i].prompt;
    r->max_output_tokens = arrivals[i].output;
    instance->Arrive(std::move(r), arrivals[i].at);
  }
  instance->RunUntil(kNever);
  run.records = instance->TakeRecords();
  std::sort(run.records.begin(), run.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  return run;
}

class AsyncScheduling : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { testing::WriteDenseBundle(bundle_); }
  testing::SyntheticBundle bundle_;
};

// A request arriving just after step 2 starts is taken in at step 2's end (step 3's start)
// in both modes; it runs in step 3 without async scheduling and in step 4 with it.
TEST_P(AsyncScheduling, AnArrivalDuringAStepJoinsTheStepAfterTheNext) {
  const bool fast = GetParam();
  for (bool async : {false, true}) {
    SCOPED_TRACE(async ? "async" : "sync");
    const EngineSetup setup = MakeEngine(bundle_.dir(), async, 256);
    // Where the steps fall with the first request alone (it decodes for 50 steps).
    const Outcome alone = Simulate(setup, {{0, 500, 50}}, fast);
    ASSERT_GT(alone.steps.size(), 5u);
    const SimTime during_step_2 = alone.steps[2].start + 1;
    const Outcome run = Simulate(setup, {{0, 500, 50}, {during_step_2, 300, 5}}, fast);
    const RequestRecord& first = run.records[0];
    const RequestRecord& late = run.records[1];
    // An idle engine takes a request in, and schedules it, at once.
    EXPECT_EQ(first.queued, 0);
    EXPECT_EQ(first.first_scheduled, 0);
    EXPECT_EQ(first.first_token, run.steps[0].start + run.steps[0].duration);
    EXPECT_EQ(late.queued, run.steps[3].start);
    const int joins = run.StepStartingAt(late.first_scheduled);
    EXPECT_EQ(joins, async ? 4 : 3);
    EXPECT_EQ(late.first_token, run.steps[static_cast<std::size_t>(joins)].start +
                                    run.steps[static_cast<std::size_t>(joins)].duration);
  }
}

// With max_num_seqs 2, a short and a long request run and a third waits. The short one's
// last token comes in step 2: without async scheduling the waiting request is admitted in
// step 3; with it step 3 was scheduled (step 2 starting) while the short request held its
// slot, so the waiting one is admitted in step 4, beside the long one's decode.
TEST_P(AsyncScheduling, AFinishedRequestsSlotIsFreeForTheStepAfterTheNext) {
  const bool fast = GetParam();
  for (bool async : {false, true}) {
    SCOPED_TRACE(async ? "async" : "sync");
    const EngineSetup setup = MakeEngine(bundle_.dir(), async, 2);
    const Outcome run = Simulate(setup, {{0, 200, 3}, {0, 200, 40}, {1, 100, 4}}, fast);
    const RequestRecord& short_one = run.records[0];
    const RequestRecord& waiting = run.records[2];
    ASSERT_EQ(short_one.finish, run.steps[2].start + run.steps[2].duration);
    EXPECT_EQ(run.StepStartingAt(waiting.first_scheduled), async ? 4 : 3);
    if (async) {
      EXPECT_EQ(run.steps[3].decodes, 1);  // the long request's alone
    }
    for (const RequestRecord& r : run.records)
      EXPECT_EQ(r.state, RequestState::kFinished) << r.name;
  }
}

// When step K+1's schedule finds nothing (every running request ends in step K and no
// one waits), vLLM schedules again at K's end with everything up to then: an arrival
// during K then runs in K+1, in both modes, and a finished request's slot is free for it.
TEST_P(AsyncScheduling, AnEmptyLaggedScheduleIsMadeAgainAtTheStepsEnd) {
  const bool fast = GetParam();
  const EngineSetup setup = MakeEngine(bundle_.dir(), true, 1);
  const Outcome alone = Simulate(setup, {{0, 200, 3}}, fast);
  ASSERT_EQ(alone.steps.size(), 3u);
  const SimTime during_last = alone.steps[2].start + 1;
  const Outcome run = Simulate(setup, {{0, 200, 3}, {during_last, 100, 2}}, fast);
  ASSERT_EQ(run.steps.size(), 5u);
  EXPECT_EQ(run.records[1].queued, run.steps[3].start);
  EXPECT_EQ(run.records[1].first_scheduled, run.steps[3].start);
  EXPECT_EQ(run.steps[3].start, run.steps[2].start + run.steps[2].duration);  // back to back
}

INSTANTIATE_TEST_SUITE_P(SteppedAndFast, AsyncScheduling, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "FastDecode" : "OneByOne";
                         });

}  // namespace
}  // namespace fleetsim
