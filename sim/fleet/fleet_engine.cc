#include "fleet/fleet_engine.h"

#include <utility>

#include "engine/dp_engine.h"
#include "engine/dp_setup.h"

namespace fleetsim {
namespace {

class SingleEngine final : public FleetEngine {
 public:
  explicit SingleEngine(std::unique_ptr<Instance> engine) : engine_(std::move(engine)) {}

  void Arrive(std::unique_ptr<Request> request, SimTime arrival) override {
    engine_->Arrive(std::move(request), arrival);
  }
  void RunUntil(SimTime until) override { engine_->RunUntil(until); }
  SimTime NextEventTime() const override { return engine_->NextEventTime(); }
  void FlushPending() override { engine_->FlushPending(); }
  std::vector<RequestRecord> TakeRecords(std::vector<int32_t>& dp_ranks) override {
    dp_ranks.clear();
    return engine_->TakeRecords();
  }
  void OnStep(StepObserver observer) override {
    engine_->OnStep([observer = std::move(observer)](const StepRecord& s) { observer(-1, s); });
  }
  int64_t steps() const override { return engine_->steps(); }
  SimTime busy_time() const override { return engine_->busy_time(); }
  SimTime last_active() const override { return engine_->last_active(); }
  int64_t outstanding() const override { return engine_->outstanding(); }
  int64_t num_running() const override { return engine_->num_running(); }
  int64_t num_waiting() const override { return engine_->num_waiting(); }
  int64_t kv_used_blocks() const override {
    return engine_->kv_cache().num_usable_blocks() - engine_->kv_cache().num_free_blocks();
  }
  int64_t kv_usable_blocks() const override { return engine_->kv_cache().num_usable_blocks(); }
  Instance* single() override { return engine_.get(); }

 private:
  std::unique_ptr<Instance> engine_;
};

class DataParallelEngine final : public FleetEngine {
 public:
  explicit DataParallelEngine(std::unique_ptr<DpEngine> engine) : engine_(std::move(engine)) {}

  void Arrive(std::unique_ptr<Request> request, SimTime arrival) override {
    engine_->Arrive(std::move(request), arrival);
  }
  void RunUntil(SimTime until) override { engine_->RunUntil(until); }
  SimTime NextEventTime() const override { return engine_->NextEventTime(); }
  void FlushPending() override { engine_->FlushPending(); }
  std::vector<RequestRecord> TakeRecords(std::vector<int32_t>& dp_ranks) override {
    return engine_->TakeRecords(&dp_ranks);
  }
  void OnStep(StepObserver observer) override {
    engine_->OnRankStep([observer = std::move(observer)](int rank, const StepRecord& s) {
      observer(static_cast<int32_t>(rank), s);
    });
  }
  int64_t steps() const override { return engine_->steps(); }
  SimTime busy_time() const override { return engine_->busy_time(); }
  SimTime last_active() const override { return engine_->last_active(); }
  int64_t outstanding() const override { return engine_->outstanding(); }
  int64_t num_running() const override { return engine_->num_running(); }
  int64_t num_waiting() const override { return engine_->num_waiting(); }
  int64_t kv_used_blocks() const override { return engine_->kv_used_blocks(); }
  int64_t kv_usable_blocks() const override { return engine_->kv_usable_blocks(); }

 private:
  std::unique_ptr<DpEngine> engine_;
};

}  // namespace

int64_t CudagraphCaptureTokensOf(const EngineSetup& setup) {
  return setup.bundle.enforce_eager ? 0 : DefaultCudagraphCaptureTokens(setup.engine.max_num_seqs);
}

std::unique_ptr<FleetEngine> MakeFleetEngine(const EngineSetup& setup,
                                             const InstanceGroupConfig& group) {
  if (group.dp <= 1) return std::make_unique<SingleEngine>(setup.MakeInstance());
  return std::make_unique<DataParallelEngine>(
      MakeDpEngine(setup, group.dp, *group.budget.hardware, CudagraphCaptureTokensOf(setup)));
}

}  // namespace fleetsim
