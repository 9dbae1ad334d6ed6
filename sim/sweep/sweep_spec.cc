#include "sweep/sweep_spec.h"

#include <cmath>
#include <filesystem>

#include "cluster/cluster_config.h"
#include "cluster/routing_policy.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "core/setting.h"
#include "core/sim_time.h"
#include "core/yaml_section.h"
#include "engine/dp_setup.h"
#include "model/hardware.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr std::pair<SweepObjective, std::string_view> kObjectiveNames[] = {
    {SweepObjective::kGoodputPerGpu, "goodput_per_gpu"},
    {SweepObjective::kGoodputPerDollar, "goodput_per_dollar"},
    {SweepObjective::kMaxRate, "max_rate"},
};

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names)
    out += (out.empty() ? "" : ", ") + name;
  return out;
}

// A path from the spec, made absolute against the spec's folder.
std::string Resolve(const fs::path& spec_dir, const std::string& path) {
  const fs::path p(path);
  return fs::weakly_canonical(p.is_absolute() ? p : spec_dir / p).string();
}

// One element of an axis list, with where it is.
template <typename T>
struct AxisValue {
  T value;
  int line;
  std::string field;  // "axes.tp[2]"
};

// The values of axis `key` (absent: none). Each must be a scalar of type T, the list
// non-empty and free of duplicates.
template <typename T>
std::vector<AxisValue<T>> ReadAxis(const YamlSection& axes, std::string_view key) {
  std::vector<AxisValue<T>> out;
  if (!axes.Has(key)) return out;
  const YAML::Node list = axes.node()[std::string(key)];
  if (!list.IsSequence()) axes.Fail(key, "expected a list of values, e.g. [1, 2]");
  if (list.size() == 0) axes.Fail(key, "needs at least one value (or leave the axis out)");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node element = list[i];
    AxisValue<T> v{T{}, element.Mark().line + 1,
                   axes.FieldPath(key) + "[" + std::to_string(i) + "]"};
    if (!element.IsScalar() || !YAML::convert<T>::decode(element, v.value)) {
      const std::string got = element.IsScalar() ? "'" + element.Scalar() + "'" : "not a scalar";
      throw InputError(axes.file(), v.line, v.field,
                       std::string("expected ") + ExpectedYamlType<T>() + ", got " + got);
    }
    for (const AxisValue<T>& earlier : out) {
      if (earlier.value == v.value) {
        throw InputError(axes.file(), v.line, v.field,
                         "duplicate value '" + element.Scalar() + "' (also " + earlier.field + ")");
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

// Each value of an axis that sweeps a setting, against the setting's own range.
template <typename T, typename S>
void CheckAxis(const YamlSection& axes, const std::vector<AxisValue<T>>& values,
               const Setting<S>& setting) {
  for (const AxisValue<T>& v : values) {
    setting.Check(v.value, [&](std::string_view, const std::string& message) {
      return InputError(axes.file(), v.line, v.field, message);
    });
  }
}

template <typename T>
std::vector<T> Values(const std::vector<AxisValue<T>>& axis) {
  std::vector<T> out;
  for (const AxisValue<T>& v : axis)
    out.push_back(v.value);
  return out;
}

// The GPUs per node of the group's pool when its hardware is `hardware`: the pool's own
// gpus_per_node when the base config gives one, else the catalog's.
int GpusPerNode(const YAML::Node& base, const InstanceGroupConfig& group,
                const HardwareSpec& hardware) {
  const YAML::Node pools = base["node_pools"];
  if (pools && pools.IsSequence()) {
    for (const YAML::Node& pool : pools) {
      if (pool["name"] && pool["name"].Scalar() == group.pool && pool["gpus_per_node"] &&
          !pool["gpus_per_node"].IsNull()) {
        return pool["gpus_per_node"].as<int>();
      }
    }
  }
  return static_cast<int>(hardware.gpus_per_node.value);
}

// A hardware axis value: a catalog name, or a path to a hardware file (made absolute).
std::string ReadHardwareValue(const YamlSection& axes, const fs::path& spec_dir,
                              const AxisValue<std::string>& v, HardwareSpec* loaded = nullptr) {
  std::string name = v.value;
  if (name.find('/') != std::string::npos) name = Resolve(spec_dir, name);
  try {
    const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), name);
    if (loaded) *loaded = hardware;
  } catch (const InputError& e) {
    throw InputError(axes.file(), v.line, v.field,
                     e.line() > 0 ? std::string(e.what())
                                  : "unknown hardware '" + v.value +
                                        "' (catalog: " + Join(HardwareNames(HardwareCatalogDir())) +
                                        "; or a path to a hardware YAML file)");
  }
  return name;
}

// serving, pd_split, decode_tp, decode_hardware: only with a decode_group.
void ReadDisaggregationAxes(const YamlSection& axes, const fs::path& spec_dir, SweepSpec& spec) {
  for (const char* key : {"serving", "pd_split", "decode_tp", "decode_hardware"}) {
    if (axes.Has(key) && spec.decode_group.empty())
      axes.Fail(key, "needs decode_group: the base's decode group (and group: its prefill group)");
  }
  for (const AxisValue<std::string>& v : ReadAxis<std::string>(axes, "serving")) {
    if (v.value != "colocated" && v.value != "disaggregated")
      throw InputError(axes.file(), v.line, v.field,
                       "unknown serving '" + v.value + "' (accepted: colocated, disaggregated)");
    spec.axes.serving.push_back(v.value);
  }
  for (const AxisValue<std::string>& v : ReadAxis<std::string>(axes, "pd_split")) {
    if (!ParsePdSplit(v.value))
      throw InputError(axes.file(), v.line, v.field,
                       "expected 'P:D', two positive integers (the prefill and decode shares of "
                       "gpu_budget), got '" +
                           v.value + "'");
    spec.axes.pd_split.push_back(v.value);
  }
  const auto decode_tp = ReadAxis<int>(axes, "decode_tp");
  CheckAxis(axes, decode_tp, cluster_settings::kGroupTp);
  spec.axes.decode_tp = Values(decode_tp);
  for (const AxisValue<std::string>& v : ReadAxis<std::string>(axes, "decode_hardware"))
    spec.axes.decode_hardware.push_back(ReadHardwareValue(axes, spec_dir, v));
}

void ReadAxes(const YamlSection& axes, const fs::path& spec_dir, const YAML::Node& base_yaml,
              const ClusterConfig& base, const InstanceGroupConfig& group, SweepSpec& spec) {
  using namespace cluster_settings;
  using namespace engine_settings;
  axes.RejectUnknownKeys({kGroupTp.key(), kGroupDp.key(), kEnablePrefixCaching.key(),
                          kMaxNumBatchedTokens.key(), kMaxNumSeqs.key(), kBlockSize.key(),
                          kGatewayPolicy.key(), kCapacityWeighted.key(), "hardware", "rate_scale",
                          "serving", "pd_split", "decode_tp", "decode_hardware"});
  ReadDisaggregationAxes(axes, spec_dir, spec);
  const auto tp = ReadAxis<int>(axes, kGroupTp.key());
  const auto dp = ReadAxis<int>(axes, kGroupDp.key());
  const auto caching = ReadAxis<bool>(axes, kEnablePrefixCaching.key());
  const auto batched = ReadAxis<int>(axes, kMaxNumBatchedTokens.key());
  const auto seqs = ReadAxis<int>(axes, kMaxNumSeqs.key());
  const auto blocks = ReadAxis<int>(axes, kBlockSize.key());
  const auto policy = ReadAxis<std::string>(axes, kGatewayPolicy.key());
  const auto weighted = ReadAxis<bool>(axes, kCapacityWeighted.key());
  const auto hardware = ReadAxis<std::string>(axes, "hardware");
  const auto rate = ReadAxis<double>(axes, "rate_scale");

  CheckAxis(axes, tp, kGroupTp);
  CheckAxis(axes, dp, kGroupDp);
  for (const AxisValue<int>& v : dp) {
    // The cluster config's rules for dp > 1 (cluster/cluster_config.cc), here at the value.
    if (v.value == 1) continue;
    if (!spec.decode_group.empty() || group.role != InstanceRole::kMixed) {
      throw InputError(axes.file(), v.line, v.field,
                       "dp > 1 needs a mixed group (prefill/decode disaggregation with data "
                       "parallelism is not simulated)");
    }
    const ModelCard card = ModelCatalog(ModelsDir()).Load(group.model);
    if (auto why = DpExpertParallelViolation(card, v.value, true))
      throw InputError(axes.file(), v.line, v.field, *why);
  }
  CheckAxis(axes, batched, kMaxNumBatchedTokens);
  CheckAxis(axes, seqs, kMaxNumSeqs);
  CheckAxis(axes, blocks, kBlockSize);
  for (const AxisValue<std::string>& v : policy) {
    if (!ParseRoutingPolicy(v.value)) {
      throw InputError(axes.file(), v.line, v.field,
                       "unknown routing policy '" + v.value +
                           "' (accepted: " + Join(RoutingPolicyNames()) + ")");
    }
  }
  for (const AxisValue<double>& v : rate) {
    if (!(v.value > 0) || !std::isfinite(v.value))
      throw InputError(axes.file(), v.line, v.field, "must be a positive number");
  }
  // Each hardware must exist, and every TP must fit one of its nodes.
  std::vector<std::pair<HardwareSpec, std::string>> pools;  // hardware, and where it is named
  for (const AxisValue<std::string>& v : hardware) {
    HardwareSpec loaded;
    spec.axes.hardware.push_back(ReadHardwareValue(axes, spec_dir, v, &loaded));
    spec.hardware_node_gpus.push_back(GpusPerNode(base_yaml, group, loaded));
    pools.emplace_back(std::move(loaded), v.field);
  }
  for (const NodePoolConfig& pool : base.pools) {
    if (pool.name == group.pool) spec.base_node_gpus = pool.gpus_per_node;
  }
  if (pools.empty()) {
    for (const NodePoolConfig& pool : base.pools) {
      if (pool.name == group.pool) pools.emplace_back(pool.spec, "");
    }
  }
  for (const AxisValue<int>& v : tp) {
    for (const auto& [spec_hw, where] : pools) {
      const int per_node = GpusPerNode(base_yaml, group, spec_hw);
      if (v.value > per_node) {
        throw InputError(axes.file(), v.line, v.field,
                         "TP " + std::to_string(v.value) + " exceeds the " +
                             std::to_string(per_node) + " GPUs of one " + spec_hw.name + " node" +
                             (where.empty() ? "" : " (" + where + ")") +
                             " (tensor parallelism stays inside a node)");
      }
    }
  }
  spec.axes.tp = Values(tp);
  spec.axes.dp = Values(dp);
  spec.axes.enable_prefix_caching = Values(caching);
  spec.axes.max_num_batched_tokens = Values(batched);
  spec.axes.max_num_seqs = Values(seqs);
  spec.axes.block_size = Values(blocks);
  spec.axes.policy = Values(policy);
  spec.axes.capacity_weighted = Values(weighted);
  spec.axes.rate_scale = Values(rate);
}

void ReadObjective(const YamlSection& s, SweepSpec& spec) {
  s.RejectUnknownKeys({"kind", "attainment_target", "rate_scale"});
  const std::string kind = s.Get<std::string>("kind");
  bool found = false;
  std::vector<std::string> names;
  for (const auto& [objective, name] : kObjectiveNames) {
    names.emplace_back(name);
    if (name == kind) {
      spec.objective = objective;
      found = true;
    }
  }
  if (!found) s.Fail("kind", "unknown objective '" + kind + "' (accepted: " + Join(names) + ")");
  if (spec.objective != SweepObjective::kMaxRate) {
    for (const char* key : {"attainment_target", "rate_scale"}) {
      if (s.Has(key)) s.Fail(key, "only for kind: max_rate");
    }
    return;
  }
  RateSearch& search = spec.rate_search;
  search.attainment_target = s.GetOr<double>("attainment_target", search.attainment_target);
  if (!(search.attainment_target > 0 && search.attainment_target <= 1))
    s.Fail("attainment_target", "must be in (0, 1] (a fraction of the requests)");
  if (auto rate = s.FindChild("rate_scale")) {
    rate->RejectUnknownKeys({"low", "high", "iterations"});
    search.low = rate->GetOr<double>("low", search.low);
    if (!(search.low > 0) || !std::isfinite(search.low)) rate->Fail("low", "must be positive");
    search.high = rate->GetOr<double>("high", search.high);
    if (!(search.high > search.low) || !std::isfinite(search.high))
      rate->Fail("high", "must be greater than low (" + std::to_string(search.low) + ")");
    search.iterations = rate->GetOr<int>("iterations", search.iterations);
    if (search.iterations < 0 || search.iterations > 60)
      rate->Fail("iterations", "must be between 0 and 60");
  }
}

const InstanceGroupConfig& PickGroup(const YamlSection& doc, const ClusterConfig& base,
                                     SweepSpec& spec) {
  std::vector<std::string> names;
  for (const InstanceGroupConfig& g : base.groups)
    names.push_back(g.name);
  if (auto group = doc.Find<std::string>("group")) {
    for (const InstanceGroupConfig& g : base.groups) {
      if (g.name == *group) {
        spec.group = g.name;
        return g;
      }
    }
    doc.Fail("group", "no instance group '" + *group + "' in " + spec.base +
                          " (groups: " + Join(names) + ")");
  }
  if (base.groups.size() != 1) {
    doc.Fail("group", "required: the base config has several instance groups (" + Join(names) +
                          "); name the one the axes change");
  }
  spec.group = base.groups[0].name;
  return base.groups[0];
}

}  // namespace

std::optional<std::pair<int, int>> ParsePdSplit(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto number = [](std::string_view digits) -> std::optional<int> {
    if (digits.empty() || digits.size() > 6) return std::nullopt;
    int value = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return value > 0 ? std::optional<int>(value) : std::nullopt;
  };
  const auto p = number(text.substr(0, colon));
  const auto d = number(text.substr(colon + 1));
  if (!p || !d) return std::nullopt;
  return std::make_pair(*p, *d);
}

std::string_view SweepObjectiveName(SweepObjective objective) {
  for (const auto& [o, name] : kObjectiveNames) {
    if (o == objective) return name;
  }
  return "?";
}

SweepSpec LoadSweepSpec(const std::string& path) {
  const YamlSection doc = LoadYamlFile(path);
  if (!doc.node().IsMap()) {
    throw InputError(path, doc.line(), "", "expected a mapping of sweep spec keys");
  }
  doc.RejectUnknownKeys({"name", "base", "group", "decode_group", "workload", "format", "window",
                         "seed", "gpu_budget", "axes", "objective"});
  SweepSpec spec;
  spec.file = path;
  const fs::path spec_dir = fs::absolute(path).parent_path();
  spec.name = doc.GetOr<std::string>("name", fs::path(path).stem().string());
  if (spec.name.empty() || spec.name.find('/') != std::string::npos || spec.name == "." ||
      spec.name == "..") {
    doc.Fail("name", "must be a non-empty name without '/' (it names the output folder)");
  }

  spec.base = Resolve(spec_dir, doc.Get<std::string>("base"));
  if (!fs::is_regular_file(spec.base)) doc.Fail("base", "no such cluster config " + spec.base);
  spec.workload = Resolve(spec_dir, doc.Get<std::string>("workload"));
  if (!fs::is_regular_file(spec.workload))
    doc.Fail("workload", "no such file " + QuotePath(spec.workload));
  spec.format = doc.GetOr<std::string>("format", spec.format);

  if (auto window = doc.FindChild("window")) {
    window->RejectUnknownKeys({"duration_s", "num_requests"});
    spec.duration_s = window->Find<double>("duration_s");
    if (spec.duration_s && !(*spec.duration_s > 0))
      window->Fail("duration_s", "must be positive (seconds)");
    if (spec.duration_s) {
      if (auto violation = SimSecondsViolation(*spec.duration_s))
        window->Fail("duration_s", *violation);
    }
    spec.num_requests = window->Find<int64_t>("num_requests");
    if (spec.num_requests && *spec.num_requests < 1)
      window->Fail("num_requests", "must be at least 1");
  }
  const int64_t seed = doc.GetOr<int64_t>("seed", 0);
  if (seed < 0) doc.Fail("seed", "must not be negative");
  spec.seed = static_cast<uint64_t>(seed);
  spec.gpu_budget = doc.Find<int>("gpu_budget");
  if (spec.gpu_budget && *spec.gpu_budget < 1) doc.Fail("gpu_budget", "must be at least 1");

  // The base must load as it is: its own errors name its own file and line.
  const ClusterConfig base = LoadClusterConfig(spec.base);
  const InstanceGroupConfig& group = PickGroup(doc, base, spec);
  spec.base_tp = group.engine.tensor_parallel_size;
  spec.base_dp = group.dp;
  spec.base_replicas = group.replicas;
  for (const NodePoolConfig& pool : base.pools) {
    if (pool.name == group.pool) spec.base_node_gpus = pool.gpus_per_node;
  }
  if (auto decode = doc.Find<std::string>("decode_group")) {
    const InstanceGroupConfig* found = nullptr;
    for (const InstanceGroupConfig& g : base.groups) {
      if (g.name == *decode) found = &g;
    }
    if (!found || found->role != InstanceRole::kDecode)
      doc.Fail("decode_group", "no decode group '" + *decode + "' in " + spec.base);
    if (group.role != InstanceRole::kPrefill)
      doc.Fail("group", "with decode_group, the prefill group of " + spec.base + " ('" +
                            spec.group + "' has role " + std::string(InstanceRoleName(group.role)) +
                            ")");
    spec.decode_group = *decode;
    spec.base_decode_tp = found->engine.tensor_parallel_size;
  }

  if (auto objective = doc.FindChild("objective")) ReadObjective(*objective, spec);
  if (auto axes = doc.FindChild("axes")) {
    ReadAxes(*axes, spec_dir, YAML::LoadFile(spec.base), base, group, spec);
    if (spec.objective == SweepObjective::kMaxRate && !spec.axes.rate_scale.empty()) {
      axes->Fail("rate_scale",
                 "not with objective max_rate: the bisection picks each point's rate scale");
    }
  }
  return spec;
}

}  // namespace fleetsim
