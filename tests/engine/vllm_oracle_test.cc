// Replays the golden per-step traces of vLLM's own v1 scheduler (../shared/data/
// vllm_oracle) and checks, step for step: which requests run, how many tokens each
// computes, prefix hits at admission, preemptions, finishes and free blocks after the step.
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "engine/kv_cache_manager.h"
#include "engine/scheduler.h"
#include "engine/test_models.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

using testing::Card;
using testing::Resolve;
using testing::SettingErrorFor;

std::vector<YAML::Node> ReadJsonLines(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<YAML::Node> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(YAML::Load(line));
  }
  return lines;
}

std::string Names(const std::vector<Request*>& requests) {
  std::string text;
  for (const Request* r : requests)
    text += (text.empty() ? "" : ",") + r->name;
  return text;
}

std::string Names(const YAML::Node& list) {
  std::string text;
  for (const auto& item : list)
    text += (text.empty() ? "" : ",") + item.as<std::string>();
  return text;
}

// One scheduled entry as "id:tokens@computed" (+ "+hit" at admission).
std::string Describe(const ScheduledChunk& c) {
  std::ostringstream out;
  out << c.request->name << ':' << c.num_tokens << '@' << c.computed_before;
  if (c.admitted) out << "+hit" << c.cached_tokens;
  return out.str();
}

std::string Describe(const YAML::Node& s) {
  std::ostringstream out;
  out << s["id"].as<std::string>() << ':' << s["num_scheduled_tokens"].as<int64_t>() << '@'
      << s["num_computed_tokens_before"].as<int64_t>();
  if (s["admitted"].as<bool>()) out << "+hit" << s["cached_tokens_at_admission"].as<int64_t>();
  return out.str();
}

void Replay(const std::string& scenario) {
  const auto lines =
      ReadJsonLines(testing::SharedDataDir() / "vllm_oracle" / (scenario + ".jsonl"));
  ASSERT_GE(lines.size(), 3u);
  const YAML::Node meta = lines.front();
  ASSERT_EQ(meta["kind"].as<std::string>(), "meta");

  const bool hybrid = meta["model"].as<std::string>() == "hybrid";
  const ModelCard& card = Card(hybrid ? "qwen3.8-27b" : "llama-3.1-8b");
  EngineConfig config;
  config.enable_prefix_caching = meta["enable_prefix_caching"].as<bool>();
  config.max_num_batched_tokens = meta["max_num_batched_tokens"].as<int>();
  config.max_num_seqs = meta["max_num_seqs"].as<int>();
  config.max_model_len = meta["max_model_len"].as<int64_t>();
  const ResolvedEngineConfig engine = Resolve(card, config);
  const KvCacheLayout layout = ResolveKvCacheLayout(card, engine, SettingErrorFor);

  // The engine's own arithmetic must agree with the layout vLLM ran.
  ASSERT_EQ(layout.block_size, meta["cache_block_size"].as<int>());
  ASSERT_EQ(layout.page_bytes, meta["page_size_bytes"].as<int64_t>());
  ASSERT_EQ(std::string(NameOf(layout.mamba_mode)), meta["mamba_cache_mode"].as<std::string>());
  ASSERT_EQ(layout.groups.size(), meta["groups"].size());
  for (std::size_t g = 0; g < layout.groups.size(); ++g) {
    const bool attention = meta["groups"][g]["type"].as<std::string>() == "FullAttentionSpec";
    EXPECT_EQ(layout.groups[g].type == LayerType::kFullAttention, attention) << "group " << g;
    EXPECT_EQ(static_cast<int>(layout.groups[g].layers.size()),
              meta["groups"][g]["num_layers"].as<int>());
  }

  KvCacheManager kv(layout, meta["num_blocks"].as<int64_t>(), engine.prefix_caching);
  ASSERT_EQ(kv.num_free_blocks(), meta["initial_free_blocks"].as<int64_t>());
  SchedulerConfig sched;
  sched.max_num_batched_tokens = engine.max_num_batched_tokens;
  sched.max_num_seqs = engine.max_num_seqs;
  sched.max_model_len = engine.max_model_len;
  Scheduler scheduler(sched, kv);

  std::vector<std::unique_ptr<Request>> requests;
  std::multimap<int, Request*> arrivals;
  const std::string hash_key = std::to_string(layout.block_size);
  for (const auto& r : meta["requests"]) {
    auto request = std::make_unique<Request>();
    request->id = static_cast<int64_t>(requests.size());
    request->name = r["id"].as<std::string>();
    request->prompt_tokens = r["prompt_len"].as<int64_t>();
    request->max_output_tokens = r["max_tokens"].as<int64_t>();
    for (const auto& h : r["prefix_block_ids"][hash_key]) {
      // Offset so that workload hashes never meet the derived per-request ones' range.
      request->prompt_block_hashes.push_back(h.as<uint64_t>() + 1);
    }
    arrivals.emplace(r["arrive_step"].as<int>(), request.get());
    requests.push_back(std::move(request));
  }

  std::map<int, YAML::Node> golden;
  YAML::Node summary;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i]["kind"].as<std::string>() == "step") golden[lines[i]["step"].as<int>()] = lines[i];
    if (lines[i]["kind"].as<std::string>() == "summary") summary = lines[i];
  }
  const int last_step = golden.rbegin()->first;

  std::vector<std::string> finished_order;
  for (int step = 0; step <= last_step + 1; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    for (auto [it, end] = arrivals.equal_range(step); it != end; ++it)
      scheduler.Add(it->second);
    const StepPlan plan = scheduler.Schedule();
    const std::vector<Request*> finished = scheduler.Complete(plan);
    for (const Request* r : finished)
      finished_order.push_back(r->name);

    auto expected = golden.find(step);
    if (expected == golden.end()) {
      ASSERT_TRUE(plan.empty()) << "scheduled a step vLLM did not";
      continue;
    }
    const YAML::Node& g = expected->second;
    std::vector<std::string> got, want;
    for (const ScheduledChunk& c : plan.chunks)
      got.push_back(Describe(c));
    for (const auto& s : g["scheduled"])
      want.push_back(Describe(s));
    ASSERT_EQ(got, want);
    ASSERT_EQ(plan.total_tokens, g["total_scheduled_tokens"].as<int64_t>());
    ASSERT_EQ(Names(plan.preempted), Names(g["preempted"]));
    ASSERT_EQ(Names(finished), Names(g["finished"]));
    ASSERT_EQ(kv.num_free_blocks(), g["free_blocks"].as<int64_t>());
  }
  EXPECT_TRUE(scheduler.idle());
  EXPECT_EQ(kv.num_free_blocks(), summary["final_free_blocks"].as<int64_t>());
  std::vector<std::string> want_order;
  for (const auto& name : summary["finished_order"])
    want_order.push_back(name.as<std::string>());
  EXPECT_EQ(finished_order, want_order);
  for (const auto& request : requests) {
    EXPECT_EQ(request->num_preemptions, summary["num_preemptions"][request->name].as<int>())
        << request->name;
    EXPECT_EQ(request->num_output, request->max_output_tokens) << request->name;
  }
}

TEST(VllmOracle, HybridAlignBudget2048) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  Replay("A");
}

TEST(VllmOracle, HybridAlignBudget8192) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  Replay("B");
}

TEST(VllmOracle, DensePrefixCachingWithPreemptionAndEviction) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  Replay("D");
}

}  // namespace
}  // namespace fleetsim
