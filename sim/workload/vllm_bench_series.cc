#include "workload/vllm_bench_series.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/csv_reader.h"
#include "core/sim_time.h"

namespace fleetsim {
namespace {

std::optional<double> OptionalNonNegative(const CsvReader& csv, const char* column) {
  if (!csv.HasColumn(column)) return std::nullopt;
  const double rate = csv.Number(column);
  if (!std::isfinite(rate) || rate < 0) csv.Fail(column, "must be a non-negative number");
  return rate;
}

}  // namespace

int64_t TickIndex(double t_s, double tick_s) {
  return RoundHalfAway(t_s / tick_s);
}

std::vector<VllmBenchTick> ReadVllmBenchSeries(const std::string& path) {
  CsvReader csv(path);
  csv.RequireColumns({"t", "running", "waiting"});
  std::vector<VllmBenchTick> ticks;
  while (csv.Next()) {
    VllmBenchTick tick;
    tick.t_s = csv.Number("t");
    if (auto violation = SimSecondsViolation(tick.t_s)) csv.Fail("t", *violation);
    tick.running = csv.Int("running");
    tick.waiting = csv.Int("waiting");
    if (tick.running < 0) csv.Fail("running", "must not be negative");
    if (tick.waiting < 0) csv.Fail("waiting", "must not be negative");
    tick.prompt_tokens_per_s = OptionalNonNegative(csv, "prompt_throughput");
    tick.generated_tokens_per_s = OptionalNonNegative(csv, "gen_throughput");
    tick.kv_cache_pct = OptionalNonNegative(csv, "kv_cache_pct");
    if (tick.kv_cache_pct && *tick.kv_cache_pct > 100)
      csv.Fail("kv_cache_pct", "must be at most 100");
    ticks.push_back(tick);
  }
  return ticks;
}

namespace {

// The run's prompt tokens per tick, indexed from its first tick (NaN where a tick has no
// row), and their total; nullopt without a prompt column.
struct PromptCounts {
  int64_t first = 0;
  std::vector<double> tokens;
  double total = 0;
};

std::optional<PromptCounts> PromptTokensPerTick(const std::vector<VllmBenchTick>& ticks,
                                                double tick_s) {
  PromptCounts counts;
  int64_t last = std::numeric_limits<int64_t>::min();
  counts.first = std::numeric_limits<int64_t>::max();
  for (const VllmBenchTick& t : ticks) {
    if (!t.prompt_tokens_per_s) return std::nullopt;
    counts.first = std::min(counts.first, TickIndex(t.t_s, tick_s));
    last = std::max(last, TickIndex(t.t_s, tick_s));
  }
  counts.tokens.assign(static_cast<std::size_t>(last - counts.first + 1),
                       std::numeric_limits<double>::quiet_NaN());
  for (const VllmBenchTick& t : ticks) {
    double& slot = counts.tokens[static_cast<std::size_t>(TickIndex(t.t_s, tick_s) - counts.first)];
    slot = (std::isnan(slot) ? 0 : slot) + *t.prompt_tokens_per_s * tick_s;
    counts.total += *t.prompt_tokens_per_s * tick_s;
  }
  return counts;
}

// A range of leads, in ticks, (from, to], and the prompt tokens counted in the wrong tick
// there (twice each: missing from its tick, extra in another).
struct Span {
  double from, to, wrong;
};

constexpr double kLeadRangeTicks = 2;

// The error at every lead in +-kLeadRangeTicks. At lead l a first token at u ticks falls in
// tick ceil(u + l) (a tick ending at t holds (t - 1, t]), so it moves one tick on at each
// l = n - u: sweeping l from the low end, the error changes only there.
std::vector<Span> MismatchSpans(const PromptCounts& measured,
                                const std::vector<FirstToken>& first_tokens, double tick_s) {
  const std::vector<double>& counted = measured.tokens;
  std::vector<double> sums(counted.size(), 0.0);
  double wrong = 0;
  for (double c : counted)
    if (!std::isnan(c)) wrong += c;
  const auto move = [&](int64_t k, double tokens) {  // adds `tokens` (signed) to tick k
    if (k < 0 || k >= static_cast<int64_t>(sums.size()) ||
        std::isnan(counted[static_cast<std::size_t>(k)])) {
      wrong += tokens;  // a token outside the series counts once, as extra
      return;
    }
    const auto i = static_cast<std::size_t>(k);
    wrong -= std::abs(sums[i] - counted[i]);
    sums[i] += tokens;
    wrong += std::abs(sums[i] - counted[i]);
  };
  struct Crossing {
    double at;     // the lead past which the token is one tick later
    int64_t from;  // its tick up to there, from the first
    double tokens;
  };
  std::vector<Crossing> crossings;
  for (const FirstToken& f : first_tokens) {
    const double u = f.seconds / tick_s;
    const auto tokens = static_cast<double>(f.prompt_tokens);
    const auto start = static_cast<int64_t>(std::ceil(u - kLeadRangeTicks));
    move(start - measured.first, tokens);
    for (int64_t n = start; static_cast<double>(n) - u < kLeadRangeTicks; ++n)
      if (static_cast<double>(n) - u >= -kLeadRangeTicks)
        crossings.push_back({static_cast<double>(n) - u, n - measured.first, tokens});
  }
  std::sort(crossings.begin(), crossings.end(),
            [](const Crossing& a, const Crossing& b) { return a.at < b.at; });
  std::vector<Span> spans;
  double from = -kLeadRangeTicks;
  for (std::size_t c = 0;;) {
    const double to = c < crossings.size() ? crossings[c].at : kLeadRangeTicks;
    if (to > from) spans.push_back({from, to, wrong});
    if (c == crossings.size()) return spans;
    for (const double at = crossings[c].at; c < crossings.size() && crossings[c].at == at; ++c) {
      move(crossings[c].from, -crossings[c].tokens);
      move(crossings[c].from + 1, crossings[c].tokens);
    }
    from = to;
  }
}

// The middle of the range of adjacent spans within `tolerance` of the least error whose
// middle is nearest a lead of 0; and that least error.
std::pair<double, double> MiddleOfBestRange(const std::vector<Span>& spans, double tolerance) {
  double best = std::numeric_limits<double>::infinity();
  for (const Span& s : spans)
    best = std::min(best, s.wrong);
  std::optional<double> chosen;
  for (std::size_t i = 0, j = 0; i < spans.size(); i = j + 1) {
    j = i;
    if (spans[i].wrong > best + tolerance) continue;
    while (j + 1 < spans.size() && spans[j + 1].wrong <= best + tolerance)
      ++j;
    const double middle = (spans[i].from + spans[j].to) / 2;
    if (!chosen || std::abs(middle) < std::abs(*chosen)) chosen = middle;
  }
  return {chosen.value_or(0), best};
}

}  // namespace

SeriesOrigin FindSeriesOrigin(const std::vector<VllmBenchTick>& ticks, double tick_s,
                              const std::vector<FirstToken>& first_tokens) {
  SeriesOrigin origin;
  if (ticks.empty() || first_tokens.empty() || !(tick_s > 0)) return origin;
  const std::optional<PromptCounts> measured = PromptTokensPerTick(ticks, tick_s);
  if (!measured || measured->total <= 0) return origin;
  const auto [lead, wrong] =
      MiddleOfBestRange(MismatchSpans(*measured, first_tokens, tick_s), 1e-9 * measured->total);
  origin.lead_s = lead * tick_s;
  origin.prompt_mismatch = wrong / (2 * measured->total);
  origin.from_prompt_column = true;
  return origin;
}

}  // namespace fleetsim
