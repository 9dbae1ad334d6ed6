// The fit of an empty FlashAttention 2 tile's cost (perf/kernel_db/empty_tile_fit.h): on a
// table built with a known cost it recovers that cost, whatever else the table holds; on
// the measured LLMServingSim tables, the one it is fitted on gives the analytic model's
// constant, and the held-out ones stay near it.
#include "perf/kernel_db/empty_tile_fit.h"

#include <cmath>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "perf/analytic_kernels.h"
#include "support/shared_data.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

constexpr double kSms = 128, kHeads = 32, kEmptyUs = 0.4;

// A mixed-attention table whose cells are affine in chunk, history, decodes and their keys,
// plus kEmptyUs per empty tile per SM, plus -- only for decodes past one 64-key block -- a
// term that grows with chunk x decodes x keys (what the fit must leave out).
std::string SyntheticTable() {
  std::ostringstream csv;
  csv << "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n";
  for (int c : {0, 16, 32, 64, 128, 256, 512}) {
    for (int kp : {0, 16, 512}) {
      for (int n : {0, 1, 4, 16, 128}) {
        for (int kd : {0, 16, 32, 64, 1024}) {
          if ((n == 0) != (kd == 0) || (c == 0 && kp != 0) || (c == 0 && n == 0)) continue;
          const double blocks = c == 0 ? 0 : std::ceil(c / 64.0);
          const double empties = n * kHeads * std::max(0.0, blocks - 1);
          double us =
              5 + 0.01 * c + 0.002 * kp + n * (0.3 + 0.001 * kd) + empties / kSms * kEmptyUs;
          if (kd > 64) us += 1e-5 * c * n * kd;
          csv << c << "," << kp << "," << n << "," << kd << "," << us << "\n";
        }
      }
    }
  }
  return csv.str();
}

TEST(EmptyTileFit, RecoversTheCostATableWasBuiltWith) {
  const testing::TempFile table("attention.csv", SyntheticTable());
  const EmptyTileFit fit =
      FitEmptyTileSeconds(table.path(), {.q_heads = kHeads, .compute_units = kSms});
  EXPECT_NEAR(fit.seconds, kEmptyUs * 1e-6, 1e-12);
  // Chunks 128, 256, 512 x histories 0, 16, 512 x 4 decode counts x 3 short contexts.
  EXPECT_EQ(fit.cells, 3 * 3 * 4 * 3);
  EXPECT_LT(fit.rms_residual_us, 1e-6);
  EXPECT_GT(fit.mean_excess_us, 0);
}

TEST(EmptyTileFit, RefusesATableItCannotDifference) {
  const testing::TempFile no_short_chunk(
      "attention.csv",
      "prefill_chunk,kv_prefill,n_decode,kv_decode,time_us\n128,0,0,0,10\n128,0,4,16,12\n");
  try {
    FitEmptyTileSeconds(no_short_chunk.path(), {.q_heads = kHeads, .compute_units = kSms});
    FAIL() << "a table without 64-token chunks was fitted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), no_short_chunk.path());
    EXPECT_NE(std::string(e.what()).find("no mixed cell to difference"), std::string::npos)
        << e.what();
  }
  const testing::TempFile no_time("attention.csv", "prefill_chunk,kv_prefill,n_decode,kv_decode\n");
  EXPECT_THROW(FitEmptyTileSeconds(no_time.path(), {.q_heads = kHeads, .compute_units = kSms}),
               InputError);
}

// The measured LLMServingSim tables (../shared): the analytic constant is this fit on the
// RTX PRO 6000's Qwen3-32B table at TP 1, to the last bit; every other table -- three
// models, two TP degrees, and another GPU -- is held out. REGRESSION BOUND, not a target:
// the held-out fits, measured 2026-12-05, are +2.1 to +19.6 % from it (the RTX 4090 the
// farthest), held within 25 %.
TEST(EmptyTileFit, TheAnalyticConstantIsTheFitOnOneTableAndTheOthersAgree) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto perf = testing::SharedDataDir() / "profiles/llmservingsim/perf";
  const double shipped = AnalyticConstants{}.attention_empty_tile_s;
  const EmptyTileFit fitted =
      FitEmptyTileSeconds((perf / "RTXPRO6000/Qwen/Qwen3-32B/bf16/tp1/attention.csv").string(),
                          {.q_heads = 64, .compute_units = 188});
  EXPECT_EQ(fitted.seconds, shipped);
  const struct {
    const char* table;
    double q_heads;
    double sms;
  } held_out[] = {
      {"RTX4090/meta-llama/Llama-3.1-8B/bf16/tp1", 32, 128},
      {"RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp1", 32, 188},
      {"RTXPRO6000/meta-llama/Llama-3.1-8B/bf16/tp2", 16, 188},
      {"RTXPRO6000/Qwen/Qwen3-32B/bf16/tp2", 32, 188},
      {"RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/tp1", 32, 188},
      {"RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16/tp2", 16, 188},
  };
  for (const auto& h : held_out) {
    const EmptyTileFit fit = FitEmptyTileSeconds((perf / h.table / "attention.csv").string(),
                                                 {.q_heads = h.q_heads, .compute_units = h.sms});
    EXPECT_NEAR(fit.seconds / shipped, 1.0, 0.25) << h.table;
    EXPECT_GT(fit.cells, 1000) << h.table;
  }
}

}  // namespace
}  // namespace fleetsim
