#include "workload/vllm_bench_series.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/csv_reader.h"
#include "core/sim_time.h"

namespace fleetsim {
namespace {

std::optional<double> OptionalRate(const CsvReader& csv, const char* column) {
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
    tick.prompt_tokens_per_s = OptionalRate(csv, "prompt_throughput");
    tick.generated_tokens_per_s = OptionalRate(csv, "gen_throughput");
    ticks.push_back(tick);
  }
  return ticks;
}

SeriesOrigin FindSeriesOrigin(const std::vector<VllmBenchTick>& ticks, double tick_s,
                              const std::vector<FirstToken>& first_tokens) {
  SeriesOrigin origin;
  if (ticks.empty() || first_tokens.empty() || !(tick_s > 0)) return origin;
  // The measured prompt tokens per tick, indexed from the first tick; NaN where no row.
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const VllmBenchTick& t : ticks) {
    if (!t.prompt_tokens_per_s) return origin;
    const int64_t k = TickIndex(t.t_s, tick_s);
    first = std::min(first, k);
    last = std::max(last, k);
  }
  std::vector<double> measured(static_cast<std::size_t>(last - first + 1),
                               std::numeric_limits<double>::quiet_NaN());
  double total = 0;
  for (const VllmBenchTick& t : ticks) {
    const auto k = static_cast<std::size_t>(TickIndex(t.t_s, tick_s) - first);
    measured[k] = (std::isnan(measured[k]) ? 0 : measured[k]) + *t.prompt_tokens_per_s * tick_s;
    total += *t.prompt_tokens_per_s * tick_s;
  }
  if (total <= 0) return origin;

  // In ticks: at lead l a first token at u falls in tick ceil(u + l) (a tick ending at t
  // holds (t - 1, t]), so it moves one tick on at each l = n - u. Sweeping l over the
  // range from its low end, the tokens counted in the wrong tick change only there.
  constexpr double kRange = 2;
  std::vector<double> sums(measured.size(), 0.0);
  double wrong = 0;
  const auto has_row = [&](int64_t k) {
    return k >= 0 && k < static_cast<int64_t>(sums.size()) &&
           !std::isnan(measured[static_cast<std::size_t>(k)]);
  };
  const auto move = [&](int64_t k, double tokens) {  // adds `tokens` (signed) to tick k
    if (!has_row(k)) {
      wrong += tokens;  // a token outside the series counts once, as extra
      return;
    }
    const auto i = static_cast<std::size_t>(k);
    wrong -= std::abs(sums[i] - measured[i]);
    sums[i] += tokens;
    wrong += std::abs(sums[i] - measured[i]);
  };
  for (std::size_t k = 0; k < measured.size(); ++k)
    if (!std::isnan(measured[k])) wrong += measured[k];
  struct Crossing {
    double at;     // the lead, in ticks, past which the token is one tick later
    int64_t from;  // its tick up to there, from the first
    double tokens;
  };
  std::vector<Crossing> crossings;
  for (const FirstToken& f : first_tokens) {
    const double u = f.seconds / tick_s;
    const auto tokens = static_cast<double>(f.prompt_tokens);
    const auto start = static_cast<int64_t>(std::ceil(u - kRange));
    move(start - first, tokens);
    for (int64_t n = start; static_cast<double>(n) - u < kRange; ++n)
      if (static_cast<double>(n) - u >= -kRange)
        crossings.push_back({static_cast<double>(n) - u, n - first, tokens});
  }
  std::sort(crossings.begin(), crossings.end(),
            [](const Crossing& a, const Crossing& b) { return a.at < b.at; });
  // Intervals of equal error: (from, to] in ticks, and their error.
  struct Span {
    double from, to, wrong;
  };
  std::vector<Span> spans;
  double from = -kRange;
  for (std::size_t c = 0; c <= crossings.size();) {
    const double to = c < crossings.size() ? crossings[c].at : kRange;
    if (to > from) spans.push_back({from, to, wrong});
    if (c == crossings.size()) break;
    for (const double at = crossings[c].at; c < crossings.size() && crossings[c].at == at; ++c) {
      move(crossings[c].from, -crossings[c].tokens);
      move(crossings[c].from + 1, crossings[c].tokens);
    }
    from = to;
  }
  double best = std::numeric_limits<double>::infinity();
  for (const Span& s : spans)
    best = std::min(best, s.wrong);
  const double tolerance = 1e-9 * total;
  // Adjacent best spans form one range; the range whose middle is nearest a lead of 0.
  double chosen = 0, nearest = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < spans.size();) {
    if (spans[i].wrong > best + tolerance) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < spans.size() && spans[j + 1].wrong <= best + tolerance)
      ++j;
    const double middle = (spans[i].from + spans[j].to) / 2;
    if (std::abs(middle) < nearest) {
      nearest = std::abs(middle);
      chosen = middle;
    }
    i = j + 1;
  }
  origin.lead_s = chosen * tick_s;
  // Each token in a wrong tick is counted twice: missing from its tick, extra in another.
  origin.prompt_mismatch = best / (2 * total);
  origin.from_prompt_column = true;
  return origin;
}

}  // namespace fleetsim
