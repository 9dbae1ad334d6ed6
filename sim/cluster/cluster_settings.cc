#include "cluster/cluster_settings.h"

#include <stdexcept>
#include <string>

namespace fleetsim::cluster_settings {

std::vector<std::string_view> SettingSection::Keys() const {
  std::vector<std::string_view> keys;
  keys.reserve(settings.size());
  for (const SettingDoc& doc : settings)
    keys.push_back(doc.spec.key);
  return keys;
}

const std::vector<SettingSection>& ClusterConfigSections() {
  static const std::vector<SettingSection> sections{
      {"",
       {DocOf(kName), DocOf(kNodePools), DocOf(kInstanceGroups), DocOf(kGateways), DocOf(kLatency),
        DocOf(kSlo), DocOf(kTimeseries)}},
      {"node_pools",
       {DocOf(kPoolName), DocOf(kPoolHardware), DocOf(kPoolNodes), DocOf(kPoolGpusPerNode),
        DocOf(kPoolPlacement)}},
      {"instance_groups",
       {DocOf(kGroupName), DocOf(kGroupModel), DocOf(kGroupServedModelName), DocOf(kGroupPool),
        DocOf(kGroupHardware), DocOf(kGroupBundle), DocOf(kGroupTp), DocOf(kGroupDp),
        DocOf(kGroupEnableExpertParallel), DocOf(kGroupReplicas), DocOf(kGroupEngine),
        DocOf(kGroupRole)}},
      {"engine", engine_settings::EngineSectionSettings()},
      {"speculative_config", engine_settings::SpeculativeConfigSettings()},
      {"gateways",
       {DocOf(kGatewayCount), DocOf(kGatewayPolicy), DocOf(kGatewayDecodePolicy),
        DocOf(kGatewayDecodeScope), DocOf(kCapacityWeighted), DocOf(kStalenessS),
        DocOf(kPrefixBlocks), DocOf(kVirtualNodes), DocOf(kOverloadMargin), DocOf(kOverloadRatio)}},
      {"latency", {DocOf(kGatewayToInstanceUs), DocOf(kInstanceToClientUs)}},
      {"slo", {DocOf(kSloTtftS), DocOf(kSloTpotS)}},
      {"timeseries", {DocOf(kTimeseriesIntervalS)}},
  };
  return sections;
}

const SettingSection& ClusterConfigSection(std::string_view name) {
  for (const SettingSection& section : ClusterConfigSections()) {
    if (section.name == name) return section;
  }
  throw std::logic_error("no cluster config section '" + std::string(name) + "'");
}

}  // namespace fleetsim::cluster_settings
