#include "workload/trace_importers.h"

#include <charconv>

#include "core/csv_reader.h"
#include "core/input_error.h"
#include "core/json_lines.h"

namespace fleetsim {
namespace {

bool Digits(std::string_view text, int64_t& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

// Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Shared by the CSV traces: rebasing to the first arrival, order, positive counts.
class CsvTrace : public WorkloadSource {
 public:
  CsvTrace(const std::string& path, std::string format) : csv_(path), format_(std::move(format)) {}
  std::string format() const override { return format_; }

 protected:
  std::optional<WorkloadRequest> Emit(int64_t absolute_ns, const char* time_column, int64_t input,
                                      const char* input_column, int64_t output,
                                      const char* output_column) {
    if (!origin_) origin_ = absolute_ns;
    WorkloadRequest r;
    r.id = std::to_string(csv_.line() - 1);
    r.arrival = absolute_ns - *origin_;
    if (r.arrival > kMaxSimTime) {
      csv_.Fail(time_column,
                "is more than 1e9 s (the largest simulated time) after the trace's first request");
    }
    if (r.arrival < last_)
      csv_.Fail(time_column, "goes back in time (the trace must be in arrival order)");
    last_ = r.arrival;
    if (input <= 0) csv_.Fail(input_column, "must be positive");
    if (output <= 0) csv_.Fail(output_column, "must be positive");
    r.input_tokens = input;
    r.output_tokens = output;
    return r;
  }
  CsvReader csv_;

 private:
  std::string format_;
  std::optional<int64_t> origin_;
  SimTime last_ = 0;
};

class AzureCsv : public CsvTrace {
 public:
  explicit AzureCsv(const std::string& path) : CsvTrace(path, "azure") {
    csv_.RequireColumns({"TIMESTAMP", "ContextTokens", "GeneratedTokens"});
  }
  std::optional<WorkloadRequest> Next() override {
    if (!csv_.Next()) return std::nullopt;
    int64_t ns = 0;
    if (!ParseWallClock(csv_.Text("TIMESTAMP"), ns)) {
      csv_.Fail("TIMESTAMP",
                "expected YYYY-MM-DD HH:MM:SS.fffffff, got " + QuoteInput(csv_.Text("TIMESTAMP")));
    }
    return Emit(ns, "TIMESTAMP", csv_.Int("ContextTokens"), "ContextTokens",
                csv_.Int("GeneratedTokens"), "GeneratedTokens");
  }
};

class VidurCsv : public CsvTrace {
 public:
  explicit VidurCsv(const std::string& path) : CsvTrace(path, "vidur") {
    if (!csv_.HasColumn("arrived_at") && csv_.HasColumn("num_prefill_tokens")) {
      throw InputError(path, 1, "arrived_at",
                       "this file holds request lengths only, no arrival times: use it through a "
                       "generator's resampled lengths");
    }
    csv_.RequireColumns({"arrived_at", "num_prefill_tokens", "num_decode_tokens"});
  }
  std::optional<WorkloadRequest> Next() override {
    if (!csv_.Next()) return std::nullopt;
    const double seconds = csv_.Number("arrived_at");
    if (auto violation = SimSecondsViolation(seconds)) csv_.Fail("arrived_at", *violation);
    return Emit(SecondsToSimTime(seconds), "arrived_at", csv_.Int("num_prefill_tokens"),
                "num_prefill_tokens", csv_.Int("num_decode_tokens"), "num_decode_tokens");
  }
};

class MooncakeJsonl : public WorkloadSource {
 public:
  explicit MooncakeJsonl(const std::string& path) : lines_(path) {}
  std::string format() const override { return "mooncake"; }
  std::optional<WorkloadRequest> Next() override {
    if (!lines_.Next()) return std::nullopt;
    WorkloadRequest r;
    r.id = std::to_string(lines_.line());
    const int64_t ms = lines_.Int("timestamp");
    if (ms < 0) lines_.Fail("timestamp", "must not be negative");
    if (!origin_) origin_ = ms;
    if (ms - *origin_ > kMaxSimTime / 1'000'000) {
      lines_.Fail(
          "timestamp",
          "is more than 1e9 s (the largest simulated time) after the trace's first request");
    }
    r.arrival = (ms - *origin_) * 1'000'000;
    if (r.arrival < last_)
      lines_.Fail("timestamp", "goes back in time (the trace must be in arrival order)");
    last_ = r.arrival;
    r.input_tokens = lines_.Int("input_length");
    r.output_tokens = lines_.Int("output_length");
    if (r.input_tokens <= 0) lines_.Fail("input_length", "must be positive");
    if (r.output_tokens <= 0) lines_.Fail("output_length", "must be positive");
    if (auto ids = lines_.OptionalUint64List("hash_ids")) {
      r.block_hashes = std::move(*ids);
      if (static_cast<int64_t>(r.block_hashes.size()) !=
          (r.input_tokens + kMooncakeBlock - 1) / kMooncakeBlock) {
        lines_.Fail("hash_ids", "expected one id per 512-token block of input_length");
      }
      r.hash_block_size = kMooncakeBlock;
      r.hashes_cover_partial_block = true;
    }
    return r;
  }

 private:
  static constexpr int kMooncakeBlock = 512;
  JsonLines lines_;
  std::optional<int64_t> origin_;
  SimTime last_ = 0;
};

}  // namespace

bool ParseWallClock(std::string_view text, int64_t& ns) {
  // YYYY-MM-DD HH:MM:SS[.f...]
  if (text.size() < 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return false;
  }
  int64_t y, mo, d, h, mi, s;
  if (!Digits(text.substr(0, 4), y) || !Digits(text.substr(5, 2), mo) ||
      !Digits(text.substr(8, 2), d) || !Digits(text.substr(11, 2), h) ||
      !Digits(text.substr(14, 2), mi) || !Digits(text.substr(17, 2), s)) {
    return false;
  }
  // Years 1970-2200: any two such times are less than INT64_MAX ns apart.
  if (y < 1970 || y > 2200) return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return false;
  int64_t fraction_ns = 0;
  if (text.size() > 19) {
    if (text[19] != '.' || text.size() == 20 || text.size() > 29) return false;
    std::string_view digits = text.substr(20);
    int64_t value = 0;
    if (!Digits(digits, value)) return false;
    for (std::size_t i = digits.size(); i < 9; ++i)
      value *= 10;
    fraction_ns = value;
  }
  ns = ((DaysFromCivil(y, mo, d) * 24 + h) * 60 + mi) * 60 * kNsPerSecond + s * kNsPerSecond +
       fraction_ns;
  return true;
}

std::unique_ptr<WorkloadSource> OpenAzureCsv(const std::string& path) {
  return std::make_unique<AzureCsv>(path);
}
std::unique_ptr<WorkloadSource> OpenVidurCsv(const std::string& path) {
  return std::make_unique<VidurCsv>(path);
}
std::unique_ptr<WorkloadSource> OpenMooncakeJsonl(const std::string& path) {
  return std::make_unique<MooncakeJsonl>(path);
}

}  // namespace fleetsim
