#include "core/input_error.h"

namespace fleetsim {
namespace {

std::string Locate(const std::string& file, int line, const std::string& field,
                   const std::string& message) {
  std::string text = file;
  if (line > 0) text += ":" + std::to_string(line);
  if (!field.empty()) text += (text.empty() ? "" : ": ") + field;
  return text + (text.empty() ? "" : ": ") + message;
}

}  // namespace

InputError::InputError(std::string file, int line, std::string field, const std::string& message)
    : std::runtime_error(Locate(file, line, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(message) {}

InputError OptionError(const std::string& option, const std::string& message) {
  return InputError("command line", 0, option, message);
}

}  // namespace fleetsim
