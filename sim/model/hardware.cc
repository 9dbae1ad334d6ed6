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

// `{value: true|false, source: ...}`.
bool ReadSourcedFlag(const YamlSection& parent, std::string_view key, std::string& source) {
  const YamlSection item = parent.Child(key);
  item.RejectUnknownKeys({"value", "source"});
  source = ReadSource(item);
  return item.Get<bool>("value");
}

int ReadCount(const YamlSection& item, std::string_view key, int lo, int hi) {
  const int value = item.Get<int>(key);
  if (value < lo || value > hi) {
    item.Fail(key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  }
  return value;
}

GpuLinksSpec ReadGpuLinks(const YamlSection& intra) {
  const YamlSection links = intra.Child("links");
  links.RejectUnknownKeys({"kind", "generation", "count", "bandwidth_bytes_per_s", "source"});
  GpuLinksSpec spec;
  spec.kind = links.Get<std::string>("kind");
  if (spec.kind != "nvlink" && spec.kind != "xgmi") {
    links.Fail("kind", "unknown GPU link '" + spec.kind + "' (accepted: nvlink, xgmi)");
  }
  spec.generation = ReadCount(links, "generation", 1, 10);
  spec.count = ReadCount(links, "count", 1, 64);
  if (links.Has("bandwidth_bytes_per_s")) {
    if (spec.kind == "nvlink") {
      links.Fail("bandwidth_bytes_per_s",
                 "is NCCL's own figure for NVLink (by compute capability); give it for xgmi only");
    }
    spec.bandwidth_bytes_per_s = ReadSourced(links, "bandwidth_bytes_per_s");
  } else if (spec.kind == "xgmi") {
    links.Fail("bandwidth_bytes_per_s", "an xgmi link needs its bandwidth per direction");
  }
  spec.source = ReadSource(links);
  return spec;
}

HostCpuSpec ReadHostCpu(const YamlSection& intra, int gpus_per_node) {
  const YamlSection cpu = intra.Child("cpu");
  cpu.RejectUnknownKeys({"vendor", "model", "sockets", "gpus_per_pcie_switch", "source"});
  HostCpuSpec spec;
  spec.vendor = cpu.Get<std::string>("vendor");
  if (spec.vendor != "intel" && spec.vendor != "amd") {
    cpu.Fail("vendor", "unknown CPU vendor '" + spec.vendor + "' (accepted: intel, amd)");
  }
  spec.model = cpu.Get<std::string>("model");
  if (spec.model.empty()) cpu.Fail("model", "must name the CPU family");
  spec.sockets = ReadCount(cpu, "sockets", 1, 8);
  spec.gpus_per_pcie_switch = ReadCount(cpu, "gpus_per_pcie_switch", 1, 64);
  if (gpus_per_node % spec.sockets != 0 ||
      (gpus_per_node / spec.sockets) % spec.gpus_per_pcie_switch != 0) {
    cpu.Fail("gpus_per_pcie_switch",
             "the node's " + std::to_string(gpus_per_node) +
                 " GPUs must split evenly over the sockets and their PCIe switches");
  }
  spec.source = ReadSource(cpu);
  return spec;
}

IntraNodeSpec ReadIntraNode(const YamlSection& node, int gpus_per_node) {
  const YamlSection intra = node.Child("intra_node");
  intra.RejectUnknownKeys({"kind", "topology", "links", "nvls", "pcie", "p2p", "cpu"});
  IntraNodeSpec spec;
  spec.kind = intra.Get<std::string>("kind");
  spec.topology = intra.Get<std::string>("topology");
  if (spec.topology != "switch" && spec.topology != "mesh" && spec.topology != "pcie") {
    intra.Fail("topology",
               "unknown topology '" + spec.topology + "' (accepted: switch, mesh, pcie)");
  }
  if (spec.topology == "pcie") {
    if (intra.Has("links")) intra.Fail("links", "a pcie topology has no GPU links");
  } else {
    if (!intra.Has("links")) {
      intra.Fail("links", "topology '" + spec.topology +
                              "' needs the GPU's links ({kind, generation, count, source})");
    }
    spec.links = ReadGpuLinks(intra);
  }
  if (intra.Has("nvls")) {
    spec.nvls = ReadSourcedFlag(intra, "nvls", spec.nvls_source);
    if (spec.nvls && spec.topology != "switch") {
      intra.Child("nvls").Fail("value", "NVLink SHARP needs an NVSwitch (topology: switch)");
    }
  }
  const YamlSection pcie = intra.Child("pcie");
  pcie.RejectUnknownKeys({"generation", "lanes", "source"});
  spec.pcie.generation = ReadCount(pcie, "generation", 1, 7);
  spec.pcie.lanes = ReadCount(pcie, "lanes", 1, 32);
  spec.pcie.source = ReadSource(pcie);
  spec.p2p = ReadSourcedFlag(intra, "p2p", spec.p2p_source);
  spec.cpu = ReadHostCpu(intra, gpus_per_node);
  return spec;
}

InterNodeSpec ReadInterNode(const YamlSection& node) {
  const YamlSection inter = node.Child("inter_node");
  inter.RejectUnknownKeys({"kind", "bandwidth_bytes_per_s"});
  InterNodeSpec spec;
  spec.kind = inter.Get<std::string>("kind");
  spec.bandwidth_bytes_per_s = ReadSourced(inter, "bandwidth_bytes_per_s");
  return spec;
}

// "9.0" -> 90.
int ReadComputeCapability(const YamlSection& doc, std::string& source) {
  const YamlSection item = doc.Child("compute_capability");
  item.RejectUnknownKeys({"value", "source"});
  const std::string text = item.Get<std::string>("value");
  int major = 0, minor = 0;
  char dot = 0, rest = 0;
  std::istringstream in(text);
  if (!(in >> major >> dot >> minor) || dot != '.' || (in >> rest) || major < 1 || minor < 0 ||
      minor > 9) {
    item.Fail("value", "expected major.minor, e.g. \"9.0\", got '" + text + "'");
  }
  source = ReadSource(item);
  return major * 10 + minor;
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
                         "node", "attention_backend", "price_per_gpu_hour_usd",
                         "compute_capability"});
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
  const double gpus = spec.gpus_per_node.value;
  if (gpus != std::floor(gpus) || gpus > 1024) {
    node.Child("gpus_per_node").Fail("value", "must be a whole number of GPUs (at most 1024)");
  }
  spec.intra_node = ReadIntraNode(node, static_cast<int>(gpus));
  spec.inter_node = ReadInterNode(node);
  if (spec.vendor == "nvidia") {
    if (!doc.Has("compute_capability")) {
      doc.Fail("compute_capability",
               "missing required figure for an NVIDIA GPU ({value: \"9.0\", source: ...})");
    }
    spec.compute_capability = ReadComputeCapability(doc, spec.compute_capability_source);
  } else if (doc.Has("compute_capability")) {
    doc.Fail("compute_capability", "is CUDA's; an AMD GPU has none");
  }
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
  // The error_code forms: a name the file system refuses (over 255 bytes, say) is an
  // unknown hardware, not a filesystem_error.
  std::error_code ignored;
  // A NUL byte ends the path the system sees ("a\0b" would open "a"): no file has it.
  const bool nameable = name_or_path.find('\0') == std::string::npos;
  if (nameable && fs::is_regular_file(name_or_path, ignored)) {
    return LoadHardwareFile(name_or_path);
  }
  const fs::path file = catalog_dir / (name_or_path + ".yaml");
  if (nameable && name_or_path.find('/') == std::string::npos &&
      fs::is_regular_file(file, ignored)) {
    return LoadHardwareFile(file.string());
  }
  std::string known;
  for (const std::string& name : HardwareNames(catalog_dir)) {
    known += (known.empty() ? "" : ", ") + name;
  }
  throw OptionError("--hardware",
                    "unknown hardware " + QuoteInput(name_or_path) + " (known: " + known + ")");
}

}  // namespace fleetsim
