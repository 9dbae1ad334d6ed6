// `fleetsim bundle collectives`: the collective model for a group of catalog GPUs, per
// message size, as a user runs it; its figures are the library's (perf/collective.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/project_paths.h"
#include "model/hardware.h"
#include "perf/collective.h"
#include "support/catalog_entry.h"
#include "support/run_command.h"
#include "support/scratch_folder.h"

namespace fleetsim {
namespace {

using testing::RunFleetsim;

class CollectivesCli : public testing::ScratchFolderTest {};

TEST_F(CollectivesCli, PrintsTheLibrarysTimesAndChoices) {
  const auto r = RunFleetsim(
      "bundle collectives --hardware H100-SXM --gpus 8 --bytes 1024,1048576,67108864 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node report = YAML::Load(r.out);
  EXPECT_EQ(report["hardware"].as<std::string>(), "H100-SXM");
  EXPECT_EQ(report["transport"].as<std::string>(), "NVLink");
  const CollectiveModel group(LoadHardware(HardwareCatalogDir(), "H100-SXM"), 8, Dtype::kBfloat16);
  const NcclTopology& t = group.nccl()->topology();
  EXPECT_EQ(report["ring"]["channels"].as<int>(), t.ring.channels);
  EXPECT_EQ(report["nvls"]["channels"].as<int>(), t.nvls.channels);
  EXPECT_FALSE(report["ring"]["fallback"].as<bool>());
  ASSERT_EQ(report["rows"].size(), 3u);
  for (const YAML::Node& row : report["rows"]) {
    const auto bytes = row["bytes"].as<int64_t>();
    const auto b = static_cast<double>(bytes);
    SCOPED_TRACE(bytes);
    EXPECT_DOUBLE_EQ(row["vllm_all_reduce"]["us"].as<double>(), group.AllReduceUs(bytes));
    EXPECT_EQ(row["vllm_all_reduce"]["how"].as<std::string>(), group.AllReduceHow(bytes));
    EXPECT_DOUBLE_EQ(row["all_reduce"]["us"].as<double>(),
                     group.NcclUs(NcclCollective::kAllReduce, b));
    EXPECT_DOUBLE_EQ(row["all_gather"]["us"].as<double>(),
                     group.NcclUs(NcclCollective::kAllGather, b));
    EXPECT_EQ(row["all_gather"]["how"].as<std::string>(),
              group.NcclHow(NcclCollective::kAllGather, b));
    EXPECT_DOUBLE_EQ(row["reduce_scatter"]["us"].as<double>(),
                     group.NcclUs(NcclCollective::kReduceScatter, b));
    EXPECT_DOUBLE_EQ(row["all_to_all"]["us"].as<double>(), group.AllToAllUs(b));
    EXPECT_EQ(row["all_to_all"]["how"].as<std::string>(), group.AllToAllHow(b));
  }
}

// Without --bytes: nccl-tests' doubling sizes, 1 KiB to 256 MiB, in the text table, each
// operation no cheaper for a larger message.
TEST_F(CollectivesCli, DefaultSizesDouble) {
  const auto r = RunFleetsim("bundle collectives --hardware RTX-PRO-6000 --gpus 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("PCIe peer to peer through a shared PCIe switch"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("custom all-reduce below"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  int64_t expected = 1024;
  double last_all_reduce = 0;
  int rows = 0;
  const std::regex row(R"(^\s*([0-9,]+)\s+([0-9.]+) .*?\s+([0-9.]+) ring)");
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    std::string digits = m[1];
    std::erase(digits, ',');
    EXPECT_EQ(std::stoll(digits), expected) << line;
    const double all_reduce = std::stod(m[3]);
    EXPECT_GE(all_reduce, last_all_reduce) << line;
    last_all_reduce = all_reduce;
    expected *= 2;
    ++rows;
  }
  EXPECT_EQ(rows, 19) << r.out;
}

// Where NCCL's search finds no graph (eight Blackwell PCIe cards over two AMD sockets,
// whose link NCCL rates below its slowest speed), the command says so and prices the
// fallback at what the links carry, not at NCCL's 0.1 GB/s placeholder.
TEST_F(CollectivesCli, ShowsNcclsFallbackGraph) {
  Write("RTX-PRO-6000.yaml",
        testing::CatalogEntryWith("RTX-PRO-6000", "vendor: intel, model: emerald-rapids",
                                  "vendor: amd, model: turin"));
  const auto r = RunFleetsim("bundle collectives --hardware " + Path("RTX-PRO-6000.yaml") +
                             " --gpus 8 --bytes 33554432 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node report = YAML::Load(r.out);
  EXPECT_TRUE(report["ring"]["fallback"].as<bool>());
  EXPECT_DOUBLE_EQ(report["ring"]["bw_gbs"].as<double>(), 0.1);
  EXPECT_NEAR(report["ring"]["carried_gbs"].as<double>(), 16.0, 1e-6);  // NCCL's AMD_BW
  // 32 MiB over a ring of 8 at 16 GB/s a channel is milliseconds, not NCCL's 0.6 s.
  const double us = report["rows"][0]["all_reduce"]["us"].as<double>();
  EXPECT_GT(us, 1000.0);
  EXPECT_LT(us, 10000.0);
}

// Two cards on their own root ports of an AMD host: no switch between them, yet NCCL goes
// peer to peer (paths.cc allows it for 2 GPUs on AMD), and the command says through what.
TEST_F(CollectivesCli, NamesThePeerToPeerPathOfAnAmdPair) {
  Write("RTX-PRO-6000.yaml",
        testing::CatalogEntryWith(
            "RTX-PRO-6000",
            "vendor: intel, model: emerald-rapids, sockets: 2, gpus_per_pcie_switch: 2",
            "vendor: amd, model: turin, sockets: 2, gpus_per_pcie_switch: 1"));
  const auto r = RunFleetsim("bundle collectives --hardware " + Path("RTX-PRO-6000.yaml") +
                             " --gpus 2 --bytes 1024 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const YAML::Node report = YAML::Load(r.out);
  const auto transport = report["transport"].as<std::string>();
  EXPECT_NE(transport.find("through the CPU"), std::string::npos) << transport;
  EXPECT_EQ(transport.find("switch"), std::string::npos) << transport;
}

TEST_F(CollectivesCli, RefusesWhatNoNodeHas) {
  for (const char* args :
       {"--hardware H100-SXM --gpus 1", "--hardware H100-SXM --gpus 9",
        "--hardware H100-SXM --gpus 8 --bytes 1024,0",
        "--hardware H100-SXM --gpus 8 --bytes 2199023255552",
        "--hardware H100-SXM --gpus 8 --dtype fp8", "--hardware H999 --gpus 2"}) {
    const auto r = RunFleetsim(std::string("bundle collectives ") + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << ": " << r.err;
  }
}

// An nccl-tests output as the tool prints it: `gpus` rank lines, then one row per size of
// `type` and `redop` with out-of-place time `us(size)` (and an in-place time beside it);
// `root` false writes the older layout without the root column.
template <typename Us>
std::string NcclTestsOutput(int gpus, const std::string& type, const std::string& redop,
                            const std::vector<int64_t>& sizes, Us us, bool root = true) {
  std::ostringstream out;
  out << "# nccl-tests version 2.13.11 nccl-headers=22304 nccl-library=22304\n"
      << "# nThread 1 nGpus " << gpus << " minBytes 0 maxBytes 1048576 step: 4(factor)\n"
      << "#\n# Using devices\n";
  for (int g = 0; g < gpus; ++g)
    out << "#  Rank  " << g << " Group  0 Pid  4242 on node0 device  " << g
        << " [0x18] NVIDIA H100 80GB HBM3\n";
  out << "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      << "NCCL INFO a log line between the header and the rows\n";
  for (const int64_t size : sizes) {
    out << "  " << size << "  " << size / 4 << "  " << type << "  " << redop;
    if (root) out << "  -1";
    out << "  " << us(size) << "  1.0  1.0  0  " << us(size) * 0.98 << "  1.0  1.0  0\n";
  }
  out << "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n";
  return out.str();
}

TEST_F(CollectivesCli, ComparesYourOwnNcclTestsOutput) {
  const std::vector<int64_t> sizes = {0, 1024, 65536, 4194304, 67108864};
  const auto us = [](int64_t size) { return 12.5 + static_cast<double>(size) / 150e3; };
  for (const bool root : {true, false}) {
    SCOPED_TRACE(root);
    Write("ag.txt", NcclTestsOutput(4, "half", "none", sizes, us, root));
    const auto r = RunFleetsim("bundle compare-collectives --nccl-tests " + Path("ag.txt") +
                               " --op all_gather --hardware H100-SXM --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const YAML::Node report = YAML::Load(r.out);
    EXPECT_EQ(report["nccl_version"].as<std::string>(), "2.23.4");
    const CollectiveModel group(LoadHardware(HardwareCatalogDir(), "H100-SXM"), 4,
                                Dtype::kBfloat16);
    ASSERT_EQ(report["rows"].size(), sizes.size() - 1);  // the 0-byte row is skipped
    double mape = 0;
    for (std::size_t i = 0; i < report["rows"].size(); ++i) {
      const YAML::Node row = report["rows"][i];
      const int64_t size = sizes[i + 1];
      EXPECT_EQ(row["gpus"].as<int>(), 4);
      EXPECT_EQ(row["bytes"].as<int64_t>(), size);
      EXPECT_NEAR(row["measured_us"].as<double>(), us(size), 1e-3 * us(size));
      const double model = group.NcclUs(NcclCollective::kAllGather, static_cast<double>(size));
      EXPECT_DOUBLE_EQ(row["model_us"].as<double>(), model);
      mape += std::abs(model - row["measured_us"].as<double>()) / row["measured_us"].as<double>();
    }
    ASSERT_EQ(report["operations"].size(), 1u);
    EXPECT_EQ(report["operations"][0]["operation"].as<std::string>(), "nccl all_gather");
    EXPECT_NEAR(report["operations"][0]["mape"].as<double>(), mape / 4, 1e-12);
  }
}

TEST_F(CollectivesCli, RefusesNcclTestsOutputThatDoesNotFit) {
  const std::vector<int64_t> sizes = {1024, 65536};
  const auto us = [](int64_t) { return 20.0; };
  Write("ar.txt", NcclTestsOutput(8, "float", "sum", sizes, us));
  Write("lone.txt", NcclTestsOutput(1, "float", "sum", sizes, us));
  Write("empty.txt", NcclTestsOutput(8, "float", "sum", {}, us));
  Write("bad.txt", NcclTestsOutput(8, "float", "sum", sizes, [](int64_t) { return -3.0; }));
  Write("odd.txt", NcclTestsOutput(8, "float\x01", "sum", sizes, us));
  const struct {
    std::string args, says;
  } cases[] = {
      {"--nccl-tests " + Path("ar.txt") + " --op all_gather --hardware H100-SXM",
       "ar.txt:15: redop: 'sum' is a reduction"},
      {"--nccl-tests " + Path("ar.txt") + " --op all_reduce --hardware RX-7900-XT",
       "8 GPUs ran, more than a RX-7900-XT node has (4)"},
      {"--nccl-tests " + Path("lone.txt") + " --op all_reduce --hardware H100-SXM",
       "1 '#  Rank N Group ...' header lines"},
      {"--nccl-tests " + Path("empty.txt") + " --op all_reduce --hardware H100-SXM",
       "no nccl-tests result rows"},
      {"--nccl-tests " + Path("bad.txt") + " --op all_reduce --hardware H100-SXM",
       "bad.txt:15: time: out-of-place time '-3'"},
      {"--nccl-tests " + Path("odd.txt") + " --op all_reduce --hardware H100-SXM",
       "odd.txt:15: type: unknown type 'float\\x01'"},
      {"--nccl-tests " + Path("ar.txt") + " --op all_reduce", "--hardware: name the GPU"},
      {"--nccl-tests " + Path("ar.txt") + " --hardware H100-SXM", "--op: name the nccl-tests'"},
      {"--nccl-tests " + Path("ar.txt") + " --op gather --hardware H100-SXM",
       "--op: unknown collective 'gather'"},
      {"--nccl-tests " + Path("nope.txt") + " --op all_reduce --hardware H100-SXM",
       "nope.txt: file: cannot be read"},
      {"", "--system: name the measured tables' system"},
  };
  for (const auto& c : cases) {
    const auto r = RunFleetsim("bundle compare-collectives " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args;
    EXPECT_TRUE(r.out.empty()) << c.args << ": " << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
  }
}

}  // namespace
}  // namespace fleetsim
