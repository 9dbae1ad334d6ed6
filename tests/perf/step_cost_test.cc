#include "perf/step_cost.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "perf/bundle.h"
#include "perf/synthetic_bundle.h"
#include "support/input_error.h"
#include "support/shared_data.h"

namespace fleetsim {
namespace {

using testing::SyntheticBundle;

const ModelCard& Qwen27B() {
  static const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  return card;
}

// The TP group's collectives on an H100 node (one rank: none).
CollectiveModel NvLink(int ranks) {
  if (ranks <= 1) return CollectiveModel();
  static const HardwareSpec h100 = LoadHardware(HardwareCatalogDir(), "H100-SXM");
  return CollectiveModel(h100, ranks, Dtype::kBfloat16);
}

TEST(StepCost, Qwen27BAtTp2Carries129AllReducesOfTheHiddenState) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1, 2});
  const Bundle bundle = LoadBundle(files.dir());
  BatchShape batch;
  batch.AddPrefill(1568, 0, false);
  batch.AddDecode(5000);
  const StepCost tp2 = StepCostModel(Qwen27B(), bundle, 2, NvLink(2), 0).Cost(batch);
  EXPECT_EQ(tp2.allreduces, 129);  // 2 x 64 layers + the embedding
  EXPECT_EQ(tp2.allreduce_bytes, 1569LL * 5120 * 2);
  EXPECT_EQ(tp2.allreduce_ns, std::llround(129 * NvLink(2).AllReduceUs(1569LL * 5120 * 2) * 1000));
  // One sampled sequence (the decode): its logits over the 248,320-token vocabulary
  // (a multiple of 64), bf16, gathered from both ranks.
  EXPECT_EQ(tp2.logits_gather_bytes, 248320LL * 2);
  EXPECT_EQ(tp2.logits_gather_ns,
            std::llround(NvLink(2).NcclUs(NcclCollective::kAllGather, 248320.0 * 2) * 1000));
  EXPECT_EQ(tp2.total_ns, tp2.compute_ns + tp2.allreduce_ns + tp2.logits_gather_ns);
  const StepCost tp1 = StepCostModel(Qwen27B(), bundle, 1, NvLink(1), 0).Cost(batch);
  EXPECT_EQ(tp1.allreduces, 0);
  EXPECT_EQ(tp1.allreduce_ns, 0);
  EXPECT_EQ(tp1.logits_gather_ns, 0);
}

TEST(StepCost, AMeasuredAllReduceTableReplacesTheRingModel) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1, 2});
  // 1 us + 1 us per MB of message.
  std::ofstream(files.dir() + "/tp2/allreduce.csv") << "bytes,time_us\n0,1\n100000000,101\n";
  const Bundle bundle = LoadBundle(files.dir());
  BatchShape batch;
  batch.AddPrefill(1000, 0, true);
  const StepCost cost = StepCostModel(Qwen27B(), bundle, 2, NvLink(2), 0).Cost(batch);
  const double bytes = 1000.0 * 5120 * 2;
  EXPECT_EQ(cost.allreduce_ns, std::llround(129 * (1 + bytes / 1e6) * 1000));
}

// The whole hybrid step, by hand from the synthetic formulas.
TEST(StepCost, ComposesTheLayerSequence) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  const Bundle bundle = LoadBundle(files.dir());
  const StepCostModel model(Qwen27B(), bundle, 1, NvLink(1), 3000);
  BatchShape decode_only;
  for (int i = 0; i < 4; ++i)
    decode_only.AddDecode(1000);
  const double t = 4;                 // tokens
  const double dense = 1 + 0.01 * t;  // any dense kernel at 4 tokens
  const double attention = SyntheticBundle::DecodeUs(4, 1000);
  const double full_layer = attention + 6 * dense;  // layernorm x2, qkv, qk_norm, rotary, o_proj
  const double gdn_regime = 2 + 0.1 * 4;            // gdn_decode only in decode
  const double gdn_layer = gdn_regime + 6 * dense;  // layernorm x2, in, glue, norm, out
  const double mlp = 3 * dense;
  const double head = 2 * dense + (5 + 0.5 * 4) * 2;  // embedding, final norm, lm_head, sampler
  const double us = 16 * full_layer + 48 * gdn_layer + 64 * mlp + head;
  EXPECT_EQ(model.Cost(decode_only).compute_ns, std::llround(us * 1000));
  EXPECT_EQ(model.Cost(decode_only).total_ns, std::llround(us * 1000) + 3000);
}

// A kernel measured at other token counts than the rest cannot share their axis position:
// it is looked up on its own axis. (Read at the others' position, a kernel at 700 tokens
// would come out as 1 + 0.01 * 350.) Both kinds of table are checked: one of a layer's
// kernels, and the final norm, which a step reads once.
TEST(StepCost, AKernelOnItsOwnTokenAxisIsReadOnIt) {
  const std::vector<std::string> kernels{"embedding",    "final_layernorm", "layernorm",
                                         "qkv_proj",     "rotary_emb",      "o_proj",
                                         "gate_up_proj", "act_fn",          "down_proj"};
  const ModelCard llama = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");
  for (const std::string own_axis : {"act_fn", "final_layernorm"}) {
    SyntheticBundle files;
    files.Meta("model: llama-3.1-8b\nhardware: H100-SXM\nsource: {kind: analytic}\n");
    std::vector<std::string> shared;
    for (const std::string& k : kernels) {
      if (k != own_axis) shared.push_back(k);
    }
    files.Dense(1, shared);
    files.Dense(1, {own_axis}, {1, 512, 8192});
    files.PerSequence(1);
    files.Attention(1);
    const Bundle bundle = LoadBundle(files.dir());
    const StepCostModel model(llama, bundle, 1, NvLink(1), 0);
    BatchShape decodes;
    for (int i = 0; i < 700; ++i)
      decodes.AddDecode(100);
    const double dense = 1 + 0.01 * 700;  // every dense kernel, on either axis
    const double layer = SyntheticBundle::DecodeUs(700, 100) + 8 * dense;
    const double us = 32 * layer + 2 * dense + (5 + 0.5 * 700) * 2;
    // (The attention file's six significant digits move the sum by a few ns; a kernel read
    // at the wrong position would move it by 3.5 us, or 32 x that.)
    EXPECT_NEAR(static_cast<double>(model.Cost(decodes).compute_ns), us * 1000, 100) << own_axis;
  }
}

TEST(StepCost, SeveralPrefillsMapToOneAttentionCoordinate) {
  // Chunks 100 over history 0 and 300 over history 1000:
  // prefill_chunk 400; prefill_key = (100 x 50 + 300 x 1150) / 400 = 875;
  // the legacy kv_prefill axis is read at 875 - 400 / 2 = 675.
  BatchShape batch;
  batch.AddPrefill(100, 0, true);
  batch.AddPrefill(300, 1000, false);
  EXPECT_EQ(batch.prefill_tokens(), 400);
  EXPECT_DOUBLE_EQ(batch.prefill_key(), 875);
  EXPECT_EQ(batch.sampled_sequences(), 1);
  EXPECT_EQ(batch.gdn_scan_chunks(), 2 + 5);  // ceil(100/64) + ceil(300/64)
  batch.AddDecode(100);
  batch.AddDecode(300);
  EXPECT_DOUBLE_EQ(batch.mean_decode_context(), 200);

  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  const Bundle bundle = LoadBundle(files.dir());
  const StepCostModel model(Qwen27B(), bundle, 1, NvLink(1), 0);
  // By hand: 402 tokens; the mixed attention table at (400, 675, 2, 200); GDN in the
  // mixed regime: gdn_prefill at 7 scan chunks (10 us each) + gdn_decode_mixed (7 us),
  // gdn_decode has no mixed rows; 3 sampled sequences.
  const double dense = 1 + 0.01 * 402;
  const double attention = SyntheticBundle::PrefillUs(400, 675) + SyntheticBundle::DecodeUs(2, 200);
  const double full_layer = attention + 6 * dense;
  const double gdn_layer = 70 + 7 + 6 * dense;
  const double us =
      16 * full_layer + 48 * gdn_layer + 64 * 3 * dense + 2 * dense + 2 * (5 + 0.5 * 3);
  EXPECT_EQ(model.Cost(batch).compute_ns, std::llround(us * 1000));
  EXPECT_EQ(model.OutOfGridLookups(), 0);
}

// MTP speculation, k = 2: 8 decodes of 1 + 2 query tokens over 1,000 cached tokens each,
// then 2 draft passes (vllm/v1/spec_decode/eagle.py): one over the step's 24 tokens, one
// of one token per sequence over 1,003 cached tokens.
TEST(StepCost, SpeculativeDecodesAndMtpDraftPasses) {
  BatchShape batch;
  for (int i = 0; i < 8; ++i)
    batch.AddSpeculativeDecode(1000, 3);
  EXPECT_EQ(batch.total_tokens(), 24);
  EXPECT_EQ(batch.num_sequences(), 8);
  EXPECT_EQ(batch.logits_rows(), 24);  // every draft position and the bonus one
  EXPECT_EQ(batch.gdn_prefills(), 0);
  EXPECT_EQ(batch.gdn_decode_tokens(), 24);
  EXPECT_EQ(batch.gdn_scan_chunks(), 0);
  EXPECT_EQ(batch.cached_after_sum(), 8 * 1003);
  // Attention as one prefill-style call: chunk 24, key (8 x 3 x (1000 + 1.5)) / 24 = 1001.5,
  // on the legacy kv_prefill axis 1001.5 - 24 / 2 = 989.5.
  EXPECT_DOUBLE_EQ(batch.prefill_key(), 1001.5);

  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  const Bundle bundle = LoadBundle(files.dir());
  StepCostModel model(Qwen27B(), bundle, 1, NvLink(1), 0);
  const double dense = 1 + 0.01 * 24;
  const double attention = SyntheticBundle::PrefillUs(24, 989.5);
  const double full_layer = attention + 6 * dense;
  const double gdn_layer = (2 + 0.1 * 24) + 6 * dense;  // gdn_decode at 24 token updates
  const double head = 2 * dense + 2 * (5 + 0.5 * 24);   // lm_head and sampler at 24 rows
  const double target = 16 * full_layer + 48 * gdn_layer + 64 * 3 * dense + head;
  EXPECT_EQ(model.Cost(batch).compute_ns, std::llround(target * 1000));
  EXPECT_EQ(model.Cost(batch).draft_ns, 0);

  model.EnableMtpDrafting(2);
  // Pass 0: embedding, norm, the fc projection (mtp_fc), one full-attention layer and MLP
  // at 24 tokens, lm_head at 8.
  const double pass0 = 2 * dense + dense + full_layer + 3 * dense + (5 + 0.5 * 8);
  // Pass 1: 8 decodes over 1,003 tokens.
  const double dense8 = 1 + 0.01 * 8;
  const double pass1 = 2 * dense8 + dense8 + SyntheticBundle::DecodeUs(8, 1003) + 6 * dense8 +
                       3 * dense8 + (5 + 0.5 * 8);
  const StepCost cost = model.Cost(batch);
  EXPECT_EQ(cost.compute_ns, std::llround(target * 1000));
  EXPECT_EQ(cost.draft_ns, std::llround((pass0 + pass1) * 1000));
  EXPECT_EQ(cost.total_ns, cost.compute_ns + cost.draft_ns);
  EXPECT_EQ(model.OutOfGridLookups(), 0);
}

TEST(StepCost, MtpDraftingNeedsTheFcKernel) {
  // A bundle without mtp_fc prices the target alone, but cannot price a draft pass.
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  files.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "qk_norm", "rotary_emb",
                  "o_proj", "gdn_in_proj", "gdn_glue", "gdn_norm", "gdn_out_proj", "gate_up_proj",
                  "act_fn", "down_proj"});
  const Bundle bundle = LoadBundle(files.dir());
  StepCostModel model(Qwen27B(), bundle, 1, NvLink(1), 0);
  EXPECT_NO_THROW(model.EnableMtpDrafting(0));
  const InputError e = testing::CatchInputError([&] { model.EnableMtpDrafting(2); });
  EXPECT_EQ(e.field(), "mtp_fc");
  EXPECT_TRUE(testing::Mentions(e, "fc projection")) << e.what();
}

TEST(StepCost, MtpFcOutputIsAllGatheredAtTp2) {
  // At TP 2 the fc (a ColumnParallelLinear with gather_output) adds one all-gather of the
  // pass's tokens x 5,120 x 2 B per draft pass to the three all-reduces and the logits
  // gather: the draft passes of 8 decodes at k = 1 cost those collectives plus the
  // synthetic kernels (24 tokens: pass 0 only).
  BatchShape batch;
  for (int i = 0; i < 8; ++i)
    batch.AddSpeculativeDecode(1000, 2);
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {2});
  const Bundle bundle = LoadBundle(files.dir());
  const CollectiveModel links = NvLink(2);
  StepCostModel model(Qwen27B(), bundle, 2, NvLink(2), 0);
  model.EnableMtpDrafting(1);
  const double dense = 1 + 0.01 * 16;  // pass 0 runs the step's 16 tokens
  // One prefill-style call of chunk 16 (the legacy kv_prefill axis: the key less 16 / 2).
  const double attention = SyntheticBundle::PrefillUs(16, batch.prefill_key() - 8);
  const double pass0 = 2 * dense + dense + attention + 6 * dense + 3 * dense + (5 + 0.5 * 8);
  const int64_t bytes = 16 * 5120 * 2;
  const double logits = 8 * 248320 * 2;  // vocabulary 248,320 is a multiple of 64
  const double collectives = 3 * links.AllReduceUs(bytes) +
                             links.NcclUs(NcclCollective::kAllGather, static_cast<double>(bytes)) +
                             links.NcclUs(NcclCollective::kAllGather, logits);
  EXPECT_EQ(model.Cost(batch).draft_ns, std::llround((pass0 + collectives) * 1000));
}

TEST(StepCost, GdnPrefillIsAStaircaseOf64TokenChunks) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  const Bundle bundle = LoadBundle(files.dir());
  const GdnKernelTables& prefill = bundle.ForTp(1).linear_attention.at("gdn_prefill");
  // 64 tokens is one scan chunk, 65 is two: the cost steps, it does not creep.
  EXPECT_DOUBLE_EQ(prefill.prefill.Lookup({1}), 10);
  EXPECT_DOUBLE_EQ(prefill.prefill.Lookup({2}), 20);
  BatchShape at64, at65;
  at64.AddPrefill(64, 0, false);
  at65.AddPrefill(65, 0, false);
  EXPECT_EQ(at64.gdn_scan_chunks(), 1);
  EXPECT_EQ(at65.gdn_scan_chunks(), 2);
}

TEST(StepCost, RegimeKernelsCostNothingOutsideTheirRegime) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  const Bundle bundle = LoadBundle(files.dir());
  const auto& kernels = bundle.ForTp(1).linear_attention;
  EXPECT_TRUE(kernels.at("gdn_decode").prefill.empty());       // no prefill rows
  EXPECT_TRUE(kernels.at("gdn_decode_mixed").decode.empty());  // mixed only
  EXPECT_FALSE(kernels.at("gdn_decode_mixed").mixed.empty());
}

TEST(StepCost, RefusesABundleLackingAKernelTheModelNeeds) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1});
  files.Dense(1, {"embedding", "final_layernorm", "layernorm", "qkv_proj", "qk_norm", "rotary_emb",
                  "o_proj", "gate_up_proj", "act_fn", "down_proj"});  // no gdn_* kernels
  const Bundle bundle = LoadBundle(files.dir());
  const InputError e =
      testing::CatchInputError([&] { StepCostModel(Qwen27B(), bundle, 1, NvLink(1), 0); });
  EXPECT_EQ(e.field(), "gdn_in_proj");
  EXPECT_TRUE(testing::Mentions(e, "linear_attention layers"));
}

// Rope (and, on a qk-norm model, the q/k norm) must be charged: on its own row, or inside
// the one fused kernel that does norm, rope and gate together. A bundle with neither is
// refused rather than run a step short of them.
TEST(StepCost, RopeAndQkNormAreNeededOnTheirOwnOrFused) {
  const std::vector<std::string> others{
      "embedding", "final_layernorm", "layernorm",    "qkv_proj",     "o_proj", "gdn_in_proj",
      "gdn_glue",  "gdn_norm",        "gdn_out_proj", "gate_up_proj", "act_fn", "down_proj"};
  auto with = [&](SyntheticBundle& files, std::vector<std::string> extra) {
    testing::WriteHybridBundle(files, {1});
    extra.insert(extra.end(), others.begin(), others.end());
    files.Dense(1, extra);
  };
  SyntheticBundle no_rope, no_qk_norm, separate, fused;
  with(no_rope, {"qk_norm"});
  with(no_qk_norm, {"rotary_emb"});
  with(separate, {"qk_norm", "rotary_emb"});
  with(fused, {"qk_norm_rope"});
  for (auto [files, kernel] : {std::pair{&no_rope, "rotary_emb"}, {&no_qk_norm, "qk_norm"}}) {
    const Bundle bundle = LoadBundle(files->dir());
    const InputError e =
        testing::CatchInputError([&] { StepCostModel(Qwen27B(), bundle, 1, NvLink(1), 0); });
    EXPECT_EQ(e.field(), kernel);
    EXPECT_TRUE(testing::Mentions(e, "or its fused 'qk_norm_rope'")) << e.what();
  }
  // Llama has no q/k norm: rope alone is enough.
  const ModelCard llama = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");
  SyntheticBundle llama_files;
  testing::WriteDenseBundle(llama_files);
  EXPECT_NO_THROW(StepCostModel(llama, LoadBundle(llama_files.dir()), 1, NvLink(1), 0));
  // The fused kernel is charged once per full-attention layer, where the two were twice.
  BatchShape decodes;
  for (int i = 0; i < 4; ++i)
    decodes.AddDecode(1000);
  const Bundle separate_bundle = LoadBundle(separate.dir());
  const Bundle fused_bundle = LoadBundle(fused.dir());
  const int64_t apart =
      StepCostModel(Qwen27B(), separate_bundle, 1, NvLink(1), 0).Cost(decodes).compute_ns;
  const int64_t together =
      StepCostModel(Qwen27B(), fused_bundle, 1, NvLink(1), 0).Cost(decodes).compute_ns;
  EXPECT_NEAR(static_cast<double>(apart - together), 16 * (1 + 0.01 * 4) * 1000, 1.0);
}

TEST(Bundle, MissingTpListsTheAvailableOnes) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1, 2});
  const Bundle bundle = LoadBundle(files.dir());
  EXPECT_EQ(bundle.TpDegrees(), (std::vector<int>{1, 2}));
  EXPECT_EQ(bundle.source, "analytic");
  EXPECT_EQ(bundle.engine_resolved.at(2).block_size, 784);
  const InputError e = testing::CatchInputError([&] { bundle.ForTp(4); });
  EXPECT_TRUE(testing::Mentions(e, "available: 1, 2"));
}

TEST(Bundle, ARunReadsOnlyItsOwnTp) {
  SyntheticBundle files;
  testing::WriteHybridBundle(files, {1, 2, 4});
  const Bundle bundle = LoadBundle(files.dir(), 2);
  EXPECT_EQ(bundle.TpDegrees(), (std::vector<int>{2}));
  EXPECT_FALSE(bundle.ForTp(2).dense.empty());
  // The error for a degree left unread still lists every degree on disk.
  const InputError unread = testing::CatchInputError([&] { bundle.ForTp(1); });
  EXPECT_TRUE(testing::Mentions(unread, "available: 1, 2, 4")) << unread.what();
  const Bundle none = LoadBundle(files.dir(), 8);
  EXPECT_TRUE(none.TpDegrees().empty());
  const InputError absent = testing::CatchInputError([&] { none.ForTp(8); });
  EXPECT_TRUE(testing::Mentions(absent, "no tables for TP 8 (available: 1, 2, 4)"))
      << absent.what();
}

// What loading `files` refuses.
InputError LoadError(const SyntheticBundle& files) {
  return testing::CatchInputError([&] { LoadBundle(files.dir()); });
}

// A time that is not a finite, non-negative number would poison every step that reads it;
// each table refuses one, naming its file, line and column.
TEST(Bundle, ATimeMustBeAFiniteNonNegativeNumber) {
  for (const auto& [file, row] : {std::pair{"dense.csv", "act_fn,2,nan"},
                                  {"dense.csv", "act_fn,2,inf"},
                                  {"dense.csv", "act_fn,2,1e400"},
                                  {"attention.csv", "0,0,2,1000,-1"},
                                  {"per_sequence.csv", "sampler,2,-inf"}}) {
    SCOPED_TRACE(std::string(file) + ": " + row);
    SyntheticBundle files;
    testing::WriteDenseBundle(files);
    files.Append(std::string("tp1/") + file, row);
    const InputError e = LoadError(files);
    EXPECT_EQ(e.field(), "time_us");
    EXPECT_NE(std::string(e.what()).find(std::string("tp1/") + file + ":"), std::string::npos)
        << e.what();
  }
}

// A bundle copied without one of the degrees its meta.yaml lists is refused, not read as
// if it had only the others; so is one with two rows at one point (which would win?).
TEST(Bundle, AMissingDegreeOrARepeatedRowIsRefused) {
  struct Case {
    const char* file;
    const char* line;
    const char* field;
    const char* mention;
  };
  for (const Case& c :
       {Case{"meta.yaml", "tp_degrees: [1, 2]", "tp_degrees",
             "lists TP 2, but the bundle has no tp2/ folder"},
        Case{"tp1/dense.csv", "act_fn,1024,3", "act_fn", "has two rows at (1024)"}}) {
    SCOPED_TRACE(c.line);
    SyntheticBundle files;
    testing::WriteDenseBundle(files);
    files.Append(c.file, c.line);
    const InputError e = LoadError(files);
    EXPECT_EQ(e.field(), c.field);
    EXPECT_TRUE(testing::Mentions(e, c.mention)) << e.what();
  }
}

// Published bundles spell names their own way; the letters and digits decide, and one name
// may extend the other (a checkpoint's "-Instruct-2507").
TEST(Bundle, MismatchesCompareNamesByTheirLettersAndDigits) {
  Bundle b;
  b.dir = "B";
  b.model = "meta-llama/Llama-3.1-8B";
  b.hardware = "RTX4090";
  EXPECT_TRUE(BundleMismatches(b, "llama-3.1-8b", "RTX-4090").empty());
  b.model = "Qwen/Qwen3-30B-A3B-Instruct-2507";
  b.hardware = "RTXPRO6000";
  EXPECT_TRUE(BundleMismatches(b, "qwen3-30b-a3b", "RTX-PRO-6000").empty());
  b.model = "qwen3.8-27b";
  b.hardware = "H200-SXM";
  const std::vector<std::string> both = BundleMismatches(b, "qwen3-8b", "H100-SXM");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0],
            "the bundle B is for model 'qwen3.8-27b', not qwen3-8b: its times are that "
            "model's");
  EXPECT_EQ(both[1],
            "the bundle B was measured or built on 'H200-SXM', not H100-SXM: its times "
            "are that GPU's");
  b.model.clear();
  b.hardware.clear();  // meta.yaml says neither: nothing to compare
  EXPECT_TRUE(BundleMismatches(b, "qwen3-8b", "H100-SXM").empty());
}

TEST(Bundle, MeasuredPublishedBundlesLoadAsTheyAre) {
  FLEETSIM_REQUIRE_SHARED_DATA();
  const auto perf = testing::SharedDataDir() / "profiles" / "llmservingsim" / "perf";
  for (const char* dir :
       {"RTX4090/meta-llama/Llama-3.1-8B/bf16", "RTXPRO6000/meta-llama/Llama-3.1-8B/bf16",
        "RTXPRO6000/Qwen/Qwen3-32B/bf16", "RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16"}) {
    SCOPED_TRACE(dir);
    const Bundle bundle = LoadBundle((perf / dir).string());
    EXPECT_EQ(bundle.source, "measured");
    EXPECT_EQ(bundle.block_size, 16);
    EXPECT_TRUE(bundle.enforce_eager);
    EXPECT_FALSE(bundle.ForTp(1).attention.mixed.empty());
  }
  const Bundle moe =
      LoadBundle((perf / "RTXPRO6000/Qwen/Qwen3-30B-A3B-Instruct-2507/bf16").string());
  EXPECT_TRUE(moe.ForTp(1).moe.has_value());
  const ModelCard qwen_moe = ModelCatalog(ModelsDir()).Load("qwen3-30b-a3b");
  BatchShape batch;
  batch.AddPrefill(512, 0, true);
  EXPECT_GT(StepCostModel(qwen_moe, moe, 1, NvLink(1), 0).Cost(batch).compute_ns, 0);
}

}  // namespace
}  // namespace fleetsim
