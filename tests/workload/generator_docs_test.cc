// docs/WORKLOADS.md against the generator's parser: for each section, a spec with an
// unknown key makes the parser list the keys it accepts there ("accepted: ..."), and each
// of them must be a row of that section's table in the docs.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "core/yaml_section.h"
#include "workload/generator_spec.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// The keys the parser accepts where `spec` puts the unknown key `zz_unknown`.
std::vector<std::string> AcceptedKeys(const std::string& spec) {
  const fs::path file = fs::temp_directory_path() / "fleetsim-generator-docs.yaml";
  std::ofstream(file) << spec;
  try {
    workload_gen::GeneratorSpec::Parse(LoadYamlFile(file.string()));
  } catch (const InputError& error) {
    const std::string what = error.what();
    std::smatch match;
    if (std::regex_search(what, match, std::regex("accepted: ([^)]*)\\)"))) {
      std::vector<std::string> keys;
      std::stringstream list(match[1].str());
      for (std::string key; std::getline(list, key, ',');)
        keys.push_back(std::regex_replace(key, std::regex("^\\s+"), ""));
      return keys;
    }
    ADD_FAILURE() << "no accepted keys in: " << what;
  }
  return {};
}

// The text of a `## section` of docs/WORKLOADS.md, up to the next one.
std::string DocsSection(const std::string& heading) {
  std::ifstream in(fs::path(FLEETSIM_SOURCE_DIR) / "docs" / "WORKLOADS.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string all = text.str();
  const std::size_t begin = all.find("\n## " + heading + "\n");
  EXPECT_NE(begin, std::string::npos) << "no section " << heading;
  const std::size_t end = all.find("\n## ", begin + 4);
  return all.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

constexpr const char* kBase =
    "generator:\n"
    "  num_requests: 3\n"
    "  arrivals: {process: poisson, rate_per_s: 1}\n"
    "  input_tokens: {distribution: fixed, value: 10}\n"
    "  output_tokens: {distribution: fixed, value: 10}\n";

TEST(GeneratorDocs, EveryAcceptedKeyIsDocumented) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {std::string(kBase) + "  zz_unknown: 1\n", "generator"},
      {"generator:\n  num_requests: 3\n  arrivals: {process: gamma, rate_per_s: 1, cv: 2, "
       "zz_unknown: 1}\n  input_tokens: {distribution: fixed, value: 1}\n  output_tokens: "
       "{distribution: fixed, value: 1}\n",
       "arrivals"},
      {"generator:\n  num_requests: 3\n  arrivals: {process: poisson, rate_per_s: 1, "
       "zz_unknown: 1}\n  input_tokens: {distribution: fixed, value: 1}\n  output_tokens: "
       "{distribution: fixed, value: 1}\n",
       "arrivals"},
      {"generator:\n  num_requests: 3\n  arrivals: {process: poisson, rate_per_s: 1, "
       "diurnal: {peak_to_trough: 2, zz_unknown: 1}}\n  input_tokens: {distribution: fixed, "
       "value: 1}\n  output_tokens: {distribution: fixed, value: 1}\n",
       "arrivals"},
      {std::string(kBase) + "  sessions: {turns: {distribution: fixed, value: 2}, zz_unknown: 1}\n",
       "sessions"},
      {std::string(kBase) + "  shared_prefix: {tokens: 5, zz_unknown: 1}\n", "shared_prefix"},
  };
  // The length distributions' keys, each distribution in turn.
  for (const char* distribution : {"fixed", "uniform", "lognormal", "zipf", "trace"}) {
    const std::string spec = std::string(
                                 "generator:\n  num_requests: 3\n  arrivals: {process: "
                                 "poisson, rate_per_s: 1}\n  input_tokens: {distribution: ") +
                             distribution +
                             ", zz_unknown: 1}\n  output_tokens: {distribution: fixed, value: 1}\n";
    const std::string section = DocsSection("length distributions");
    for (const std::string& key : AcceptedKeys(spec)) {
      EXPECT_NE(section.find("| `" + key + "` |"), std::string::npos)
          << distribution << " accepts `" << key << "`, not in docs/WORKLOADS.md";
    }
  }
  for (const auto& [spec, heading] : cases) {
    const std::vector<std::string> keys = AcceptedKeys(spec);
    EXPECT_FALSE(keys.empty()) << heading;
    const std::string section = DocsSection(heading);
    for (const std::string& key : keys) {
      EXPECT_NE(section.find("| `" + key + "` |"), std::string::npos)
          << heading << " accepts `" << key << "`, not in docs/WORKLOADS.md";
    }
  }
}

}  // namespace
}  // namespace fleetsim
