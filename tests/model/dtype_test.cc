// Dtypes: sizes, canonical names, and the Hugging Face and vLLM spellings ParseDtype takes.
#include "model/dtype.h"

#include <string>

#include <gtest/gtest.h>

namespace fleetsim {
namespace {

TEST(Dtype, BytesPerElement) {
  EXPECT_EQ(BytesOf(Dtype::kBfloat16), 2);
  EXPECT_EQ(BytesOf(Dtype::kFloat16), 2);
  EXPECT_EQ(BytesOf(Dtype::kFloat32), 4);
  EXPECT_EQ(BytesOf(Dtype::kFp8), 1);
}

TEST(Dtype, EverySpellingParses) {
  for (const char* name : {"bfloat16", "bf16"})
    EXPECT_EQ(ParseDtype(name), Dtype::kBfloat16) << name;
  for (const char* name : {"float16", "fp16", "half"})
    EXPECT_EQ(ParseDtype(name), Dtype::kFloat16) << name;
  for (const char* name : {"float32", "fp32", "float"})
    EXPECT_EQ(ParseDtype(name), Dtype::kFloat32) << name;
  for (const char* name : {"fp8", "fp8_e4m3", "float8_e4m3fn"})
    EXPECT_EQ(ParseDtype(name), Dtype::kFp8) << name;
}

TEST(Dtype, CanonicalNamesRoundTrip) {
  for (const Dtype dtype : {Dtype::kBfloat16, Dtype::kFloat16, Dtype::kFloat32, Dtype::kFp8}) {
    const std::string name(NameOf(dtype));
    EXPECT_EQ(ParseDtype(name), dtype) << name;
  }
  EXPECT_EQ(NameOf(Dtype::kBfloat16), "bfloat16");
  EXPECT_EQ(NameOf(Dtype::kFp8), "fp8");
}

TEST(Dtype, OtherSpellingsAreRefused) {
  // Names are exact: no case folding, no torch. prefix, no dtypes fleetsim does not model.
  for (const char* name :
       {"", "BF16", "Bfloat16", "torch.bfloat16", "auto", "int8", "fp4", "float64", "fp8_e5m2"})
    EXPECT_EQ(ParseDtype(name), std::nullopt) << name;
}

}  // namespace
}  // namespace fleetsim
