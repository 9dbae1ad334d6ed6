#include "workload/length_sample.h"

#include <memory>
#include <optional>

#include "workload/workload_source.h"

namespace fleetsim::workload_gen {

uint64_t UniformBelow(Rng& rng, uint64_t n) {
  // 2^64 mod n: the lowest draws that would make the residues uneven.
  const uint64_t threshold = (uint64_t{0} - n) % n;
  for (;;) {
    const uint64_t x = rng.NextU64();
    if (x >= threshold) return x % n;
  }
}

TraceLengthSample TraceLengthSample::Load(const std::string& path, const std::string& format,
                                          TraceField field, int64_t capacity, uint64_t seed) {
  TraceLengthSample sample;
  const auto k = static_cast<uint64_t>(capacity);
  Rng rng(seed);
  const std::unique_ptr<WorkloadSource> source = OpenWorkload(path, format);
  while (const std::optional<WorkloadRequest> r = source->Next()) {
    const int64_t value = field == TraceField::kInput ? r->input_tokens : r->output_tokens;
    const auto seen = static_cast<uint64_t>(sample.rows_++);
    if (seen < k) {
      sample.values_.push_back(value);
      continue;
    }
    // Algorithm R: row `seen` (0-based) replaces a random slot with probability k/(seen+1).
    const uint64_t slot = UniformBelow(rng, seen + 1);
    if (slot < k) sample.values_[static_cast<size_t>(slot)] = value;
  }
  return sample;
}

int64_t TraceLengthSample::Draw(Rng& rng) const {
  return values_[static_cast<size_t>(UniformBelow(rng, values_.size()))];
}

}  // namespace fleetsim::workload_gen
