// The worked values of ENGINE_SEMANTICS.md section 1 (GDN state and attention page).
#include "model/cache_shapes.h"

#include <gtest/gtest.h>

#include "core/project_paths.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

const ModelCard& Qwen27B() {
  static const ModelCard card = ModelCatalog(ModelsDir()).Load("qwen3.8-27b");
  return card;
}

struct StateCase {
  int tp;
  Dtype ssm;
  int64_t conv_bytes, ssm_bytes, page_bytes, attn_bytes;
};

TEST(CacheShapes, Qwen27BStateAndPageBytesPerTp) {
  const StateCase cases[] = {
      {1, Dtype::kFloat32, 61440, 3145728, 3207168, 4096},
      {2, Dtype::kFloat32, 30720, 1572864, 1603584, 2048},
      {4, Dtype::kFloat32, 15360, 786432, 801792, 1024},
      {8, Dtype::kFloat32, 7680, 393216, 400896, 1024},  // KV heads replicated: 1 per rank
      {1, Dtype::kBfloat16, 61440, 1572864, 1634304, 4096},
  };
  for (const StateCase& c : cases) {
    SCOPED_TRACE("tp " + std::to_string(c.tp) + " ssm " + std::string(NameOf(c.ssm)));
    const GdnStateShape state = GdnState(*Qwen27B().linear, c.tp, 0, Dtype::kBfloat16, c.ssm);
    EXPECT_EQ(state.ConvBytes(), c.conv_bytes);
    EXPECT_EQ(state.SsmBytes(), c.ssm_bytes);
    EXPECT_EQ(state.PageBytes(), c.page_bytes);
    EXPECT_EQ(AttentionBytesPerTokenPerLayer(Qwen27B(), c.tp, Dtype::kBfloat16), c.attn_bytes);
  }
}

TEST(CacheShapes, StateShapesAtTp1) {
  const GdnStateShape state = GdnState(*Qwen27B().linear, 1, 0, Dtype::kBfloat16, Dtype::kFloat32);
  EXPECT_EQ(state.conv, (std::array<int64_t, 2>{3, 10240}));
  EXPECT_EQ(state.ssm, (std::array<int64_t, 3>{48, 128, 128}));
}

TEST(CacheShapes, SpeculativeTokensWidenOnlyTheConvState) {
  const GdnStateShape state = GdnState(*Qwen27B().linear, 1, 2, Dtype::kBfloat16, Dtype::kFloat32);
  EXPECT_EQ(state.conv[0], 3 + 2);
  EXPECT_EQ(state.ConvBytes(), 5 * 10240 * 2);
  EXPECT_EQ(state.SsmBytes(), 3145728);
}

TEST(CacheShapes, Qwen3NextState) {
  const ModelCard next = ModelCatalog(ModelsDir()).Load("qwen3-next-80b-a3b");
  const GdnStateShape state = GdnState(*next.linear, 1, 0, Dtype::kBfloat16, Dtype::kBfloat16);
  EXPECT_EQ(state.ConvBytes(), 49152);
  EXPECT_EQ(state.SsmBytes(), 1048576);
  EXPECT_EQ(state.PageBytes(), 1097728);
  EXPECT_EQ(AttentionBytesPerTokenPerLayer(next, 1, Dtype::kBfloat16), 2048);
}

TEST(CacheShapes, LlamaKvPerTokenPerLayer) {
  const ModelCard llama = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");
  EXPECT_EQ(AttentionBytesPerTokenPerLayer(llama, 1, Dtype::kBfloat16), 4096);
  EXPECT_EQ(AttentionBytesPerTokenPerLayer(llama, 1, Dtype::kFp8), 2048);
}

TEST(CacheShapes, RefusesTpThatDoesNotDivideTheHeadsNamingTheField) {
  struct Case {
    int tp;
    const char* field;
  };
  // 27B: 24 Q heads, 4 KV heads, 16 key heads, 48 value heads.
  const Case cases[] = {{3, "num_key_value_heads"},   // 24 % 3 == 0, but 4 KV heads % 3 != 0
                        {16, "num_attention_heads"},  // 24 % 16 != 0
                        {0, "tensor_parallel_size"}};
  for (const Case& c : cases) {
    auto violation = CheckTensorParallel(Qwen27B(), c.tp);
    ASSERT_TRUE(violation) << "tp " << c.tp;
    EXPECT_EQ(violation->field, c.field);
  }
  for (int tp : {1, 2, 4, 8})
    EXPECT_FALSE(CheckTensorParallel(Qwen27B(), tp)) << tp;
}

TEST(CacheShapes, RefusesTpThatDoesNotDivideTheLinearHeads) {
  ModelCard card = Qwen27B();
  card.attention.num_q_heads = 48;
  card.attention.num_kv_heads = 12;
  card.linear->num_k_heads = 16;  // at tp 6: Q 48 and KV 12 divide, key heads 16 do not
  auto violation = CheckTensorParallel(card, 6);
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->field, "linear_num_key_heads");
  card.linear->num_k_heads = 12;
  card.linear->num_v_heads = 40;
  violation = CheckTensorParallel(card, 6);
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->field, "linear_num_value_heads");
}

TEST(CacheShapes, KvHeadsAreReplicatedOnlyInWholeCopies) {
  ModelCard card = ModelCatalog(ModelsDir()).Load("llama-3.1-8b");  // 32 Q, 8 KV heads
  EXPECT_EQ(KvHeadsPerRank(card, 16), 1);
  EXPECT_FALSE(CheckTensorParallel(card, 16));
  card.attention.num_kv_heads = 6;
  card.attention.num_q_heads = 48;
  auto violation = CheckTensorParallel(card, 16);  // 16 > 6 and 16 % 6 != 0
  ASSERT_TRUE(violation);
  EXPECT_EQ(violation->field, "num_key_value_heads");
}

}  // namespace
}  // namespace fleetsim
