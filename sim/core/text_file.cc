#include "core/text_file.h"

#include <fstream>
#include <sstream>

namespace fleetsim {

std::string ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace fleetsim
