#include "workload/workload_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>

#include "core/hash64.h"
#include "core/input_error.h"
#include "core/json_lines.h"
#include "workload/generator.h"
#include "workload/request_ids.h"
#include "workload/trace_importers.h"
#include "workload/vllm_bench_reader.h"

namespace fleetsim {

std::optional<SimTime> WorkloadSource::PassOver() {
  throw std::logic_error(format() + " workload: cannot pass over a request without reading it");
}

namespace {

class NativeJsonl : public WorkloadSource {
 public:
  explicit NativeJsonl(const std::string& path) : lines_(path), ids_(path, "id") {}
  std::string format() const override { return "native"; }
  std::string path() const override { return lines_.path(); }

  std::optional<WorkloadRequest> Next() override {
    if (!lines_.Next()) return std::nullopt;
    WorkloadRequest r;
    r.line = lines_.line();
    r.id = lines_.OptionalText("id").value_or(std::to_string(lines_.line()));
    if (lines_.Has("arrival_ns")) {
      r.arrival = lines_.Int("arrival_ns");
      if (auto violation = SimTimeViolation(r.arrival)) lines_.Fail("arrival_ns", *violation);
    } else {
      const double seconds = lines_.Number("arrival_s");
      if (auto violation = SimSecondsViolation(seconds)) lines_.Fail("arrival_s", *violation);
      r.arrival = SecondsToSimTime(seconds);
    }
    if (r.arrival < last_arrival_) {
      lines_.Fail("arrival_s", "goes back in time (the trace must be in arrival order)");
    }
    last_arrival_ = r.arrival;
    r.input_tokens = lines_.Int("input_tokens");
    r.output_tokens = lines_.Int("output_tokens");
    if (r.input_tokens <= 0) lines_.Fail("input_tokens", "must be positive");
    if (r.output_tokens <= 0) lines_.Fail("output_tokens", "must be positive");
    if (auto hashes = lines_.OptionalUint64List("block_hashes")) {
      r.block_hashes = std::move(*hashes);
      const int64_t block_size = lines_.Int("hash_block_size");
      if (block_size <= 0 || block_size > (int64_t{1} << 30))
        lines_.Fail("hash_block_size", "must be between 1 and 2^30");
      r.hash_block_size = static_cast<int>(block_size);
      // One hash per started block at most; a hash for the trailing partial block is
      // allowed (Mooncake-style traces hash every started block).
      const int64_t blocks = static_cast<int64_t>(r.block_hashes.size());
      if (blocks > (r.input_tokens + r.hash_block_size - 1) / r.hash_block_size) {
        lines_.Fail("block_hashes", "more hashes than prompt blocks");
      }
      r.hashes_cover_partial_block = blocks * r.hash_block_size > r.input_tokens;
    }
    if (auto model = lines_.OptionalText("model")) {
      if (auto problem = ModelNameViolation(*model)) lines_.Fail("model", *problem);
      r.model = std::move(*model);
    }
    ids_.Add(r.id, lines_.line(), [this](const std::string& m) { lines_.Fail("id", m); });
    return r;
  }

 private:
  JsonLines lines_;
  SimTime last_arrival_ = 0;
  RequestIds ids_;
};

class VllmBenchSource : public WorkloadSource {
 public:
  explicit VllmBenchSource(const std::string& path) : reader_(path), ids_(path, "request_id") {}
  std::string format() const override { return "vllm-bench"; }
  std::string path() const override { return reader_.path(); }
  std::optional<WorkloadRequest> Next() override {
    auto r = reader_.Next();
    if (!r) return std::nullopt;
    if (!origin_) origin_ = r->queued_s;
    WorkloadRequest out;
    out.id = r->id;
    out.line = r->line;
    // The reader keeps a window of lines in order, so a request can come before the first
    // one read: the origin is the earliest emitted.
    out.arrival = ArrivalAfter(*r, *origin_, reader_.path());
    out.input_tokens = r->input_tokens;
    out.output_tokens = r->output_tokens;
    ids_.Add(out.id, r->line, [&](const std::string& m) {
      throw InputError(reader_.path(), r->line, "request_id", m);
    });
    return out;
  }

 private:
  VllmBenchReader reader_;
  std::optional<double> origin_;
  RequestIds ids_;
};

// The format from the first non-empty line: a CSV header or a JSON object's keys.
std::string Detect(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open file");
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (text.rfind("TIMESTAMP,ContextTokens,GeneratedTokens", 0) == 0) return "azure";
    if (text.find("num_prefill_tokens") != std::string::npos) return "vidur";
    if (text.find("\"queued_ts\"") != std::string::npos) return "vllm-bench";
    if (text.find("\"input_length\"") != std::string::npos) return "mooncake";
    if (text.find("\"input_tokens\"") != std::string::npos) return "native";
    throw InputError(
        path, line, "",
        "unknown trace format (give --format: native, vllm-bench, azure, vidur, mooncake)");
  }
  throw InputError(path, 0, "", "empty trace");
}

}  // namespace

std::optional<std::string> ModelNameViolation(std::string_view name) {
  if (name.empty()) return "must not be empty";
  if (name.size() > kMaxModelNameBytes) {
    return "is " + std::to_string(name.size()) + " bytes, more than the " +
           std::to_string(kMaxModelNameBytes) + " a model name may have";
  }
  for (const char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return QuoteInput(name) + " holds a control character";
  }
  return std::nullopt;
}

std::vector<uint64_t> MapBlockHashes(const WorkloadRequest& r, int engine_block_size) {
  if (r.hash_block_size == 0) return {};
  if (r.hash_block_size == engine_block_size) return r.block_hashes;
  const int64_t trace_block = r.hash_block_size;
  // Tokens the hashes stand for: whole trace blocks, or the whole prompt when the last
  // (partial) block is hashed too.
  const int64_t hashed =
      std::min(r.input_tokens, static_cast<int64_t>(r.block_hashes.size()) * trace_block);
  std::vector<uint64_t> out;
  for (int64_t i = 0; (i + 1) * engine_block_size <= hashed; ++i) {
    const int64_t last_token = (i + 1) * engine_block_size - 1;
    const auto j = static_cast<std::size_t>(last_token / trace_block);
    const bool partial = (static_cast<int64_t>(j) + 1) * trace_block > r.input_tokens;
    if (partial && !r.hashes_cover_partial_block) break;
    out.push_back(SplitMix64(r.block_hashes[j] ^ SplitMix64(static_cast<uint64_t>(i) + 0x5EED)));
  }
  return out;
}

std::vector<uint64_t> MapBlockHashes(WorkloadRequest&& r, int engine_block_size) {
  if (r.hash_block_size != 0 && r.hash_block_size == engine_block_size)
    return std::move(r.block_hashes);
  return MapBlockHashes(std::as_const(r), engine_block_size);
}

namespace {

// How many of the first `count` hashes (-1: all) stay whole at the engine's block size.
int64_t MapHashCount(int64_t count, const WorkloadRequest& r, int engine_block_size) {
  if (count < 0 || r.hash_block_size == engine_block_size) return count;
  return count * r.hash_block_size / engine_block_size;
}

}  // namespace

int64_t MapSharedHashes(const WorkloadRequest& r, int engine_block_size) {
  return MapHashCount(r.shared_hashes, r, engine_block_size);
}

int64_t MapFamilyHashes(const WorkloadRequest& r, int engine_block_size) {
  return r.family == 0 ? -1 : MapHashCount(r.family_hashes_from, r, engine_block_size);
}

std::unique_ptr<WorkloadSource> OpenWorkload(const std::string& path, const std::string& format) {
  // A pipe can be read once: detecting its format would eat its first records.
  std::error_code error;
  if (format == "auto" && std::filesystem::exists(path, error) &&
      !std::filesystem::is_regular_file(path, error)) {
    throw OptionError("--format", "'" + path +
                                      "' is not a regular file (a pipe?): give its format, "
                                      "since detecting it would read the stream twice");
  }
  if ((format == "auto" || format == "generator") && IsGeneratorSpec(path))
    return OpenGeneratedWorkload(path);
  const std::string chosen = format == "auto" ? Detect(path) : format;
  if (chosen == "native") return std::make_unique<NativeJsonl>(path);
  if (chosen == "vllm-bench") return std::make_unique<VllmBenchSource>(path);
  if (chosen == "azure") return OpenAzureCsv(path);
  if (chosen == "vidur") return OpenVidurCsv(path);
  if (chosen == "mooncake") return OpenMooncakeJsonl(path);
  throw OptionError(
      "--format", "unknown format '" + format +
                      "' (accepted: auto, native, vllm-bench, azure, vidur, mooncake, generator)");
}

}  // namespace fleetsim
