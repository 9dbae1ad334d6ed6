#include "model/hardware.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>

#include "core/input_error.h"
#include "core/yaml_section.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

std::string ReadSource(const YamlSection& item) {
  std::string source = item.Get<std::string>("source");
  if (source.empty()) item.Fail("source", "must name where the figure comes from");
  return source;
}

SourcedValue ReadSourced(const YamlSection& parent, std::string_view key) {
  const YamlSection item = parent.Child(key);
  item.RejectUnknownKeys({"value", "source", "kind"});
  SourcedValue out{item.Get<double>("value"), ReadSource(item)};
  if (!(out.value > 0) || !std::isfinite(out.value)) {
    item.Fail("value", "must be a positive, finite number");
  }
  return out;
}

LinkSpec ReadLink(const YamlSection& node, std::string_view key, bool intra) {
  const YamlSection link = node.Child(key);
  if (intra) {
    link.RejectUnknownKeys({"kind", "topology", "bandwidth_bytes_per_s", "latency_s"});
  } else {
    link.RejectUnknownKeys({"kind", "bandwidth_bytes_per_s", "latency_s"});
  }
  LinkSpec spec;
  spec.kind = link.Get<std::string>("kind");
  if (intra) {
    spec.topology = link.Get<std::string>("topology");
    if (spec.topology != "switch" && spec.topology != "mesh" && spec.topology != "pcie") {
      link.Fail("topology",
                "unknown topology '" + spec.topology + "' (accepted: switch, mesh, pcie)");
    }
  }
  spec.bandwidth_bytes_per_s = ReadSourced(link, "bandwidth_bytes_per_s");
  spec.latency_s = ReadSourced(link, "latency_s");
  return spec;
}

}  // namespace

int64_t HardwareSpec::UsableMemoryBytes() const {
  return static_cast<int64_t>(memory_visible_bytes ? memory_visible_bytes->value
                                                   : memory_bytes.value);
}

double HardwareSpec::Peak16BitFlops(Dtype dtype) const {
  const auto exact = peak_flops.find(dtype == Dtype::kFloat16 ? "fp16" : "bf16");
  if (exact != peak_flops.end()) return exact->second.value;
  const auto other = peak_flops.find(dtype == Dtype::kFloat16 ? "bf16" : "fp16");
  return other != peak_flops.end() ? other->second.value : 0;
}

HardwareSpec LoadHardwareFile(const std::string& path) {
  const YamlSection doc = LoadYamlFile(path);
  doc.RejectUnknownKeys({"name", "vendor", "product", "memory_bytes", "memory_visible_bytes",
                         "memory_bandwidth_bytes_per_s", "memory_stream_efficiency",
                         "matmul_achievable_flops", "peak_flops", "compute_units", "l2_cache_bytes",
                         "node", "attention_backend", "price_per_gpu_hour_usd"});
  HardwareSpec spec;
  spec.file = path;
  spec.name = doc.Get<std::string>("name");
  if (spec.name != fs::path(path).stem().string()) {
    doc.Fail("name", "'" + spec.name + "' differs from the file name '" +
                         fs::path(path).stem().string() + "'");
  }
  spec.vendor = doc.Get<std::string>("vendor");
  spec.product = doc.Get<std::string>("product");
  spec.memory_bytes = ReadSourced(doc, "memory_bytes");
  if (doc.Has("memory_visible_bytes")) {
    spec.memory_visible_bytes = ReadSourced(doc, "memory_visible_bytes");
  }
  spec.memory_bandwidth_bytes_per_s = ReadSourced(doc, "memory_bandwidth_bytes_per_s");
  if (doc.Has("memory_stream_efficiency")) {
    spec.memory_stream_efficiency = ReadSourced(doc, "memory_stream_efficiency");
    if (!(spec.memory_stream_efficiency->value <= 1)) {  // also refuses .nan
      doc.Child("memory_stream_efficiency")
          .Fail("value", "is a fraction of the nominal bandwidth, at most 1");
    }
  }
  const YamlSection flops = doc.Child("peak_flops");
  flops.RejectUnknownKeys({"fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "int8"});
  for (const std::string& dtype : flops.Keys())
    spec.peak_flops[dtype] = ReadSourced(flops, dtype);
  if (!spec.peak_flops.contains("bf16") && !spec.peak_flops.contains("fp16")) {
    flops.Fail("bf16", "a catalog GPU needs a 16-bit tensor figure (bf16 or fp16)");
  }
  if (doc.Has("matmul_achievable_flops")) {
    spec.matmul_achievable_flops = ReadSourced(doc, "matmul_achievable_flops");
    // Guards against a figure in TFLOPS, or against another dtype's peak: a measured matmul
    // rate sits near the 16-bit peak (0.5-1.1 of it on the cards measured).
    const double peak = spec.Peak16BitFlops(Dtype::kBfloat16);
    const double ratio = spec.matmul_achievable_flops->value / peak;
    if (!(ratio >= 0.25 && ratio <= 1.5)) {  // also refuses .nan and .inf
      std::ostringstream share;
      if (std::isfinite(ratio))
        share << std::setprecision(3) << ratio * 100 << " %";
      else
        share << "not a share";
      doc.Child("matmul_achievable_flops")
          .Fail("value", "is " + share.str() +
                             " of the 16-bit peak_flops; give the measured BF16 matmul rate "
                             "in FLOP/s (25-150 % of the peak)");
    }
  }
  spec.compute_units = ReadSourced(doc, "compute_units");
  spec.compute_unit_kind = doc.Child("compute_units").Get<std::string>("kind");
  spec.l2_cache_bytes = ReadSourced(doc, "l2_cache_bytes");
  const YamlSection node = doc.Child("node");
  node.RejectUnknownKeys({"gpus_per_node", "intra_node", "inter_node"});
  spec.gpus_per_node = ReadSourced(node, "gpus_per_node");
  spec.intra_node = ReadLink(node, "intra_node", true);
  spec.inter_node = ReadLink(node, "inter_node", false);
  spec.attention = ReadAttentionCatalog(doc);
  if (!doc.Has("price_per_gpu_hour_usd")) {
    doc.Fail("price_per_gpu_hour_usd",
             "missing required figure (an on-demand price per GPU-hour, with its source)");
  }
  spec.price_per_gpu_hour_usd = ReadSourced(doc, "price_per_gpu_hour_usd");
  return spec;
}

std::vector<std::string> HardwareNames(const fs::path& catalog_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(catalog_dir, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

HardwareSpec LoadHardware(const fs::path& catalog_dir, const std::string& name_or_path) {
  if (fs::is_regular_file(name_or_path)) return LoadHardwareFile(name_or_path);
  const fs::path file = catalog_dir / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && fs::exists(file)) {
    return LoadHardwareFile(file.string());
  }
  std::string known;
  for (const std::string& name : HardwareNames(catalog_dir)) {
    known += (known.empty() ? "" : ", ") + name;
  }
  throw OptionError("--hardware", "unknown hardware '" + name_or_path + "' (known: " + known + ")");
}

}  // namespace fleetsim
