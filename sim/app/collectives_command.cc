#include "app/collectives_command.h"

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/collectives_text.h"
#include "core/format.h"
#include "core/input_error.h"
#include "core/json_writer.h"
#include "core/project_paths.h"
#include "model/dtype.h"
#include "model/hardware.h"
#include "perf/collective.h"

namespace fleetsim {
namespace {

struct CollectivesOptions {
  std::string hardware;
  int gpus = 0;
  std::string dtype = "bfloat16";
  std::vector<int64_t> bytes;  // empty: nccl-tests' doubling sizes from 1 KiB to 256 MiB
  bool json = false;
};

// One operation at one size: the model's time and what it ran.
struct Priced {
  double us = 0;
  std::string how;
};

struct SizeRow {
  int64_t bytes = 0;
  Priced vllm_all_reduce, all_reduce, all_gather, reduce_scatter, all_to_all;
};

SizeRow PriceSize(const CollectiveModel& group, int64_t bytes) {
  const auto b = static_cast<double>(bytes);
  return {
      bytes,
      {group.AllReduceUs(bytes), group.AllReduceHow(bytes)},
      {group.NcclUs(NcclCollective::kAllReduce, b), group.NcclHow(NcclCollective::kAllReduce, b)},
      {group.NcclUs(NcclCollective::kAllGather, b), group.NcclHow(NcclCollective::kAllGather, b)},
      {group.NcclUs(NcclCollective::kReduceScatter, b),
       group.NcclHow(NcclCollective::kReduceScatter, b)},
      {group.AllToAllUs(b), group.AllToAllHow(b)}};
}

std::string VllmText(const VllmAllReduceRules& rules) {
  std::string text = rules.custom_enabled
                         ? "custom all-reduce below " + WithCommas(rules.custom_max_bytes) + " B"
                         : "custom all-reduce off (" + rules.custom_disabled_reason + ")";
  text += rules.symm_mem_enabled
              ? ", symmetric memory below " + WithCommas(rules.symm_mem_max_bytes) + " B" +
                    (rules.symm_mem_multimem ? " (multimem)" : " (two-shot)")
              : ", symmetric memory off";
  return text + ", NCCL beyond";
}

std::string GraphText(const NcclGraph& g) {
  if (g.channels == 0) return "none";
  std::string text = Printf("%d x %.1f GB/s", g.channels, g.bw_intra);
  if (g.fallback)
    text += Printf(" (no graph found: NCCL's fallback, carried at %.1f)", g.bw_carried);
  return text;
}

void WritePriced(JsonWriter& json, std::string_view key, const Priced& p) {
  json.Key(key);
  json.BeginObject();
  json.Field("us", p.us);
  json.Field("how", p.how);
  json.EndObject();
}

void WriteGraph(JsonWriter& json, std::string_view key, const NcclGraph& g) {
  json.Key(key);
  json.BeginObject();
  json.Field("channels", g.channels);
  json.Field("bw_gbs", g.bw_intra);
  json.Field("carried_gbs", g.bw_carried);
  json.Field("fallback", g.fallback);
  json.EndObject();
}

void CollectivesCommand(const CollectivesOptions& options) {
  const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), options.hardware);
  const int node_gpus = static_cast<int>(hardware.gpus_per_node.value);
  if (options.gpus < 2 || options.gpus > node_gpus) {
    throw OptionError("--gpus", Printf("%d GPUs: a group of 2 to %d, the GPUs of one %s node",
                                       options.gpus, node_gpus, hardware.name.c_str()));
  }
  const std::optional<Dtype> dtype = ParseDtype(options.dtype);
  if (!dtype || *dtype == Dtype::kFp8) {
    throw OptionError("--dtype", "unknown or unsupported tensor type " + QuoteInput(options.dtype) +
                                     " (accepted: bfloat16, float16, float32)");
  }
  std::vector<int64_t> sizes = options.bytes;
  constexpr int64_t kMostBytes = int64_t{1} << 40;
  for (const int64_t b : sizes) {
    if (b <= 0 || b > kMostBytes)
      throw OptionError(
          "--bytes", Printf("%lld: a message size is 1 byte to 1 TiB", static_cast<long long>(b)));
  }
  if (sizes.empty()) {
    for (int64_t b = int64_t{1} << 10; b <= int64_t{1} << 28; b *= 2)
      sizes.push_back(b);
  }
  const CollectiveModel group(hardware, options.gpus, *dtype);
  const NcclTopology& t = group.nccl()->topology();
  std::vector<SizeRow> rows;
  for (const int64_t b : sizes)
    rows.push_back(PriceSize(group, b));

  if (options.json) {
    JsonWriter json(std::cout);
    json.BeginObject();
    json.Field("hardware", hardware.name);
    json.Field("gpus", options.gpus);
    json.Field("dtype", std::string(NameOf(*dtype)));
    json.Field("node", NodeText(hardware));
    json.Field("transport", std::string(TransportText(t, hardware.intra_node)));
    WriteGraph(json, "ring", t.ring);
    WriteGraph(json, "tree", t.tree);
    WriteGraph(json, "nvls", t.nvls);
    json.Field("vllm_all_reduce_rules", VllmText(group.rules()));
    json.Key("rows");
    json.BeginArray();
    for (const SizeRow& r : rows) {
      json.BeginObject();
      json.Field("bytes", r.bytes);
      WritePriced(json, "vllm_all_reduce", r.vllm_all_reduce);
      WritePriced(json, "all_reduce", r.all_reduce);
      WritePriced(json, "all_gather", r.all_gather);
      WritePriced(json, "reduce_scatter", r.reduce_scatter);
      WritePriced(json, "all_to_all", r.all_to_all);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
    return;
  }
  std::printf(
      "collectives on %s, %d GPUs of a node, %s (NCCL 2.29.2's topology search and "
      "cost model, vLLM 0.19's all-reduce choice, the calibrated constants)\n",
      hardware.name.c_str(), options.gpus, std::string(NameOf(*dtype)).c_str());
  std::printf("  node          %s\n", NodeText(hardware).c_str());
  std::printf("  NCCL finds    %s; ring %s, tree %s, NVLS %s\n",
              std::string(TransportText(t, hardware.intra_node)).c_str(), GraphText(t.ring).c_str(),
              GraphText(t.tree).c_str(), GraphText(t.nvls).c_str());
  std::printf("  vLLM TP       %s\n", VllmText(group.rules()).c_str());
  std::printf(
      "  (bytes as nccl-tests counts them: an all-gather's output, a reduce-scatter's "
      "input, what one rank sends in an all-to-all; times in us)\n");
  std::printf("%12s  %-28s %-24s %-24s %-24s %-18s\n", "bytes", "vllm all_reduce",
              "nccl all_reduce", "nccl all_gather", "nccl reduce_scatter", "nccl all_to_all");
  const auto cell = [](const Priced& p) { return Printf("%9.1f %s", p.us, p.how.c_str()); };
  for (const SizeRow& r : rows) {
    std::printf("%12s  %-28s %-24s %-24s %-24s %-18s\n", WithCommas(r.bytes).c_str(),
                cell(r.vllm_all_reduce).c_str(), cell(r.all_reduce).c_str(),
                cell(r.all_gather).c_str(), cell(r.reduce_scatter).c_str(),
                cell(r.all_to_all).c_str());
  }
}

}  // namespace

void AddCollectivesCommand(CLI::App& bundle) {
  auto options = std::make_shared<CollectivesOptions>();
  CLI::App* cmd = bundle.add_subcommand(
      "collectives",
      "Print what the collective model says for a group of GPUs of one catalog node: the links "
      "NCCL finds, its graphs, vLLM's all-reduce choice, and per message size the time and "
      "algorithm of vLLM's TP all-reduce and NCCL's all-reduce, all-gather, reduce-scatter and "
      "all-to-all");
  cmd->add_option("--hardware", options->hardware,
                  "The GPU from cluster_configs/hardware/ (or a YAML path)")
      ->required();
  cmd->add_option("--gpus", options->gpus, "GPUs in the group (2 to the node's GPUs)")->required();
  cmd->add_option("--dtype", options->dtype, "Tensor type: bfloat16, float16, float32")
      ->capture_default_str();
  cmd->add_option("--bytes", options->bytes,
                  "Message sizes in bytes, 1 B to 1 TiB, comma-separated (default: 1 KiB to 256 "
                  "MiB, doubling)")
      ->delimiter(',');
  cmd->add_flag("--json", options->json, "Machine-readable output");
  cmd->callback([options]() { CollectivesCommand(*options); });
}

}  // namespace fleetsim
