// The data-parallel expert-parallel example (cluster_configs/moe_dp_ep.yaml) as the README
// runs it: every request finishes; a DP instance's /steps rows come one per rank per
// lock-step, the ranks' rows of a lock-step starting and ending together; waves end only
// at vLLM's 32-step checks, so idle ranks run dummy batches (rows without tokens); the
// tokens the rows generated are the requests' outputs; a dense model with dp > 1 is one
// located line; a run killed after a checkpoint restarts to the same tables.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/csv_rows.h"
#include "support/run_command.h"
#include "support/scratch_folder.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::RunFleetsim;
using Row = testing::CsvRow;

std::string ProjectFile(const std::string& relative) {
  return (fs::path(FLEETSIM_SOURCE_DIR) / relative).string();
}

class DpRunCli : public testing::ScratchFolderTest {
 protected:
  std::vector<Row> Csv(const std::string& name) const { return testing::ReadCsvRows(dir_ / name); }
};

int64_t I(const Row& row, const std::string& column) {
  return std::stoll(row.at(column));
}

// What one DP instance's /steps rows showed.
struct DpSteps {
  int64_t waves = 0;     // runs of back-to-back lock-steps that ended before a gap
  int64_t all_idle = 0;  // lock-steps where every rank ran a dummy batch
  int64_t one_idle = 0;  // lock-steps where one rank idled beside a busy one
};

// Runs `workload` on the example cluster with --trace-steps and checks what holds for any
// traffic: every request finishes; instances 0-1 are TP 2, 2-3 DP 2 x TP 1; a DP
// instance's rows come one per rank per lock-step, both ranks' rows of a lock-step
// lasting as long; a dummy row generates nothing; the rows' tokens are the requests'
// outputs; a wave (lock-steps back to back) ends only at a multiple of 32. Returns, per DP
// instance, what its rows showed, and in `ranks_used` the (instance, rank) pairs that
// served requests.
class DpExampleRun : public DpRunCli {
 protected:
  std::map<int64_t, DpSteps> RunAndCheck(const std::string& workload, std::size_t requests_total,
                                         std::set<std::pair<int64_t, int64_t>>* ranks_used) {
    const auto r = RunFleetsim("run --quiet --trace-steps --cluster " +
                               ProjectFile("cluster_configs/moe_dp_ep.yaml") + " --workload " +
                               workload + " --output " + Path("dp.h5"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(RunFleetsim("export --csv " + Path("dp.h5")).exit_code, 0);

    const auto instances = Csv("dp.instances.csv");
    EXPECT_EQ(instances.size(), 4u);
    std::map<int64_t, int64_t> lock_steps;  // by DP instance: /instances.steps
    for (const Row& row : instances) {
      const int64_t id = I(row, "id");
      EXPECT_EQ(I(row, "dp"), id < 2 ? 1 : 2) << id;
      EXPECT_EQ(I(row, "tp"), id < 2 ? 2 : 1) << id;
      if (id >= 2) lock_steps[id] = I(row, "steps");
    }

    std::map<int64_t, int64_t> output_of;  // by instance
    const auto requests = Csv("dp.requests.csv");
    EXPECT_EQ(requests.size(), requests_total);
    for (const Row& row : requests) {
      EXPECT_EQ(row.at("state"), "finished") << row.at("id");
      const int64_t instance = I(row, "instance"), rank = I(row, "dp_rank");
      output_of[instance] += I(row, "output_tokens");
      if (instance < 2) {
        EXPECT_EQ(rank, -1) << row.at("id");
      } else {
        EXPECT_TRUE(rank == 0 || rank == 1) << row.at("id");
        ranks_used->insert({instance, rank});
      }
    }

    struct LockStep {
      int64_t duration = -1;
      std::vector<int64_t> ranks;
      int dummies = 0;
    };
    std::map<int64_t, std::map<int64_t, LockStep>> by_instance;  // instance -> start -> step
    std::map<int64_t, int64_t> generated_of;
    for (const Row& row : Csv("dp.steps.csv")) {
      const int64_t instance = I(row, "instance");
      generated_of[instance] += I(row, "generated_tokens");
      if (instance < 2) {
        EXPECT_EQ(I(row, "dp_rank"), -1);
        continue;
      }
      LockStep& step = by_instance[instance][I(row, "start_ns")];
      if (step.duration >= 0) {
        EXPECT_EQ(I(row, "duration_ns"), step.duration);
      }
      step.duration = I(row, "duration_ns");
      step.ranks.push_back(I(row, "dp_rank"));
      if (I(row, "prefill_tokens") == 0 && I(row, "decodes") == 0) {
        EXPECT_EQ(I(row, "generated_tokens"), 0);
        ++step.dummies;
      }
    }
    EXPECT_EQ(generated_of, output_of);

    std::map<int64_t, DpSteps> shown;
    for (const auto& [instance, steps] : by_instance) {
      EXPECT_EQ(static_cast<int64_t>(steps.size()), lock_steps.at(instance)) << instance;
      DpSteps& seen = shown[instance];
      int64_t wave = 0, end = -1;
      for (const auto& [start, step] : steps) {
        EXPECT_EQ(step.ranks, (std::vector<int64_t>{0, 1})) << instance << " at " << start;
        if (start != end && wave > 0) {
          EXPECT_EQ(wave % 32, 0) << "instance " << instance << ": a wave of " << wave
                                  << " lock-steps ended before " << start;
          ++seen.waves;
          wave = 0;
        }
        ++wave;
        seen.all_idle += step.dummies == 2 ? 1 : 0;
        seen.one_idle += step.dummies == 1 ? 1 : 0;
        end = start + step.duration;
      }
      EXPECT_EQ(wave % 32, 0) << "instance " << instance << ": the last wave";
    }
    return shown;
  }
};

// The README's example: busy enough that both ranks of each DP instance serve requests,
// one rank idling beside a busy one, and every wave padded out with dummy lock-steps.
TEST_F(DpExampleRun, TheExampleStepsInLockStepAndFinishesEveryRequest) {
  std::set<std::pair<int64_t, int64_t>> ranks_used;
  const auto shown = RunAndCheck(ProjectFile("runs/examples/moe_traffic.yaml"), 600, &ranks_used);
  EXPECT_EQ(ranks_used.size(), 4u);
  ASSERT_EQ(shown.size(), 2u);
  int64_t all_idle = 0;
  for (const auto& [instance, seen] : shown) {
    EXPECT_GT(seen.one_idle, 0) << instance;  // one rank idle beside a busy one
    all_idle += seen.all_idle;
  }
  // The waves' trailing dummy steps. A wave whose work ends on a 32-step check has none
  // (here instance 2's one wave, 137 x 32 lock-steps), so they are counted over both.
  EXPECT_GT(all_idle, 0);
}

// Requests 20 s apart, each done in well under a second: every DP instance that served one
// idles between them, so its lock-steps come in several waves, each ended at a 32-step
// check (RunAndCheck) and padded with lock-steps where both ranks are idle.
TEST_F(DpExampleRun, SparseTrafficEndsEachWaveAtAThirtyTwoStepCheck) {
  Write("sparse.yaml",
        "generator:\n"
        "  seed: 3\n"
        "  num_requests: 16\n"
        "  arrivals: {process: constant, rate_per_s: 0.05}\n"
        "  input_tokens: {distribution: fixed, value: 200}\n"
        "  output_tokens: {distribution: fixed, value: 20}\n");
  std::set<std::pair<int64_t, int64_t>> ranks_used;
  const auto shown = RunAndCheck(Path("sparse.yaml"), 16, &ranks_used);
  ASSERT_EQ(shown.size(), 2u);
  for (const auto& [instance, seen] : shown) {
    EXPECT_GT(seen.waves, 1) << instance;
    EXPECT_GT(seen.all_idle, 0) << instance;
  }
}

TEST_F(DpRunCli, DpForADenseModelIsOneLocatedLine) {
  Write("dense.yaml",
        "instance_groups:\n"
        "  - name: llama\n"
        "    model: llama-3.1-8b\n"
        "    hardware: H100-SXM\n"
        "    dp: 2\n"
        "    enable_expert_parallel: true\n");
  const auto r =
      RunFleetsim("run --quiet --cluster " + Path("dense.yaml") + " --output " + Path("dense.h5"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(Path("dense.yaml") + ":5: instance_groups.llama.dp: expert parallelism "
                                            "needs a MoE model; llama-3.1-8b has no MoE layers"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(Path("dense.h5")));
}

// A run of the example cluster with checkpoints, killed by SIGKILL right after its second
// (FLEETSIM_TEST_KILL_AFTER_CHECKPOINT) and restarted from it, writes every table the
// uninterrupted run writes, /steps' lock-step rows included, byte for byte
// (docs/CHECKPOINT.md; tests/fleet/checkpoint_restart.sh moe_dp does it across ranks).
TEST_F(DpRunCli, ADpRunKilledAfterACheckpointRestartsToTheSameTables) {
  Write("short.yaml",
        "generator:\n"
        "  seed: 17\n"
        "  num_requests: 120\n"
        "  arrivals: {process: poisson, rate_per_s: 10.0}\n"
        "  input_tokens: {distribution: lognormal, median: 1200, sigma: 0.7, min: 32, max: 8000}\n"
        "  output_tokens: {distribution: lognormal, median: 180, sigma: 0.6, min: 8, max: 1200}\n");
  const std::string args = "run --quiet --trace-steps --cluster " +
                           ProjectFile("cluster_configs/moe_dp_ep.yaml") + " --workload " +
                           Path("short.yaml");
  ASSERT_EQ(RunFleetsim(args + " --output " + Path("base.h5")).exit_code, 0);
  const std::string checkpointed = args + " --output " + Path("cut.h5") + " --checkpoint " +
                                   Path("ckpt") + " --checkpoint-every 2";
  ::setenv("FLEETSIM_TEST_KILL_AFTER_CHECKPOINT", "2", 1);
  const auto killed = RunFleetsim(checkpointed);
  ::unsetenv("FLEETSIM_TEST_KILL_AFTER_CHECKPOINT");
  ASSERT_NE(killed.exit_code, 0) << "the run was to be killed after checkpoint 2";
  ASSERT_FALSE(fs::exists(Path("cut.h5")));
  const auto restarted = RunFleetsim(checkpointed + " --restart " + Path("ckpt"));
  ASSERT_EQ(restarted.exit_code, 0) << restarted.err;
  for (const char* run : {"base.h5", "cut.h5"})
    ASSERT_EQ(RunFleetsim("export --csv " + Path(run)).exit_code, 0) << run;
  for (const std::string table : {"requests", "instances", "summary", "timeseries", "steps"}) {
    std::ifstream base(dir_ / ("base." + table + ".csv")), cut(dir_ / ("cut." + table + ".csv"));
    std::stringstream a, b;
    a << base.rdbuf();
    b << cut.rdbuf();
    ASSERT_FALSE(a.str().empty()) << table;
    EXPECT_TRUE(a.str() == b.str()) << "/" << table << " differs after the restart";
  }
}

}  // namespace
}  // namespace fleetsim
