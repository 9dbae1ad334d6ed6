#include "engine/engine_settings.h"

namespace fleetsim::engine_settings {

const std::vector<SettingDoc>& EngineSectionSettings() {
  static const std::vector<SettingDoc> settings{
      DocOf(kMaxNumSeqs),
      DocOf(kMaxNumBatchedTokens),
      DocOf(kMaxModelLen),
      DocOf(kEnablePrefixCaching),
      DocOf(kEnableChunkedPrefill),
      DocOf(kAsyncScheduling),
      DocOf(kBlockSize),
      DocOf(kLongPrefillTokenThreshold),
      DocOf(kKvCacheDtype),
      DocOf(kMambaCacheDtype),
      DocOf(kMambaSsmCacheDtype),
      DocOf(kAttentionBackend),
      DocOf(kDecodeKernel),
      DocOf(kQuantization),
      DocOf(kQuantizationGroupSize),
      DocOf(kGpuMemoryUtilization),
      DocOf(kKvCacheMemoryBytes),
      DocOf(kNumGpuBlocks),
      DocOf(kStepOverheadUs),
      DocOf(kSpeculativeConfig),
  };
  return settings;
}

const std::vector<SettingDoc>& SpeculativeConfigSettings() {
  static const std::vector<SettingDoc> settings{
      DocOf(kSpeculativeMethod),
      DocOf(kNumSpeculativeTokens),
      DocOf(kSpeculativeAcceptance),
  };
  return settings;
}

}  // namespace fleetsim::engine_settings
