// A scratch folder holding a tiny fleet for sweep tests: `cluster.yaml` (Llama-3.1-8B on
// one 8-GPU H100 node, analytic bundle -- built and cached on first use), `traffic.yaml`
// (200 generated requests, about 10 s of traffic) and whatever spec a test writes.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

namespace fleetsim::testing {

inline constexpr const char* kTinyCluster = R"(name: tiny
node_pools:
  - {name: gpus, hardware: H100-SXM, nodes: 1}
instance_groups:
  - name: llama
    model: llama-3.1-8b
    pool: gpus
    tp: 1
    replicas: 2
gateways: {count: 1, policy: least_outstanding}
)";

inline constexpr const char* kTinyTraffic = R"(generator:
  seed: 5
  num_requests: 200
  arrivals: {process: poisson, rate_per_s: 20.0}
  input_tokens: {distribution: lognormal, median: 400, sigma: 0.6, min: 16, max: 4000}
  output_tokens: {distribution: lognormal, median: 80, sigma: 0.5, min: 8, max: 400}
  hash_block_size: 16
)";

class SweepDir {
 public:
  explicit SweepDir(const std::string& tag) {
    dir_ = std::filesystem::temp_directory_path() /
           ("fleetsim-sweep-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Write("cluster.yaml", kTinyCluster);
    Write("traffic.yaml", kTinyTraffic);
  }
  ~SweepDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  SweepDir(const SweepDir&) = delete;
  SweepDir& operator=(const SweepDir&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
    return Path(name);
  }

 private:
  std::filesystem::path dir_;
};

inline std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace fleetsim::testing
