// `fleetsim inspect` as a user runs it: the report, its JSON twin, and one-line refusals
// with exit code 2.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "support/run_command.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int Lines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(InspectCli, HybridWithPrefixCachingReportsTheOverriddenBlockAndStateBlocks) {
  const auto r = RunFleetsim("inspect --model qwen3.8-27b --enable-prefix-caching");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "block size                  784 (overrides the requested 16)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "6 pool blocks (48 GDN layers x 2 pages = 96 pages, align mode)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "48 linear_attention + 16 full_attention"));
  EXPECT_TRUE(Contains(r.out, "3,207,168 B unpadded, 3,211,264 B padded"));
  EXPECT_TRUE(Contains(r.out, "153,944,064 B (153.9 MB"));
  EXPECT_TRUE(Contains(r.out, "65,536 B model"));
  EXPECT_TRUE(Contains(r.out, "338 blocks at 262,144 tokens"));
  EXPECT_TRUE(Contains(r.out, "341 blocks at 262,144 tokens"));
  EXPECT_TRUE(Contains(r.out, "4 layer(s) to reach every block type"));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(InspectCli, KvMemoryGivesPoolBlocksAndConcurrency) {
  const auto r = RunFleetsim(
      "inspect --model qwen3.8-27b --enable-prefix-caching --kv-cache-memory-bytes 64424509440");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "1,253 (1,252 usable after the null block)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "3.67 requests of 262,144 tokens"));
}

TEST(InspectCli, JsonCarriesTheSameNumbers) {
  const auto r = RunFleetsim(
      "inspect --model qwen3.8-27b --enable-prefix-caching --kv-cache-memory-bytes 64424509440 "
      "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["block_size"]["resolved"].as<int>(), 784);
  EXPECT_EQ(doc["block_size"]["requested"].as<int>(), 16);
  EXPECT_TRUE(doc["block_size"]["overridden"].as<bool>());
  EXPECT_EQ(doc["model"]["layer_counts"]["linear_attention"].as<int>(), 48);
  EXPECT_EQ(doc["model"]["profiling_depth"].as<int>(), 4);
  EXPECT_EQ(doc["gdn"]["conv_bytes"].as<int64_t>(), 61440);
  EXPECT_EQ(doc["gdn"]["ssm_dtype"].as<std::string>(), "float32");
  EXPECT_EQ(doc["gdn"]["mamba_page_padded_bytes"].as<int64_t>(), 3211264);
  EXPECT_EQ(doc["kv_cache_groups"]["pool_block_bytes"].as<int64_t>(), 51380224);
  EXPECT_EQ(doc["kv_cache_groups"]["groups"].size(), 4u);
  EXPECT_EQ(doc["per_request"]["state_blocks"].as<int>(), 6);
  EXPECT_EQ(doc["per_request"]["blocks_mode_none"].as<int>(), 338);
  EXPECT_EQ(doc["per_request"]["blocks_mode_align"].as<int>(), 341);
  EXPECT_EQ(doc["memory"]["num_blocks"].as<int>(), 1253);
  EXPECT_EQ(doc["memory"]["usable_blocks"].as<int>(), 1252);
}

TEST(InspectCli, HardwareSubtractsBothTowersAndSaysWhatItDoesNotGuess) {
  const auto r = RunFleetsim("inspect --model qwen3.8-27b --hardware H200-SXM --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node m = YAML::Load(r.out)["memory"];
  const int64_t weights = m["weight_bytes_per_rank"].as<int64_t>();
  EXPECT_EQ(
      weights,
      (m["text_params_per_rank"].as<int64_t>() + m["vision_params_per_rank"].as<int64_t>()) * 2);
  EXPECT_GT(m["vision_params"].as<int64_t>(), 0);
  const auto budget =
      static_cast<int64_t>(static_cast<double>(m["gpu_memory_bytes"].as<int64_t>()) * 0.9);
  EXPECT_EQ(m["kv_cache_bytes"].as<int64_t>(), budget - weights);
  EXPECT_TRUE(Contains(m["not_subtracted"].as<std::string>(), "activation"));
  const auto text = RunFleetsim("inspect --model qwen3.8-27b --hardware H200-SXM");
  EXPECT_TRUE(Contains(text.out, "text params + 0.46B vision params")) << text.out;
  EXPECT_TRUE(Contains(text.out, "not guessed"));
}

TEST(InspectCli, DenseModelKeepsBlock16) {
  const auto r = RunFleetsim("inspect --model llama-3.1-8b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["block_size"]["resolved"].as<int>(), 16);
  EXPECT_EQ(doc["attention"]["kv_bytes_per_token_model"].as<int>(), 131072);
  EXPECT_TRUE(doc["gdn"].IsNull());
  EXPECT_EQ(doc["model"]["profiling_depth"].as<int>(), 1);
}

struct Refusal {
  const char* args;
  const char* must_mention;
};

TEST(InspectCli, RefusalsAreOneLineWithExitCode2) {
  const Refusal refusals[] = {
      {"inspect --model qwen3.8-27b --tp 3", "num_key_value_heads"},
      {"inspect --model qwen3.8-27b --tp 16", "num_attention_heads"},
      {"inspect --model qwen3.8-27b --enable-prefix-caching --no-chunked-prefill",
       "requires chunked prefill"},
      {"inspect --model qwen3.8-27b --enable-prefix-caching --max-num-batched-tokens 512",
       "--max-num-batched-tokens"},
      {"inspect --model qwen3.8-27b --enable-prefix-caching --long-prefill-token-threshold 100",
       "--long-prefill-token-threshold"},
      {"inspect --model no-such-model", "known: llama-3.1-70b"},
      {"inspect --model qwen3.8-27b --hardware TPU", "known: A100-SXM-80GB"},
      {"inspect --model llama-3.1-70b --hardware RTX-4090", "raise --tp"},
      {"inspect --gpu-memory-utilization 0.8", "needs --hardware"},
      {"inspect --tp two", "--tp"},
      {"inspect --frobnicate", "frobnicate"},
      {"", "subcommand"},
  };
  for (const Refusal& refusal : refusals) {
    SCOPED_TRACE(refusal.args);
    const auto r = RunFleetsim(refusal.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_TRUE(Contains(r.err, "fleetsim: error: ")) << r.err;
    EXPECT_TRUE(Contains(r.err, refusal.must_mention)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(InspectCli, BadModelCardNamesFileLineAndField) {
  const auto r =
      RunFleetsim("inspect --model " FLEETSIM_SOURCE_DIR "/tests/app/testdata/bad_config.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Contains(r.err, "bad_config.json:4: hidden_size: expected an integer")) << r.err;
}

TEST(InspectCli, HelpListsEveryOption) {
  const auto r = RunFleetsim("inspect --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--model", "--tp", "--enable-prefix-caching", "--no-chunked-prefill", "--block-size",
        "--num-speculative-tokens", "--max-model-len", "--max-num-batched-tokens",
        "--kv-cache-memory-bytes", "--hardware", "--gpu-memory-utilization", "--json"}) {
    EXPECT_TRUE(Contains(r.out, option)) << option;
  }
}

}  // namespace
}  // namespace fleetsim
