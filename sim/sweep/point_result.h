// What one finished sweep point gave, read back from its two files alone -- so that
// `fleetsim sweep --collect` can rebuild the aggregate after the points ran elsewhere
// (Slurm array tasks): the fleet's /summary row and the rate scale (/provenance) from the
// point's HDF5 file; the swept group's layout, the fleet's GPUs and their price from the
// point's cluster config and the hardware catalog.
//
//   PointResult r = ReadPointResult("out/points/point-3.yaml", "out/points/point-3.h5", "llama");
//   double per_gpu = r.fleet.goodput_rps / static_cast<double>(r.gpus);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "output/run_tables.h"

namespace fleetsim {

struct PointResult {
  output::SummaryRow fleet{};  // the /summary row "fleet"
  double rate_scale = 1.0;     // the run's (for max_rate: the kept run's)
  // The swept group, with engine settings resolved as the engine resolves them.
  int tp = 1;
  int dp = 1;
  int replicas = 1;
  std::string hardware;
  bool prefix_caching = false;
  int max_num_batched_tokens = 0;
  int max_num_seqs = 0;
  // What the engine resolves on that GPU: the block size, and vLLM's attention backend and
  // decode kernel for it (a hybrid falls off the fast kernel at some block sizes, TPs, GPUs).
  int block_size = 0;
  std::string attention_backend;
  std::string decode_kernel;
  // The gateways.
  std::string policy;
  bool capacity_weighted = false;
  // The whole fleet: every instance's GPUs (replicas x tp x dp over all groups), and what
  // they cost per hour at their hardware's catalog price.
  int64_t gpus = 0;
  double cost_per_hour_usd = 0;
};

// Throws InputError naming the file that is missing or is not a finished run.
PointResult ReadPointResult(const std::filesystem::path& config_path,
                            const std::filesystem::path& result_path, const std::string& group);

}  // namespace fleetsim
