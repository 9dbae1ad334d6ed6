// The first hour with fleetsim, as a user meets it (issue 21's rough edges): true help
// texts and example docs, "did you mean" for mistyped commands, options and config keys,
// a missing config.json named as a missing file, the summary table with `unfinished` and
// no "nan", --progress into a log, --json, --dry-run, and export --dir creating its
// folder. The ones that simulate are slow (a few hundred requests on the default fleet).
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "support/run_command.h"
#include "support/scratch_folder.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using testing::RunFleetsim;

class UxCli : public testing::ScratchFolderTest {
 protected:
  static std::string Read(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

std::string Source(const std::string& relative) {
  return (fs::path(FLEETSIM_SOURCE_DIR) / relative).string();
}

TEST_F(UxCli, RunHelpListsEveryWorkloadFormat) {
  const auto result = RunFleetsim("run --help");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // Help text wraps; compare without line breaks and indentation.
  const std::string help = std::regex_replace(result.out, std::regex("\\s+"), " ");
  for (const char* format : {"native", "vllm-bench", "azure", "vidur", "mooncake", "generator"})
    EXPECT_NE(help.find(format), std::string::npos) << format << " missing from:\n" << result.out;
  for (const char* option : {"--progress", "--json", "--dry-run"})
    EXPECT_NE(help.find(option), std::string::npos) << option;
}

TEST_F(UxCli, ExamplesReadmeNamesTheDefaultWorkloadAndEveryFile) {
  const auto help = RunFleetsim("run --help");
  const std::string text = std::regex_replace(help.out, std::regex("\\s+"), " ");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(text, match, std::regex("default: runs/examples/([^)\\s]+)")))
      << help.out;
  const std::string default_workload = match[1];
  const std::string readme = Read(Source("runs/examples/README.md"));
  EXPECT_NE(readme.find("The default workload of `fleetsim run` is `" + default_workload + "`"),
            std::string::npos)
      << "runs/examples/README.md does not name " << default_workload;
  for (const auto& entry : fs::directory_iterator(Source("runs/examples"))) {
    const std::string name = entry.path().filename().string();
    if (name == "README.md" || name == "out") continue;
    EXPECT_NE(readme.find("`" + name + "`"), std::string::npos) << name << " is not described";
  }
}

TEST_F(UxCli, AGeneratorSpecSpeaksOfSessionsOnlyWhenItHasThem) {
  for (const auto& entry : fs::directory_iterator(Source("runs/examples"))) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string text = Read(entry.path());
    if (text.find("generator:") == std::string::npos) continue;
    std::string comments, keys;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      (line.starts_with("#") ? comments : keys) += line + "\n";
    const bool has_sessions = keys.find("sessions:") != std::string::npos;
    // "No multi-turn sessions" is an honest comment; a promise of them is not.
    const bool promises = std::regex_search(
        comments, std::regex("(^|[^o] )(multi-turn )?sessions (that|sharing)|in multi-turn"));
    EXPECT_FALSE(promises && !has_sessions) << entry.path() << " promises sessions it lacks";
  }
}

TEST_F(UxCli, AMistypedSubcommandGetsTheClosestOne) {
  const auto result = RunFleetsim("rnu");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("unknown command 'rnu'"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("did you mean 'run'?"), std::string::npos) << result.err;
  const auto nested = RunFleetsim("bundle biuld --model llama-3.1-8b");
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("did you mean 'build'?"), std::string::npos) << nested.err;
}

TEST_F(UxCli, AMistypedOptionGetsTheClosestOne) {
  const auto result = RunFleetsim("run --horizn 5");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("unknown option --horizn for fleetsim run (did you mean '--horizon'?)"),
            std::string::npos)
      << result.err;
  // Nothing close: CLI11's own words, no suggestion.
  const auto far = RunFleetsim("run --zzzzzzzz");
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST_F(UxCli, AMistypedConfigKeyGetsTheClosestOne) {
  Write("typo.yaml",
        "instance_groups:\n"
        "  - {name: g, model: llama-3.1-8b, hardware: H100-SXM, replicas: 1}\n"
        "gateways: {count: 1, polcy: round_robin}\n");
  const auto result = RunFleetsim("run --dry-run --cluster " + Path("typo.yaml"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("typo.yaml:3: gateways.polcy: unknown key (did you mean 'policy'?)"),
            std::string::npos)
      << result.err;
}

TEST_F(UxCli, AMissingConfigJsonIsNamedAsAMissingFile) {
  const auto result = RunFleetsim("inspect --model " + Path("missing/config.json"));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("no such file '" + Path("missing/config.json") + "'"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(result.err.find("unknown model"), std::string::npos) << result.err;
  fs::create_directories(dir_ / "empty-model");
  const auto folder = RunFleetsim("inspect --model " + Path("empty-model"));
  EXPECT_NE(folder.err.find("no config.json in folder"), std::string::npos) << folder.err;
  // A bare name is still looked up among the cards, with a suggestion.
  const auto name = RunFleetsim("inspect --model llama-3.1-8c");
  EXPECT_NE(name.err.find("unknown model 'llama-3.1-8c' (did you mean 'llama-3.1-8b'?)"),
            std::string::npos)
      << name.err;
}

// One request on the two-group default fleet: the other group serves nothing.
TEST_F(UxCli, TheSummaryTableCountsUnfinishedAndPrintsNoNan) {
  const auto idle = RunFleetsim("run --num-reqs 1 --output " + Path("idle.h5"));
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  EXPECT_NE(idle.out.find("unfinished"), std::string::npos) << idle.out;
  EXPECT_EQ(idle.out.find("nan"), std::string::npos) << idle.out;
  const std::regex idle_row("\\n(llama8b-\\w+) +0 +0 +0 +0 +- +- +- +- +- +- +-");
  EXPECT_TRUE(std::regex_search(idle.out, idle_row)) << idle.out;

  // A horizon that ends the run early: every request is counted in one column.
  const auto cut = RunFleetsim("run --num-reqs 300 --horizon 1 --output " + Path("cut.h5"));
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  std::smatch row;
  ASSERT_TRUE(
      std::regex_search(cut.out, row, std::regex("\\nfleet +(\\d+) +(\\d+) +(\\d+) +(\\d+) ")))
      << cut.out;
  const long requests = std::stol(row[1]), finished = std::stol(row[2]),
             rejected = std::stol(row[3]), unfinished = std::stol(row[4]);
  EXPECT_EQ(requests, 300);
  EXPECT_GT(unfinished, 0) << "a 1 s horizon leaves requests of a 3 s workload unfinished";
  EXPECT_EQ(finished + rejected + unfinished, requests) << cut.out;
}

TEST_F(UxCli, ProgressAlwaysWritesLinesIntoALog) {
  // stderr is a file here: auto stays silent, always writes plain lines.
  const auto quiet = RunFleetsim("run --num-reqs 200 --output " + Path("a.h5"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("progress"), std::string::npos) << quiet.err;
  const auto logged = RunFleetsim("run --num-reqs 200 --progress always --output " + Path("b.h5"));
  ASSERT_EQ(logged.exit_code, 0) << logged.err;
  EXPECT_EQ(logged.err.find('\r'), std::string::npos) << "no terminal redraws in a log";
  EXPECT_TRUE(std::regex_search(logged.err,
                                std::regex("fleetsim: progress: t = [0-9.]+ s simulated \\| \\d+")))
      << logged.err;
  EXPECT_TRUE(std::regex_search(
      logged.err, std::regex("fleetsim: progress: last: .* 200 of 200 requests finished")))
      << logged.err;
  const auto never = RunFleetsim("run --num-reqs 10 --progress sometimes");
  EXPECT_EQ(never.exit_code, 2);
}

TEST_F(UxCli, JsonPrintsTheSummaryForPrograms) {
  const auto result = RunFleetsim("run --num-reqs 200 --json --output " + Path("j.h5"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(result.out.starts_with("{")) << result.out;
  EXPECT_NE(result.out.find("\"output\": \"" + Path("j.h5") + "\""), std::string::npos);
  EXPECT_NE(result.out.find("\"requests\": 200"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\"groups\": ["), std::string::npos);
  EXPECT_NE(result.out.find("\"fleet\": {"), std::string::npos);
  EXPECT_EQ(result.out.find("TTFT p50"), std::string::npos) << "no table with --json";
  // Python reads it (the test's own check that it is JSON).
  std::ofstream(dir_ / "summary.json") << result.out;
  const std::string check = "/usr/bin/python3 -c \"import json,sys; d=json.load(open('" +
                            Path("summary.json") +
                            "')); sys.exit(0 if d['fleet']['finished'] == 200 else 1)\"";
  EXPECT_EQ(std::system(check.c_str()), 0);
}

TEST_F(UxCli, DryRunPrintsThePlanAndWritesNothing) {
  const auto result = RunFleetsim("run --dry-run --output " + Path("never.h5"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(fs::exists(Path("never.h5")));
  EXPECT_FALSE(fs::exists(Path("never.h5.tmp")));
  for (const char* expected :
       {"group llama8b-h100: 32 x llama-3.1-8b, TP 1, on H100-SXM",
        "placement         h100 node 0: instances 0-7 on GPUs 0-7",
        "placement         a100 node 3: instances 56-63 on GPUs 0-7", "bundle            ",
        "attention backend FLASH_ATTN", "KV cache          ", "max concurrency   ",
        "routing     2 gateway(s), least_outstanding (capacity-weighted), load view refreshed "
        "every 50 ms",
        "windows     at most 50 ms of simulated time (routing steps of 0.5 ms",
        "default_fleet_traffic.yaml: generated, 6,000 requests, arriving at 100/s; every rank "
        "reads it and makes its gateways' requests"})
    EXPECT_NE(result.out.find(expected), std::string::npos) << expected << "\n" << result.out;
  EXPECT_EQ(result.out.find("requests finished"), std::string::npos);
  // One GPU an instance: no collectives. A group of several names what NCCL finds on its
  // node (the TP 2 and the DP 2 groups of the PCIe example).
  EXPECT_EQ(result.out.find("collectives"), std::string::npos) << result.out;
  const auto pcie =
      RunFleetsim("run --dry-run --cluster " + Source("cluster_configs/moe_dp_ep.yaml"));
  ASSERT_EQ(pcie.exit_code, 0) << pcie.err;
  const std::string line =
      "  collectives       2 GPUs of a node: NCCL goes PCIe peer to peer through a shared PCIe "
      "switch (8-GPU node, pcie: PCIe Gen5 x16, 2 GPU(s) per PCIe switch";
  const std::size_t first = pcie.out.find(line);
  ASSERT_NE(first, std::string::npos) << pcie.out;
  EXPECT_NE(pcie.out.find(line, first + 1), std::string::npos) << pcie.out;
  // Sessions, --strict-models and --skip-bad-lines keep one reader.
  for (const std::string& args :
       {"--workload " + Source("runs/examples/chat_sessions.yaml"), std::string("--strict-models"),
        std::string("--skip-bad-lines")}) {
    const auto one = RunFleetsim("run --dry-run " + args + " --output " + Path("never.h5"));
    ASSERT_EQ(one.exit_code, 0) << args << "\n" << one.err;
    EXPECT_NE(one.out.find("; rank 0 reads it and sends each rank its gateways' requests"),
              std::string::npos)
        << args << "\n"
        << one.out;
  }
}

TEST_F(UxCli, ExportDirIsCreated) {
  ASSERT_EQ(RunFleetsim("run --num-reqs 50 --quiet --output " + Path("e.h5")).exit_code, 0);
  const auto result = RunFleetsim("export --csv " + Path("e.h5") + " --dir " + Path("new/deeper"));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  for (const char* table : {"requests", "instances", "summary", "timeseries"})
    EXPECT_TRUE(fs::exists(dir_ / "new" / "deeper" / ("e." + std::string(table) + ".csv")))
        << table;
  // The fleet's rows follow the groups' in /timeseries.
  const std::string series = Read(dir_ / "new" / "deeper" / "e.timeseries.csv");
  EXPECT_NE(series.find("\nfleet,"), std::string::npos) << series.substr(0, 400);
}

}  // namespace
}  // namespace fleetsim
