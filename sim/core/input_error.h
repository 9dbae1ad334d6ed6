// Bad user input: a config, model card, trace or command-line value that fleetsim
// refuses. It carries where the problem is (file, line, field) so that the command line
// prints exactly one line and exits with kExitInputError -- never a crash or a hang.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "core/sim_time.h"

namespace fleetsim {

inline constexpr int kExitInputError = 2;

class InputError : public std::runtime_error {
 public:
  // `line` is 1-based; 0 means the input has no line (a command-line option).
  InputError(std::string file, int line, std::string field, const std::string& message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  // The message without its location, for an error raised again at another place.
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
};

// An error in a command-line option: names the option instead of a file.
// Thrown by an MPI rank whose peer reported (printed) the error: exit with `code`
// quietly, so that a run on N ranks prints one line, not N.
struct QuietExit {
  int code = kExitInputError;
};

InputError OptionError(const std::string& option, const std::string& message);

// A command-line time in seconds as simulated time; an OptionError outside
// [0, kMaxSimSeconds] (core/sim_time.h).
SimTime OptionSimTime(const std::string& option, double seconds);

// A piece of input as an error line quotes it: in single quotes, control characters and
// bytes >= 0x7f escaped (\r, \n, \t, \xNN), at most kMaxQuotedInput bytes of it, then
// "... (N bytes)". Every value an error repeats goes through this, so that one error is
// one short, printable line however long or odd the input.
inline constexpr std::size_t kMaxQuotedInput = 80;
std::string QuoteInput(std::string_view text);
// A file path as an error line quotes it: escaped the same way, but whole up to
// kMaxQuotedPath bytes -- a user finds a file by its full path, and a cut path names
// another file.
inline constexpr std::size_t kMaxQuotedPath = 512;
std::string QuotePath(std::string_view path);
// The same without the quotes.
std::string EscapeInput(std::string_view text, std::size_t max_bytes = kMaxQuotedInput);

// The most an error's text (file, field and message together) holds: longer ones are cut
// there, as a backstop for a value quoted without QuoteInput.
inline constexpr std::size_t kMaxErrorText = 1000;

}  // namespace fleetsim
