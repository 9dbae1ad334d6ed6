// Runs the fleetsim binary as a user would, capturing exit code, stdout and stderr.
#pragma once

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace fleetsim::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline CommandResult RunFleetsim(const std::string& args) {
  const std::filesystem::path err_file =
      std::filesystem::temp_directory_path() / ("fleetsim-stderr-" + std::to_string(::getpid()));
  const std::string command = std::string(FLEETSIM_BINARY) + " " + args + " 2>" + err_file.string();
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_file);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  std::filesystem::remove(err_file);
  return result;
}

}  // namespace fleetsim::testing
