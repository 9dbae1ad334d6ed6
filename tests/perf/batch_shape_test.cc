// BatchShape: a step's prefill chunks and decodes reduced to the table coordinates of
// ENGINE_SEMANTICS.md section 9 (perf/batch_shape.h), with the values worked by hand.
#include "perf/batch_shape.h"

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(BatchShape, AnEmptyBatchHasZeroCoordinates) {
  const BatchShape batch;
  EXPECT_EQ(batch.total_tokens(), 0);
  EXPECT_EQ(batch.num_prefills(), 0);
  EXPECT_EQ(batch.sampled_sequences(), 0);
  EXPECT_EQ(batch.prefill_key(), 0.0);
  EXPECT_EQ(batch.mean_decode_context(), 0.0);
  EXPECT_EQ(batch.gdn_scan_chunks(), 0);
  EXPECT_EQ(batch.min_decode_context(), 0);
  EXPECT_EQ(batch.max_decode_context(), 0);
}

TEST(BatchShape, UniformDecodesHaveNoSpread) {
  BatchShape batch;
  batch.AddUniformDecodes(64, 1024);
  EXPECT_EQ(batch.num_decodes(), 64);
  EXPECT_DOUBLE_EQ(batch.mean_decode_context(), 1024);
  EXPECT_EQ(batch.min_decode_context(), 1024);
  EXPECT_EQ(batch.max_decode_context(), 1024);
  batch.AddUniformDecodes(0, 99);  // nothing
  EXPECT_EQ(batch.min_decode_context(), 1024);
}

TEST(BatchShape, PrefillKeyIsTheTokenWeightedMeanPosition) {
  BatchShape batch;
  batch.AddPrefill(100, 0, true);    // attends, on average, to 0 + 100 / 2 = 50
  batch.AddPrefill(50, 200, false);  // 200 + 50 / 2 = 225
  EXPECT_EQ(batch.prefill_tokens(), 150);
  EXPECT_EQ(batch.num_prefills(), 2);
  // (100 x 50 + 50 x 225) / 150 = (5,000 + 11,250) / 150 = 108.33...
  EXPECT_DOUBLE_EQ(batch.prefill_key(), 16250.0 / 150.0);
  EXPECT_EQ(batch.sampled_sequences(), 1);  // only the chunk that ends its prompt samples
  EXPECT_EQ(batch.total_tokens(), 150);
  EXPECT_EQ(batch.num_decodes(), 0);
}

TEST(BatchShape, DecodesCountOneTokenEachAtTheirMeanContext) {
  BatchShape batch;
  batch.AddDecode(1000);
  batch.AddDecode(3000);
  EXPECT_EQ(batch.num_decodes(), 2);
  EXPECT_DOUBLE_EQ(batch.mean_decode_context(), 2000.0);
  batch.AddDecodes(2, 1000, 400, 600);  // two more, contexts summing to 1,000: 5,000 / 4
  EXPECT_EQ(batch.num_decodes(), 4);
  EXPECT_DOUBLE_EQ(batch.mean_decode_context(), 1250.0);
  EXPECT_EQ(batch.min_decode_context(), 400);
  EXPECT_EQ(batch.max_decode_context(), 3000);
  batch.AddPrefill(10, 5, true);
  EXPECT_EQ(batch.total_tokens(), 14);
  EXPECT_EQ(batch.sampled_sequences(), 5);
  EXPECT_DOUBLE_EQ(batch.mean_decode_context(), 1250.0);  // prefills do not move it
  EXPECT_DOUBLE_EQ(batch.prefill_key(), 10.0);            // 5 + 10 / 2
}

TEST(BatchShape, AddDecodesIsTheSameShapeAsAddingEach) {
  BatchShape each, bulk;
  for (const int64_t context : {7, 700, 7000})
    each.AddDecode(context);
  bulk.AddDecodes(3, 7 + 700 + 7000, 7, 7000);
  EXPECT_EQ(each.num_decodes(), bulk.num_decodes());
  EXPECT_EQ(each.min_decode_context(), bulk.min_decode_context());
  EXPECT_EQ(each.max_decode_context(), bulk.max_decode_context());
  EXPECT_EQ(each.total_tokens(), bulk.total_tokens());
  EXPECT_EQ(each.sampled_sequences(), bulk.sampled_sequences());
  EXPECT_DOUBLE_EQ(each.mean_decode_context(), bulk.mean_decode_context());
}

TEST(BatchShape, GdnScanChunksAre64TokensPerSequenceRoundedUp) {
  BatchShape batch;
  batch.AddPrefill(1, 0, false);    // 1
  batch.AddPrefill(64, 0, false);   // 1
  batch.AddPrefill(65, 64, false);  // 2
  batch.AddPrefill(640, 0, true);   // 10
  EXPECT_EQ(batch.gdn_scan_chunks(), 14);
  batch.AddDecode(100);  // decodes add no scan chunks
  EXPECT_EQ(batch.gdn_scan_chunks(), 14);
}

}  // namespace
}  // namespace fleetsim
