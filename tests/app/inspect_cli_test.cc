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

// Qwen3-30B-A3B under DP 2 x EP on RTX PRO 6000: 128 experts / 2 GPUs; 48 layers x 64
// experts x 3 x 768 x 2048 x 2 B = 28,991,029,248 B (27.0 GiB) of experts per GPU; 128
// decodes per rank gather 256 tokens: dispatch 256 x (2048 + 128 router logits) x 2 =
// 1,114,112 B, combine 256 x 4096 = 1,048,576 B; the row stages for the other GPU's
// experts 256 x 65,664 B = 16,809,984 B a layer (perf/expert_mask_cost.h).
TEST(InspectCli, DataParallelExpertParallelShowsShardsAndCollectives) {
  const std::string base =
      "inspect --model qwen3-30b-a3b --hardware RTX-PRO-6000 --max-num-seqs 128 "
      "--max-num-batched-tokens 2048 ";
  const auto r = RunFleetsim(base + "--data-parallel-size 2 --enable-expert-parallel");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "DP 2 x TP 1 = 2 GPUs of a 8-GPU node")) << r.out;
  EXPECT_TRUE(Contains(r.out, "experts: 128, at most 64 per GPU (EP 2), 27.0 GiB")) << r.out;
  EXPECT_TRUE(Contains(r.out, "up to 256 tokens")) << r.out;
  EXPECT_TRUE(Contains(r.out, "(128 per rank, 256 gathered): 1.1 MB + 1.0 MB a layer")) << r.out;
  // --dp, the cluster config's name for it, is the same option.
  const auto short_name = RunFleetsim(base + "--dp 2 --enable-expert-parallel");
  ASSERT_EQ(short_name.exit_code, 0) << short_name.err;
  EXPECT_EQ(short_name.out, r.out);
  const auto j = RunFleetsim(base + "--data-parallel-size 2 --enable-expert-parallel --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const YAML::Node doc = YAML::Load(j.out);
  EXPECT_EQ(doc["data_parallel"]["expert_bytes_per_gpu"].as<int64_t>(), 28'991'029'248);
  EXPECT_EQ(doc["data_parallel"]["exchange"][0]["dispatch_bytes"].as<int64_t>(), 1'114'112);
  EXPECT_EQ(doc["data_parallel"]["exchange"][0]["combine_bytes"].as<int64_t>(), 1'048'576);
  EXPECT_GT(doc["data_parallel"]["exchange"][0]["per_step_us"].as<double>(), 0);
  EXPECT_EQ(doc["data_parallel"]["exchange"][0]["masked_row_bytes"].as<int64_t>(), 16'809'984);
  EXPECT_NEAR(doc["data_parallel"]["exchange"][0]["masked_per_step_us"].as<double>(),
              48 * 16'809'984 / (1.597e12 * 0.977) * 1e6, 1e-6);
  EXPECT_TRUE(Contains(r.out, "max_num_seqs decodes: 16.8 MB a layer, 10.8 us a layer")) << r.out;
  // A 2,048-token prefill on one rank is past the 256-token capture size: eager, the other
  // rank's 1-token dummy batch unpadded, so the exchange is rooted broadcasts and reduces.
  // Its dispatch moves half the bytes of both ranks prefilling, yet takes 2/3 as long: the
  // prefill rank's share crosses the link alone, where the all-gather splits it both ways
  // but pays its ring's local pass (about 1.5 x the bytes' time at 2 ranks).
  EXPECT_TRUE(Contains(r.out, "(2048 + 1 per other rank, rooted, 2049 gathered): 8.9 MB + 8.4 MB"))
      << r.out;
  const YAML::Node exchange = doc["data_parallel"]["exchange"];
  ASSERT_EQ(exchange.size(), 3u);
  EXPECT_FALSE(exchange[1]["rooted"].as<bool>());
  EXPECT_TRUE(exchange[2]["rooted"].as<bool>());
  EXPECT_EQ(exchange[2]["other_rank_tokens"].as<int64_t>(), 1);
  EXPECT_EQ(exchange[2]["gathered_tokens"].as<int64_t>(), 2049);
  EXPECT_NEAR(exchange[2]["per_layer_us"].as<double>() / exchange[1]["per_layer_us"].as<double>(),
              2.0 / 3, 0.03);
  // Half the experts leave each GPU: its KV budget grows by exactly their bytes.
  const auto one = RunFleetsim(base + "--json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(doc["memory"]["kv_cache_bytes"].as<int64_t>() -
                YAML::Load(one.out)["memory"]["kv_cache_bytes"].as<int64_t>(),
            28'991'029'248);

  const auto no_ep = RunFleetsim(base + "--data-parallel-size 2");
  EXPECT_EQ(no_ep.exit_code, 2);
  EXPECT_TRUE(Contains(no_ep.err, "--enable-expert-parallel")) << no_ep.err;
  const auto dense =
      RunFleetsim("inspect --model llama-3.1-8b --data-parallel-size 2 --enable-expert-parallel");
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_TRUE(Contains(dense.err, "no MoE layers")) << dense.err;
  const auto too_many = RunFleetsim(base + "--data-parallel-size 16 --enable-expert-parallel");
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_TRUE(Contains(too_many.err, "16 GPUs do not fit a node of 8")) << too_many.err;
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

TEST(InspectCli, MtpSpeculationChargesItsWeightsAndItsKvLayer) {
  // The 27B's MTP module is 424,699,392 bf16 parameters = 849,398,784 B at TP 1
  // (tests/model/weight_count_test.cc has the sum); it comes out of the KV budget, and its
  // attention layer adds one 4 x 512 x 2 B = 4,096 B page per token to the 16 target
  // layers' 65,536 B.
  const std::string base = "inspect --model qwen3.8-27b --hardware H200-SXM --json";
  const auto off = RunFleetsim(base);
  const auto on = RunFleetsim(base + " --num-speculative-tokens 2");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  ASSERT_EQ(on.exit_code, 0) << on.err;
  const YAML::Node a = YAML::Load(off.out), b = YAML::Load(on.out);
  EXPECT_EQ(a["memory"]["mtp_weight_bytes_per_rank"].as<int64_t>(), 0);
  EXPECT_EQ(b["memory"]["mtp_weight_bytes_per_rank"].as<int64_t>(), 849'398'784);
  EXPECT_EQ(b["memory"]["weight_bytes_per_rank"].as<int64_t>() -
                a["memory"]["weight_bytes_per_rank"].as<int64_t>(),
            849'398'784);
  EXPECT_EQ(
      a["memory"]["kv_cache_bytes"].as<int64_t>() - b["memory"]["kv_cache_bytes"].as<int64_t>(),
      849'398'784);
  EXPECT_EQ(a["attention"]["kv_bytes_per_token_rank_with_mtp"].as<int64_t>(), 65'536);
  EXPECT_EQ(b["attention"]["kv_bytes_per_token_rank"].as<int64_t>(), 65'536);
  EXPECT_EQ(b["attention"]["kv_bytes_per_token_rank_with_mtp"].as<int64_t>(), 69'632);
  EXPECT_EQ(b["attention"]["mtp_attention_layers"].as<int>(), 1);
  EXPECT_EQ(b["kv_cache_groups"]["group_size"].as<int>(), 17);
  const auto text = RunFleetsim(
      "inspect --model qwen3.8-27b --hardware H200-SXM "
      "--num-speculative-tokens 2");
  EXPECT_TRUE(Contains(text.out, "69,632 B per rank (+4,096 B for 1 MTP attention layer)"))
      << text.out;
  EXPECT_TRUE(Contains(text.out, "+ 0.42B MTP params")) << text.out;
  EXPECT_TRUE(Contains(text.out, "849,398,784 B")) << text.out;
  EXPECT_TRUE(Contains(text.out, "(from 64: MTP)")) << text.out;
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
      // 70.6e9 bf16 weights are 131.4 GiB; 23.99 GiB x 0.90 = 21.59 GiB usable.
      {"inspect --model llama-3.1-70b --hardware RTX-4090", "do not fit RTX-4090's 23.99 GiB"},
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

// With a GPU, inspect says which attention backend and decode kernel vLLM runs there, and
// why (the conditions the skipped kernels failed), and how the weights are stored.
TEST(InspectCli, NamesTheAttentionBackendAndDecodeKernelAndWhy) {
  auto r = RunFleetsim("inspect --model qwen3.8-27b-awq --tp 2 --hardware RX-7900-XT");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "backend                     ROCM_ATTN on RX-7900-XT")) << r.out;
  EXPECT_TRUE(Contains(r.out,
                       "decode kernel               triton_paged_attention_2d "
                       "(per_sequence_head grid; skipped rocm_paged_attention: head "
                       "size 256 is not 128"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "awq, 4-bit weights, group 128 (zero points), W4A16 (config.json)"))
      << r.out;
  r = RunFleetsim("inspect --model qwen3-8b --tp 2 --hardware RX-7900-XT --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node doc = YAML::Load(r.out);
  EXPECT_EQ(doc["attention_backend"]["backend"].as<std::string>(), "ROCM_ATTN");
  EXPECT_EQ(doc["attention_backend"]["decode_kernel"].as<std::string>(), "rocm_paged_attention");
  EXPECT_EQ(doc["attention_backend"]["alignment_base"].as<int>(), 16);
  r = RunFleetsim("inspect --model qwen3-8b --hardware H100-SXM");
  EXPECT_TRUE(Contains(r.out, "decode kernel               flash_attn_3")) << r.out;
  // Without a GPU there is no choice to report.
  r = RunFleetsim("inspect --model qwen3-8b");
  EXPECT_TRUE(Contains(r.out, "not chosen: vLLM chooses per GPU (give --hardware)")) << r.out;
}

TEST(InspectCli, AnImpossiblePinIsOneLineExitTwoNamingTheCondition) {
  const auto r = RunFleetsim(
      "inspect --model qwen3-8b --tp 2 --hardware RX-7900-XT "
      "--decode-kernel triton_paged_attention_2d_splitkv");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "--decode-kernel: triton_paged_attention_2d_splitkv cannot run "
                       "this model: head size 128 is not 256"))
      << r.err;
}

TEST(InspectCli, WeightsThatDoNotFitNameTheShortfall) {
  const auto r = RunFleetsim("inspect --model qwen3.8-27b --tp 2 --hardware RX-7900-XT");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(Contains(r.err, "GiB short, before any KV cache")) << r.err;
  // Quantized to 4 bits (as a group's `quantization: awq` would), the same model fits.
  const auto q =
      RunFleetsim("inspect --model qwen3.8-27b --tp 2 --hardware RX-7900-XT --quantization awq");
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_TRUE(
      Contains(q.out, "awq, 4-bit weights, group 128 (zero points), W4A16 (engine setting)"))
      << q.out;
}

// One decode step per kernel: on the RX 7900 XT the 16 attention layers' Triton 2D kernel
// runs 2 programs (one per KV head per rank), each streaming 32,769 tokens x 1,024 B of K
// and V at the catalog's 27.5 GB/s per program: 1,220.2 us, plus one small-kernel launch
// (the calibrated gdn_update_launch_s, 1.8 us): 1,222.0 us each.
TEST(InspectCli, DecodeStepPricesEachKernel) {
  const auto r = RunFleetsim(
      "inspect --model qwen3.8-27b-awq --tp 2 --hardware RX-7900-XT --decode-step 32768");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "2 programs (1 split(s)), 1.00 wave(s)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "full_attention attention  1222.0 us x 16")) << r.out;
  EXPECT_TRUE(Contains(r.out, "bound by per-program rate")) << r.out;
  EXPECT_EQ(RunFleetsim("inspect --model qwen3-8b --decode-step 100").exit_code, 2);
}

// At TP 2 the step adds what the engine charges per step (perf/step_cost.cc): Llama-3.1-8B's
// 32 layers make 2 x 32 + 1 all-reduces of 32 tokens x 4,096 x 2 B = 262,144 B (vLLM's
// one-shot custom kernel: two GPUs, below its 8 MiB limit), and one
// all-gather of the logits, 32 x 128,256 (already a multiple of 64) x 2 B = 8,208,384 B.
TEST(InspectCli, DecodeStepAddsTheTpCollectives) {
  const auto r = RunFleetsim(
      "inspect --model llama-3.1-8b --tp 2 --hardware H100-SXM --decode-step 1024 "
      "--decode-batch 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node step = YAML::Load(r.out)["decode_step"];
  ASSERT_TRUE(step["collectives"].IsSequence()) << r.out;
  ASSERT_EQ(step["collectives"].size(), 2u);
  const YAML::Node all_reduce = step["collectives"][0];
  EXPECT_EQ(all_reduce["name"].as<std::string>(), "all_reduce");
  EXPECT_EQ(all_reduce["bytes"].as<int64_t>(), 262'144);
  EXPECT_EQ(all_reduce["calls"].as<int>(), 65);
  EXPECT_EQ(all_reduce["how"].as<std::string>(), "custom one-shot");
  const YAML::Node gather = step["collectives"][1];
  EXPECT_EQ(gather["name"].as<std::string>(), "logits_all_gather");
  EXPECT_EQ(gather["bytes"].as<int64_t>(), 8'208'384);
  EXPECT_EQ(gather["calls"].as<int>(), 1);
  EXPECT_EQ(gather["how"].as<std::string>().rfind("nccl ", 0), 0u) << gather["how"];
  const double collectives = all_reduce["us"].as<double>() + gather["us"].as<double>();
  EXPECT_GT(all_reduce["us_each"].as<double>(), 0);
  EXPECT_NEAR(step["collectives_us"].as<double>(), collectives, 1e-6);
  EXPECT_NEAR(step["step_us"].as<double>(), step["total_us"].as<double>() + collectives, 1e-6);

  const auto text = RunFleetsim(
      "inspect --model llama-3.1-8b --tp 2 --hardware H100-SXM --decode-step 1024 "
      "--decode-batch 32");
  EXPECT_TRUE(Contains(text.out, "x 65 = ")) << text.out;
  EXPECT_TRUE(Contains(text.out, "(262,144 B each, custom one-shot)")) << text.out;
  EXPECT_TRUE(Contains(text.out, "step total")) << text.out;
  // One GPU: no collective, and the report says so by leaving them out.
  const auto tp1 =
      RunFleetsim("inspect --model llama-3.1-8b --hardware H100-SXM --decode-step 1024 --json");
  ASSERT_EQ(tp1.exit_code, 0) << tp1.err;
  const YAML::Node one = YAML::Load(tp1.out)["decode_step"];
  EXPECT_EQ(one["collectives"].size(), 0u);
  EXPECT_EQ(one["step_us"].as<double>(), one["total_us"].as<double>());
}

// --prefill-chunk: the decode step's batch beside a chunk, as one mixed call. On the RTX
// 4090 (FlashAttention 2, 128 SMs) 128 decodes of Llama-3.1-8B (32 query heads) beside a
// 1,024-token chunk launch the chunk's 16 query blocks per head for every decode: 15 x 128
// x 32 = 61,440 empty tiles, each holding an SM for attention_empty_tile_s (351.9 ns):
// 61,440 / 128 x 351.9 ns = 168.9 us a layer. Real tiles: the chunk's 16 x 32 and a decode's
// one per head, 128 x 32. FlashAttention 3 (H100) schedules only real tiles.
TEST(InspectCli, DecodeStepBesideAChunkShowsTheEmptyTiles) {
  const auto r = RunFleetsim(
      "inspect --model llama-3.1-8b --hardware RTX-4090 --decode-step 16 --decode-batch 128 "
      "--prefill-chunk 1024 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node mixed = YAML::Load(r.out)["decode_step"]["mixed_attention"];
  ASSERT_TRUE(mixed.IsMap()) << r.out;
  EXPECT_EQ(mixed["prefill_chunk"].as<int>(), 1024);
  EXPECT_TRUE(mixed["one_grid"].as<bool>());
  EXPECT_EQ(mixed["empty_tiles"].as<double>(), 61'440);
  EXPECT_EQ(mixed["tiles"].as<double>(), 16 * 32 + 128 * 32);
  EXPECT_NEAR(mixed["empty_tiles_us"].as<double>(), 61'440.0 / 128 * 0.35187301574476824, 1e-9);
  // The call costs more than the chunk's and the decodes' own calls together.
  EXPECT_GT(mixed["us_per_layer"].as<double>(),
            mixed["chunk_alone_us"].as<double>() + mixed["decodes_alone_us"].as<double>());
  const auto text = RunFleetsim(
      "inspect --model llama-3.1-8b --hardware RTX-4090 --decode-step 16 --decode-batch 128 "
      "--prefill-chunk 1024");
  EXPECT_TRUE(Contains(text.out, "beside a 1,024-token chunk")) << text.out;
  EXPECT_TRUE(Contains(text.out, "61,440 empty ones")) << text.out;

  const auto h100 = RunFleetsim(
      "inspect --model llama-3.1-8b --hardware H100-SXM --decode-step 16 --decode-batch 128 "
      "--prefill-chunk 1024 --json");
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  const YAML::Node packed = YAML::Load(h100.out)["decode_step"]["mixed_attention"];
  EXPECT_FALSE(packed["one_grid"].as<bool>());
  EXPECT_EQ(packed["empty_tiles"].as<double>(), 0);
  // Without --prefill-chunk the field is null; without --decode-step the option is refused.
  const auto plain =
      RunFleetsim("inspect --model llama-3.1-8b --hardware RTX-4090 --decode-step 16 --json");
  EXPECT_TRUE(YAML::Load(plain.out)["decode_step"]["mixed_attention"].IsNull()) << plain.out;
  const auto alone =
      RunFleetsim("inspect --model llama-3.1-8b --hardware RTX-4090 --prefill-chunk 1024");
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_TRUE(Contains(alone.err, "--prefill-chunk")) << alone.err;
  EXPECT_EQ(RunFleetsim("inspect --model llama-3.1-8b --hardware RTX-4090 --decode-step 16 "
                        "--prefill-chunk 0")
                .exit_code,
            2);
}

TEST(InspectCli, HelpListsEveryOption) {
  const auto r = RunFleetsim("inspect --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option :
       {"--model", "--tp", "--enable-prefix-caching", "--no-chunked-prefill", "--block-size",
        "--num-speculative-tokens", "--max-model-len", "--max-num-batched-tokens",
        "--kv-cache-memory-bytes", "--hardware", "--gpu-memory-utilization", "--attention-backend",
        "--decode-kernel", "--quantization", "--quantization-group-size", "--decode-step",
        "--decode-batch", "--prefill-chunk", "--json"}) {
    EXPECT_TRUE(Contains(r.out, option)) << option;
  }
}

}  // namespace
}  // namespace fleetsim
