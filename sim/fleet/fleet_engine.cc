#include "fleet/fleet_engine.h"

#include <utility>

#include "engine/dp_engine.h"
#include "engine/dp_setup.h"

namespace fleetsim {
namespace {

// The calls an Instance and a DpEngine answer alike, forwarded; each adapter adds what
// differs (records with DP ranks, step observers, KV blocks).
template <typename Engine>
class ForwardingEngine : public FleetEngine {
 public:
  explicit ForwardingEngine(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}

  void Arrive(std::unique_ptr<Request> request, SimTime arrival) override {
    engine_->Arrive(std::move(request), arrival);
  }
  void RunUntil(SimTime until) override { engine_->RunUntil(until); }
  SimTime NextEventTime() const override { return engine_->NextEventTime(); }
  void FlushPending() override { engine_->FlushPending(); }
  int64_t steps() const override { return engine_->steps(); }
  SimTime busy_time() const override { return engine_->busy_time(); }
  SimTime last_active() const override { return engine_->last_active(); }
  int64_t outstanding() const override { return engine_->outstanding(); }
  int64_t num_running() const override { return engine_->num_running(); }
  int64_t num_waiting() const override { return engine_->num_waiting(); }
  void Save(CheckpointWriter& w) const override { engine_->Save(w); }
  void Load(CheckpointReader& r) override { engine_->Load(r); }

 protected:
  std::unique_ptr<Engine> engine_;
};

class SingleEngine final : public ForwardingEngine<Instance> {
 public:
  using ForwardingEngine::ForwardingEngine;

  std::vector<RequestRecord> TakeRecords(std::vector<int32_t>& dp_ranks) override {
    dp_ranks.clear();
    return engine_->TakeRecords();
  }
  void OnStep(StepObserver observer) override {
    engine_->OnStep([observer = std::move(observer)](const StepRecord& s) { observer(-1, s); });
  }
  int64_t kv_used_blocks() const override {
    return engine_->kv_cache().num_usable_blocks() - engine_->kv_cache().num_free_blocks();
  }
  int64_t kv_usable_blocks() const override { return engine_->kv_cache().num_usable_blocks(); }
  Instance* single() override { return engine_.get(); }
};

class DataParallelEngine final : public ForwardingEngine<DpEngine> {
 public:
  using ForwardingEngine::ForwardingEngine;

  std::vector<RequestRecord> TakeRecords(std::vector<int32_t>& dp_ranks) override {
    return engine_->TakeRecords(&dp_ranks);
  }
  void OnStep(StepObserver observer) override {
    engine_->OnRankStep([observer = std::move(observer)](int rank, const StepRecord& s) {
      observer(static_cast<int32_t>(rank), s);
    });
  }
  int64_t kv_used_blocks() const override { return engine_->kv_used_blocks(); }
  int64_t kv_usable_blocks() const override { return engine_->kv_usable_blocks(); }
};

}  // namespace

int64_t CudagraphCaptureTokensOf(const EngineSetup& setup) {
  return setup.bundle.enforce_eager
             ? 0
             : DefaultCudagraphCaptureTokens(setup.engine.max_num_seqs,
                                             setup.engine.max_num_batched_tokens);
}

std::unique_ptr<FleetEngine> MakeFleetEngine(const EngineSetup& setup,
                                             const InstanceGroupConfig& group) {
  if (group.dp <= 1) return std::make_unique<SingleEngine>(setup.MakeInstance());
  return std::make_unique<DataParallelEngine>(
      MakeDpEngine(setup, group.dp, *group.budget.hardware, CudagraphCaptureTokensOf(setup)));
}

}  // namespace fleetsim
