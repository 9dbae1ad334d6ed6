#include "model/attention_backend.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace fleetsim {
namespace {

constexpr std::array<std::pair<std::string_view, DecodeGrid>, 4> kGrids{{
    {"flash_split", DecodeGrid::kFlashSplit},
    {"partitioned", DecodeGrid::kPartitioned},
    {"per_sequence_head", DecodeGrid::kPerSequenceHead},
    {"split_kv_heuristic", DecodeGrid::kSplitKvHeuristic},
}};

std::string JoinInts(const std::vector<int>& values, std::string_view separator = ", ") {
  std::string text;
  for (int v : values)
    text += (text.empty() ? "" : std::string(separator)) + std::to_string(v);
  return text;
}

std::string JoinText(const std::vector<std::string>& values) {
  std::string text;
  for (const std::string& v : values)
    text += (text.empty() ? "" : ", ") + v;
  return text;
}

std::string RequireSource(const YamlSection& item) {
  const std::string source = item.Get<std::string>("source");
  if (source.empty()) item.Fail("source", "must name where the rule comes from");
  return source;
}

SizeRule ReadSizeRule(const YamlSection& parent, std::string_view key) {
  const YamlSection item = parent.Child(key);
  item.RejectUnknownKeys({"value", "multiple_of", "min", "max", "source"});
  SizeRule rule;
  rule.values = item.GetList<int>("value");
  if (rule.values.empty()) item.Fail("value", "must list at least one size");
  for (std::size_t i = 0; i < rule.values.size(); ++i) {
    if (rule.values[i] <= 0) item.Fail("value", "sizes must be positive");
    if (i > 0 && rule.values[i] <= rule.values[i - 1]) {
      item.Fail("value", "sizes must be listed in ascending order, without repeats");
    }
  }
  rule.multiple_of = item.GetOr<bool>("multiple_of", false);
  if (rule.multiple_of && rule.values.size() != 1) {
    item.Fail("multiple_of", "takes exactly one base value (vLLM's MultipleOf(n))");
  }
  rule.min = item.GetOr<int>("min", 0);
  if (rule.min < 0) item.Fail("min", "must not be negative");
  rule.max = item.GetOr<int>("max", 0);
  if (rule.max < 0) item.Fail("max", "must not be negative");
  rule.source = RequireSource(item);
  return rule;
}

KernelGate ReadGate(const YamlSection& kernel) {
  KernelGate gate;
  const std::optional<YamlSection> found = kernel.FindChild("requires");
  if (!found) return gate;
  const YamlSection& r = *found;
  r.RejectUnknownKeys({"head_sizes", "kernel_block_sizes", "power_of_two_block", "gqa_ratio",
                       "max_model_len", "kv_cache_dtypes", "sliding_window", "source"});
  gate.head_sizes = r.GetList<int>("head_sizes");
  gate.kernel_block_sizes = r.GetList<int>("kernel_block_sizes");
  gate.power_of_two_block = r.GetOr<bool>("power_of_two_block", false);
  if (r.Has("gqa_ratio")) {
    const std::vector<int> range = r.GetList<int>("gqa_ratio");
    if (range.size() != 2 || range[0] <= 0 || range[1] < range[0]) {
      r.Fail("gqa_ratio", "must be [min, max], 1 <= min <= max");
    }
    gate.min_gqa_ratio = range[0];
    gate.max_gqa_ratio = range[1];
  }
  gate.max_model_len = r.GetOr<int64_t>("max_model_len", 0);
  gate.kv_cache_dtypes = r.GetList<std::string>("kv_cache_dtypes");
  if (r.Has("sliding_window")) {
    if (r.Get<bool>("sliding_window")) {
      r.Fail("sliding_window", "only `false` (the kernel refuses sliding windows) is a condition");
    }
    gate.no_sliding_window = true;
  }
  gate.source = RequireSource(r);
  return gate;
}

DecodeKernelSpec ReadDecodeKernel(const YamlSection& decode, const std::string& name) {
  const YamlSection k = decode.Child(name);
  k.RejectUnknownKeys({"grid", "default", "requires", "grouped_heads_only", "partition_tokens",
                       "max_splits", "program_rate_bytes_per_s", "source"});
  DecodeKernelSpec spec;
  spec.name = name;
  const std::string grid = k.Get<std::string>("grid");
  const auto found = std::find_if(kGrids.begin(), kGrids.end(),
                                  [&](const auto& entry) { return entry.first == grid; });
  if (found == kGrids.end()) {
    k.Fail("grid", "unknown grid '" + grid +
                       "' (accepted: flash_split, partitioned, per_sequence_head, "
                       "split_kv_heuristic)");
  }
  spec.grid = found->second;
  spec.default_route = k.GetOr<bool>("default", true);
  spec.gate = ReadGate(k);
  spec.split_grouped_heads_only = k.GetOr<bool>("grouped_heads_only", false);
  spec.partition_tokens = k.GetOr<int>("partition_tokens", 0);
  if (spec.grid == DecodeGrid::kPartitioned && spec.partition_tokens <= 0) {
    k.Fail("partition_tokens", "a partitioned grid needs its partition size in tokens (> 0)");
  }
  spec.max_splits = k.GetOr<int>("max_splits", 0);
  if (spec.grid == DecodeGrid::kSplitKvHeuristic && spec.max_splits <= 0) {
    k.Fail("max_splits", "a split-KV heuristic grid needs its split cap (> 0)");
  }
  if (auto rate = k.FindChild("program_rate_bytes_per_s")) {
    rate->RejectUnknownKeys({"value", "source"});
    const double value = rate->Get<double>("value");
    if (!(value > 0) || !std::isfinite(value)) {
      rate->Fail("value", "must be a positive, finite number (bytes per second)");
    }
    spec.program_rate_bytes_per_s = value;
    spec.program_rate_source = RequireSource(*rate);
  }
  spec.source = RequireSource(k);
  return spec;
}

BackendSpec ReadBackend(const YamlSection& backends, const std::string& name) {
  const YamlSection b = backends.Child(name);
  b.RejectUnknownKeys(
      {"kernel_block_sizes", "head_sizes", "kv_cache_dtypes", "query_tile", "decode"});
  BackendSpec spec;
  spec.name = name;
  spec.kernel_block_sizes = ReadSizeRule(b, "kernel_block_sizes");
  spec.head_sizes = ReadSizeRule(b, "head_sizes");
  const YamlSection dtypes = b.Child("kv_cache_dtypes");
  dtypes.RejectUnknownKeys({"value", "source"});
  spec.kv_cache_dtypes = dtypes.GetList<std::string>("value");
  if (spec.kv_cache_dtypes.empty()) dtypes.Fail("value", "must list the accepted dtypes");
  spec.kv_cache_dtypes_source = RequireSource(dtypes);
  if (!b.Has("query_tile")) {
    b.Fail("query_tile", "missing required figure ({rows: 64, packs_gqa: false, source: ...})");
  }
  const YamlSection tile = b.Child("query_tile");
  tile.RejectUnknownKeys({"rows", "packs_gqa", "source"});
  spec.query_tile_rows = tile.Get<int>("rows");
  if (spec.query_tile_rows <= 0) tile.Fail("rows", "must be positive");
  spec.packs_gqa = tile.Get<bool>("packs_gqa");
  spec.query_tile_source = RequireSource(tile);
  const YamlSection decode = b.Child("decode");
  for (const std::string& kernel : decode.Keys())
    spec.decode.push_back(ReadDecodeKernel(decode, kernel));
  if (std::none_of(spec.decode.begin(), spec.decode.end(), [](const DecodeKernelSpec& k) {
        return k.default_route && k.gate.source.empty();
      })) {
    b.Fail("decode", "needs a default-routed kernel without conditions (the fallback)");
  }
  return spec;
}

bool Contains(const std::vector<std::string>& values, std::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool Contains(const std::vector<int>& values, int value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

std::string Either(const std::vector<int>& values) {
  return values.size() == 1 ? std::to_string(values.front()) : JoinInts(values, " or ");
}

}  // namespace

std::string_view NameOf(DecodeGrid grid) {
  for (const auto& [name, value] : kGrids) {
    if (value == grid) return name;
  }
  return "?";
}

bool SizeRule::Admits(int size) const {
  if (size <= 0 || size < min || (max > 0 && size > max)) return false;
  if (multiple_of) return size % values.front() == 0;
  return Contains(values, size);
}

std::string SizeRule::Text() const {
  std::string text;
  if (!multiple_of) {
    text = JoinInts(values);
  } else if (values.front() > 1) {
    text = "multiples of " + std::to_string(values.front());
  } else {
    text = "any";
  }
  if (min > 0) text += " from " + std::to_string(min);
  if (max > 0) text += " up to " + std::to_string(max);
  return text;
}

std::optional<int> BackendSpec::KernelBlockSize(int block) const {
  if (kernel_block_sizes.Admits(block)) return block;
  // vLLM select_common_block_size: the largest supported size that divides the block.
  for (auto it = kernel_block_sizes.values.rbegin(); it != kernel_block_sizes.values.rend(); ++it) {
    if (block % *it == 0) return *it;
  }
  return std::nullopt;
}

const DecodeKernelSpec* BackendSpec::FindDecodeKernel(std::string_view kernel) const {
  for (const DecodeKernelSpec& k : decode) {
    if (k.name == kernel) return &k;
  }
  return nullptr;
}

const BackendSpec* AttentionCatalog::Find(std::string_view backend) const {
  for (const BackendSpec& b : backends) {
    if (b.name == backend) return &b;
  }
  return nullptr;
}

AttentionCatalog ReadAttentionCatalog(const YamlSection& doc) {
  if (!doc.Has("attention_backend")) {
    doc.Fail("attention_backend", "missing required section (platform, priority, backends)");
  }
  const YamlSection section = doc.Child("attention_backend");
  section.RejectUnknownKeys({"platform", "priority", "backends"});
  AttentionCatalog catalog;
  const YamlSection platform = section.Child("platform");
  platform.RejectUnknownKeys({"kind", "arch", "reported_processors", "source"});
  catalog.platform = platform.Get<std::string>("kind");
  if (catalog.platform != "cuda" && catalog.platform != "rocm") {
    platform.Fail("kind", "unknown platform '" + catalog.platform + "' (accepted: cuda, rocm)");
  }
  catalog.arch = platform.Get<std::string>("arch");
  catalog.reported_processors = platform.Get<int>("reported_processors");
  if (catalog.reported_processors <= 0) platform.Fail("reported_processors", "must be positive");
  catalog.platform_source = RequireSource(platform);

  const YamlSection priority = section.Child("priority");
  priority.RejectUnknownKeys({"value", "source"});
  catalog.priority = priority.GetList<std::string>("value");
  if (catalog.priority.empty()) priority.Fail("value", "must list vLLM's backends in order");
  catalog.priority_source = RequireSource(priority);

  const YamlSection backends = section.Child("backends");
  for (const std::string& name : backends.Keys())
    catalog.backends.push_back(ReadBackend(backends, name));
  for (const std::string& name : catalog.priority) {
    if (!catalog.Find(name)) {
      priority.Fail("value", "'" + name + "' has no entry under attention_backend.backends");
    }
  }
  return catalog;
}

std::vector<std::string> BackendViolations(const BackendSpec& backend, const AttentionQuery& q) {
  std::vector<std::string> out;
  if (!backend.head_sizes.Admits(q.head_size)) {
    out.push_back("head size " + std::to_string(q.head_size) + " is not among " + backend.name +
                  "'s (" + backend.head_sizes.Text() + ")");
  }
  if (!Contains(backend.kv_cache_dtypes, q.kv_cache_dtype)) {
    out.push_back("kv_cache_dtype " + q.kv_cache_dtype + " is not among " + backend.name + "'s (" +
                  JoinText(backend.kv_cache_dtypes) + ")");
  }
  if (q.requested_block_size && !backend.KernelBlockSize(*q.requested_block_size)) {
    out.push_back("block_size " + std::to_string(*q.requested_block_size) +
                  " is not a multiple of any of " + backend.name + "'s kernel block sizes (" +
                  backend.kernel_block_sizes.Text() + ")");
  }
  return out;
}

std::vector<std::string> KernelViolations(const DecodeKernelSpec& kernel, const AttentionQuery& q,
                                          int kernel_block_size) {
  const KernelGate& g = kernel.gate;
  std::vector<std::string> out;
  if (!g.head_sizes.empty() && !Contains(g.head_sizes, q.head_size)) {
    out.push_back("head size " + std::to_string(q.head_size) + " is not " + Either(g.head_sizes));
  }
  if (!g.kernel_block_sizes.empty() && !Contains(g.kernel_block_sizes, kernel_block_size)) {
    out.push_back("kernel block size " + std::to_string(kernel_block_size) + " is not " +
                  Either(g.kernel_block_sizes));
  }
  if (g.power_of_two_block && (kernel_block_size & (kernel_block_size - 1)) != 0) {
    out.push_back("kernel block size " + std::to_string(kernel_block_size) +
                  " is not a power of two");
  }
  if (g.min_gqa_ratio > 0 && q.kv_heads_per_rank > 0) {
    const int ratio = q.q_heads_per_rank / q.kv_heads_per_rank;
    if (ratio < g.min_gqa_ratio || ratio > g.max_gqa_ratio) {
      out.push_back("GQA ratio " + std::to_string(ratio) + " is outside " +
                    std::to_string(g.min_gqa_ratio) + "-" + std::to_string(g.max_gqa_ratio));
    }
  }
  if (g.max_model_len > 0 && q.max_model_len > g.max_model_len) {
    out.push_back("max_model_len " + std::to_string(q.max_model_len) + " exceeds " +
                  std::to_string(g.max_model_len));
  }
  if (!g.kv_cache_dtypes.empty() && !Contains(g.kv_cache_dtypes, q.kv_cache_dtype)) {
    out.push_back("kv_cache_dtype " + q.kv_cache_dtype + " is not " + JoinText(g.kv_cache_dtypes));
  }
  if (g.no_sliding_window && q.sliding_window > 0) {
    out.push_back("the model has a sliding window");
  }
  return out;
}

namespace {

std::string Conditions(const std::vector<std::string>& violations) {
  std::string text;
  for (const std::string& v : violations)
    text += (text.empty() ? "" : "; ") + v;
  return text;
}

bool IsAuto(const std::string& pin) {
  return pin.empty() || pin == "auto";
}

}  // namespace

BackendChoice SelectAttentionBackend(const AttentionCatalog& catalog, const AttentionQuery& q,
                                     const SettingError& error) {
  BackendChoice choice;
  if (!IsAuto(q.backend_pin)) {
    const BackendSpec* backend = catalog.Find(q.backend_pin);
    if (!backend) {
      std::vector<std::string> names;
      for (const BackendSpec& b : catalog.backends)
        names.push_back(b.name);
      throw error("attention_backend", "'" + q.backend_pin + "' is not a backend vLLM offers on " +
                                           catalog.arch + " (the catalog's: " + JoinText(names) +
                                           ")");
    }
    const std::vector<std::string> violations = BackendViolations(*backend, q);
    if (!violations.empty()) {
      throw error("attention_backend",
                  backend->name + " cannot run this model: " + Conditions(violations));
    }
    choice.backend = backend;
    choice.pinned = true;
    choice.why = "pinned (attention_backend, as VLLM_ATTENTION_BACKEND)";
    return choice;
  }
  std::string skipped;
  for (const std::string& name : catalog.priority) {
    const BackendSpec* backend = catalog.Find(name);
    const std::vector<std::string> violations = BackendViolations(*backend, q);
    if (violations.empty()) {
      choice.backend = backend;
      choice.why = "first valid in vLLM's order on " + catalog.arch + " (" +
                   JoinText(catalog.priority) + ")" +
                   (skipped.empty() ? "" : "; skipped " + skipped);
      return choice;
    }
    skipped += (skipped.empty() ? "" : "; ") + name + ": " + Conditions(violations);
  }
  throw error("attention_backend",
              "no attention backend on " + catalog.arch + " can run this model: " + skipped);
}

DecodeChoice SelectDecodeKernel(const BackendSpec& backend, const AttentionQuery& q,
                                int resolved_block_size, const SettingError& error) {
  DecodeChoice choice;
  const std::optional<int> kernel_block = backend.KernelBlockSize(resolved_block_size);
  if (!kernel_block) {
    throw error("block_size", "the resolved block size " + std::to_string(resolved_block_size) +
                                  " is not a multiple of any of " + backend.name +
                                  "'s kernel block sizes (" + backend.kernel_block_sizes.Text() +
                                  ")");
  }
  choice.kernel_block_size = *kernel_block;
  if (!IsAuto(q.kernel_pin)) {
    const DecodeKernelSpec* kernel = backend.FindDecodeKernel(q.kernel_pin);
    if (!kernel) {
      std::vector<std::string> names;
      for (const DecodeKernelSpec& k : backend.decode)
        names.push_back(k.name);
      throw error("decode_kernel", "'" + q.kernel_pin + "' is not a decode kernel of " +
                                       backend.name + " (its kernels: " + JoinText(names) + ")");
    }
    const std::vector<std::string> violations = KernelViolations(*kernel, q, *kernel_block);
    if (!violations.empty()) {
      throw error("decode_kernel",
                  kernel->name + " cannot run this model: " + Conditions(violations));
    }
    choice.kernel = kernel;
    choice.pinned = true;
    choice.why = "pinned (decode_kernel)";
    return choice;
  }
  std::string skipped;
  for (const DecodeKernelSpec& kernel : backend.decode) {
    if (!kernel.default_route) continue;
    const std::vector<std::string> violations = KernelViolations(kernel, q, *kernel_block);
    if (violations.empty()) {
      choice.kernel = &kernel;
      choice.why = skipped.empty() ? "the backend's first decode kernel whose conditions hold"
                                   : "skipped " + skipped;
      return choice;
    }
    skipped += (skipped.empty() ? "" : "; ") + kernel.name + ": " + Conditions(violations);
  }
  throw error("decode_kernel",
              "no decode kernel of " + backend.name + " can run this model: " + skipped);
}

AttentionPlan DefaultAttentionPlan(const AttentionCatalog& catalog) {
  AttentionQuery q;
  q.head_size = 128;
  q.q_heads_per_rank = 32;
  q.kv_heads_per_rank = 8;
  q.max_model_len = 32768;
  const SettingError error = [](std::string_view setting, const std::string& message) {
    return InputError("", 0, std::string(setting), message);
  };
  const BackendChoice backend = SelectAttentionBackend(catalog, q, error);
  const DecodeChoice decode = SelectDecodeKernel(*backend.backend, q, 16, error);
  AttentionPlan plan;
  plan.backend = *backend.backend;
  plan.decode = *decode.kernel;
  plan.kernel_block_size = decode.kernel_block_size;
  plan.reported_processors = catalog.reported_processors;
  plan.backend_why = backend.why;
  plan.decode_why = decode.why;
  return plan;
}

}  // namespace fleetsim
