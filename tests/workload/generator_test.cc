#include "workload/generator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/input_error.h"
#include "support/temp_file.h"

namespace fleetsim {
namespace {

using testing::CatchInputError;
using testing::TempFile;

std::vector<WorkloadRequest> ReadAll(const std::string& path) {
  auto source = OpenGeneratedWorkload(path);
  std::vector<WorkloadRequest> out;
  while (auto r = source->Next())
    out.push_back(std::move(*r));
  return out;
}

// Generates from `generator:` + `body`.
std::vector<WorkloadRequest> Generate(const std::string& body) {
  TempFile file("spec.yaml", "generator:\n" + body);
  return ReadAll(file.path());
}

bool Same(const WorkloadRequest& a, const WorkloadRequest& b) {
  return a.id == b.id && a.arrival == b.arrival && a.input_tokens == b.input_tokens &&
         a.output_tokens == b.output_tokens && a.block_hashes == b.block_hashes &&
         a.hash_block_size == b.hash_block_size && a.shared_hashes == b.shared_hashes &&
         a.family == b.family && a.family_hashes_from == b.family_hashes_from &&
         a.family_ends == b.family_ends;
}

double Mean(const std::vector<double>& xs) {
  double sum = 0;
  for (double x : xs)
    sum += x;
  return sum / static_cast<double>(xs.size());
}

double CoefficientOfVariation(const std::vector<double>& xs) {
  const double mean = Mean(xs);
  double sq = 0;
  for (double x : xs)
    sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(xs.size() - 1)) / mean;
}

std::vector<double> Gaps(const std::vector<WorkloadRequest>& rs) {
  std::vector<double> gaps;
  for (size_t i = 1; i < rs.size(); ++i)
    gaps.push_back(ToSeconds(rs[i].arrival - rs[i - 1].arrival));
  return gaps;
}

const char kLengths[] =
    "  input_tokens: {distribution: lognormal, median: 1000, sigma: 0.8, min: 1, max: 32768}\n"
    "  output_tokens: {distribution: uniform, min: 32, max: 512}\n";

const char kChat[] =
    "  arrivals: {process: gamma, rate_per_s: 2.0, cv: 1.5}\n"
    "  input_tokens: {distribution: uniform, min: 20, max: 200}\n"
    "  output_tokens: {distribution: lognormal, median: 150, sigma: 0.5, min: 1, max: 2000}\n"
    "  hash_block_size: 16\n"
    "  sessions:\n"  // last, so that a test can add keys to it
    "    turns: {distribution: uniform, min: 2, max: 6}\n"
    "    think_time_s: 5.0\n"
    "    system_prompt_tokens: 800\n";

TEST(Generator, SameSpecSameRequestsOtherSeedOthers) {
  for (const std::string& body : {std::string("  num_requests: 300\n") + kChat,
                                  "  num_requests: 300\n  arrivals: {process: poisson, "
                                  "rate_per_s: 5}\n  hash_block_size: 16\n" +
                                      std::string(kLengths)}) {
    SCOPED_TRACE(body);
    const auto a = Generate("  seed: 42\n" + body);
    const auto b = Generate("  seed: 42\n" + body);
    const auto c = Generate("  seed: 43\n" + body);
    ASSERT_EQ(a.size(), 300u);
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_TRUE(Same(a[i], b[i])) << i;
    size_t differ = 0;
    for (size_t i = 0; i < std::min(a.size(), c.size()); ++i)
      if (!Same(a[i], c[i])) ++differ;
    EXPECT_GT(differ, 250u);
  }
}

// A fingerprint of everything generated: any change to the streams, the distributions or
// the hashing shows up here, as would a platform whose math library rounds differently.
TEST(Generator, FingerprintIsPinned) {
  const auto rs = Generate("  seed: 42\n  num_requests: 2000\n" + std::string(kChat));
  uint64_t h = 1469598103934665603ULL;
  auto fold = [&h](uint64_t x) { h = (h ^ x) * 1099511628211ULL; };
  for (const auto& r : rs) {
    for (char c : r.id)
      fold(static_cast<uint64_t>(c));
    fold(static_cast<uint64_t>(r.arrival));
    fold(static_cast<uint64_t>(r.input_tokens));
    fold(static_cast<uint64_t>(r.output_tokens));
    for (uint64_t b : r.block_hashes)
      fold(b);
  }
  ASSERT_EQ(rs.size(), 2000u);
  EXPECT_EQ(rs[1].id, "s1-t0");
  EXPECT_EQ(rs[1].arrival, 990931597);
  EXPECT_EQ(h, 4551135829107050847ULL);  // hashes named by content and index (generator_prompt.h)
}

TEST(Generator, PoissonMeanGapIsOneOverRate) {
  const auto rs = Generate(
      "  seed: 1\n  num_requests: 20000\n"
      "  arrivals: {process: poisson, rate_per_s: 5.0}\n" +
      std::string(kLengths));
  ASSERT_EQ(rs.size(), 20000u);
  EXPECT_EQ(rs[0].arrival, 0);
  EXPECT_NEAR(Mean(Gaps(rs)), 0.2, 0.2 * 0.03);
  EXPECT_NEAR(CoefficientOfVariation(Gaps(rs)), 1.0, 0.05);
}

TEST(Generator, GammaHasTheRequestedCv) {
  const auto rs = Generate(
      "  seed: 2\n  num_requests: 20000\n"
      "  arrivals: {process: gamma, rate_per_s: 5.0, cv: 2.0}\n" +
      std::string(kLengths));
  EXPECT_NEAR(Mean(Gaps(rs)), 0.2, 0.2 * 0.05);
  EXPECT_NEAR(CoefficientOfVariation(Gaps(rs)), 2.0, 0.2);
}

// A daily cycle (here one of 1,000 s): rate(t) = 20 x (1 + 0.5 cos(2 pi (t - 250) / 1000))
// for peak_to_trough 3. Over two cycles, the quarter-cycle around the peak expects
// 2 x 20 x (250 + 0.5 x 1000 / pi x sin(pi / 4)) = 14,502 arrivals and the one around the
// trough 2 x 20 x (250 - 112.5) = 5,498; the mean rate stays 20/s.
TEST(Generator, DiurnalArrivalsFollowTheCycle) {
  const std::string spec =
      "  seed: 3\n  num_requests: 40000\n"
      "  arrivals: {process: poisson, rate_per_s: 20.0,\n"
      "             diurnal: {period_s: 1000, peak_to_trough: 3, peak_at_s: 250}}\n" +
      std::string(kLengths);
  const auto rs = Generate(spec);
  ASSERT_EQ(rs.size(), 40000u);
  EXPECT_EQ(rs[0].arrival, 0);
  int64_t near_peak = 0;
  int64_t near_trough = 0;
  for (const auto& r : rs) {
    const double t = std::fmod(ToSeconds(r.arrival), 1000.0);
    if (ToSeconds(r.arrival) >= 2000) continue;
    near_peak += (t >= 125 && t < 375) ? 1 : 0;
    near_trough += (t >= 625 && t < 875) ? 1 : 0;
  }
  const double expected_peak =
      2 * 20 * (250 + 500 / std::numbers::pi * std::sin(std::numbers::pi / 4));
  const double expected_trough =
      2 * 20 * (250 - 500 / std::numbers::pi * std::sin(std::numbers::pi / 4));
  EXPECT_NEAR(static_cast<double>(near_peak), expected_peak, expected_peak * 0.04);
  EXPECT_NEAR(static_cast<double>(near_trough), expected_trough, expected_trough * 0.06);
  // 40,000 arrivals at a mean of 20/s: about two cycles.
  EXPECT_NEAR(ToSeconds(rs.back().arrival), 2000, 2000 * 0.03);
  // Gaps are integer nanoseconds, nondecreasing, and the stream repeats exactly.
  for (size_t i = 1; i < rs.size(); ++i)
    ASSERT_GE(rs[i].arrival, rs[i - 1].arrival);
  const auto again = Generate(spec);
  for (size_t i = 0; i < rs.size(); ++i)
    ASSERT_TRUE(Same(rs[i], again[i])) << i;
}

TEST(Generator, ConstantArrivalsAreExactlySpaced) {
  const auto rs = Generate(
      "  num_requests: 1000\n"
      "  arrivals: {process: constant, rate_per_s: 4.0}\n" +
      std::string(kLengths));
  for (size_t i = 0; i < rs.size(); ++i)
    ASSERT_EQ(rs[i].arrival, static_cast<SimTime>(i) * 250'000'000);
}

std::vector<int64_t> InputLengths(const std::string& distribution) {
  const auto rs = Generate(
      "  seed: 7\n  num_requests: 20000\n"
      "  arrivals: {process: poisson, rate_per_s: 5.0}\n"
      "  input_tokens: " +
      distribution + "\n  output_tokens: {distribution: fixed, value: 1}\n");
  std::vector<int64_t> out;
  for (const auto& r : rs) {
    EXPECT_EQ(r.output_tokens, 1);
    out.push_back(r.input_tokens);
  }
  return out;
}

TEST(Generator, FixedLengthsAreExact) {
  for (int64_t n : InputLengths("{distribution: fixed, value: 777}"))
    ASSERT_EQ(n, 777);
}

TEST(Generator, UniformLengthsStayInRangeWithTheRightMean) {
  const auto ns = InputLengths("{distribution: uniform, min: 32, max: 512}");
  std::vector<double> xs(ns.begin(), ns.end());
  EXPECT_EQ(*std::min_element(ns.begin(), ns.end()), 32);
  EXPECT_EQ(*std::max_element(ns.begin(), ns.end()), 512);
  EXPECT_NEAR(Mean(xs), 272.0, 272.0 * 0.03);
}

TEST(Generator, LognormalHasTheRequestedMedian) {
  auto ns = InputLengths("{distribution: lognormal, median: 1000, sigma: 0.8, max: 32768}");
  std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(ns.size() / 2), ns.end());
  EXPECT_NEAR(static_cast<double>(ns[ns.size() / 2]), 1000.0, 50.0);
  EXPECT_LE(*std::max_element(ns.begin(), ns.end()), 32768);
  EXPECT_GE(*std::min_element(ns.begin(), ns.end()), 1);
}

TEST(Generator, ZipfStaysInRangeWithFallingFrequencies) {
  const auto ns = InputLengths("{distribution: zipf, exponent: 1.2, min: 10, max: 109}");
  std::map<int64_t, int> count;
  for (int64_t n : ns) {
    ASSERT_GE(n, 10);
    ASSERT_LE(n, 109);
    ++count[n];
  }
  for (int64_t v = 10; v < 15; ++v)
    EXPECT_GT(count[v], count[v + 1]) << v;
  // Further out single values are close; buckets of ten must still fall.
  int previous = static_cast<int>(ns.size());
  for (int64_t start = 10; start < 110; start += 10) {
    int bucket = 0;
    for (int64_t v = start; v < start + 10; ++v)
      bucket += count[v];
    EXPECT_LT(bucket, previous) << start;
    previous = bucket;
  }
}

TEST(Generator, StopsAtNumRequestsOrDuration) {
  const std::string rest =
      "  arrivals: {process: constant, rate_per_s: 5.0}\n" + std::string(kLengths);
  EXPECT_EQ(Generate("  num_requests: 10\n" + rest).size(), 10u);
  const auto by_time = Generate("  duration_s: 10\n" + rest);
  ASSERT_EQ(by_time.size(), 50u);  // arrivals 0, 0.2, ..., 9.8: [0, 10)
  EXPECT_EQ(by_time.back().arrival, 9'800'000'000);
  EXPECT_EQ(Generate("  num_requests: 10\n  duration_s: 10\n" + rest).size(), 10u);
  EXPECT_EQ(Generate("  num_requests: 1000\n  duration_s: 10\n" + rest).size(), 50u);
}

TEST(Generator, FirstRequestsDoNotDependOnHowManyFollow) {
  for (const std::string& body : {std::string(kChat),
                                  "  arrivals: {process: gamma, rate_per_s: 3, cv: 3}\n"
                                  "  hash_block_size: 16\n" +
                                      std::string(kLengths)}) {
    const auto few = Generate("  num_requests: 50\n" + body);
    const auto many = Generate("  num_requests: 120\n" + body);
    const auto timed = Generate("  duration_s: 1000\n" + body);
    ASSERT_EQ(few.size(), 50u);
    ASSERT_GE(timed.size(), 50u);
    for (size_t i = 0; i < few.size(); ++i) {
      ASSERT_TRUE(Same(few[i], many[i])) << i;
      ASSERT_TRUE(Same(few[i], timed[i])) << i;
    }
  }
}

struct Turn {
  int64_t session, turn;
};
Turn ParseId(const std::string& id) {
  const size_t dash = id.find("-t");
  return {std::stoll(id.substr(1, dash - 1)), std::stoll(id.substr(dash + 2))};
}

TEST(Generator, SessionsGrowTheirPromptsAndShareTheSystemPrompt) {
  const auto rs =
      Generate("  seed: 5\n  num_requests: 100000\n" + std::string(kChat) + "    count: 40\n");
  std::map<int64_t, std::vector<const WorkloadRequest*>> sessions;
  bool interleaved = false;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i > 0) {
      ASSERT_GE(rs[i].arrival, rs[i - 1].arrival) << i;
      interleaved = interleaved || ParseId(rs[i].id).session < ParseId(rs[i - 1].id).session;
    }
    const Turn t = ParseId(rs[i].id);
    auto& turns = sessions[t.session];
    ASSERT_EQ(t.turn, static_cast<int64_t>(turns.size())) << rs[i].id;
    turns.push_back(&rs[i]);
  }
  EXPECT_TRUE(interleaved);
  ASSERT_EQ(sessions.size(), 40u);  // count: 40 ends the stream

  const std::vector<uint64_t>& first = sessions[0][0]->block_hashes;
  for (const auto& [id, turns] : sessions) {
    SCOPED_TRACE("session " + std::to_string(id));
    ASSERT_GE(turns.size(), 2u);
    ASSERT_LE(turns.size(), 6u);
    const int64_t message = turns[0]->input_tokens - 800;
    EXPECT_GE(message, 20);
    EXPECT_LE(message, 200);
    for (const WorkloadRequest* r : turns) {
      ASSERT_EQ(static_cast<int64_t>(r->block_hashes.size()), r->input_tokens / 16);
      EXPECT_EQ(r->hash_block_size, 16);
    }
    // 800 system-prompt tokens: 50 blocks equal in every session, the next one not.
    ASSERT_GT(turns[0]->block_hashes.size(), 50u);
    EXPECT_TRUE(std::equal(first.begin(), first.begin() + 50, turns[0]->block_hashes.begin()));
    if (id != 0) {
      EXPECT_NE(turns[0]->block_hashes[50], first[50]);
    }
    for (size_t k = 1; k < turns.size(); ++k) {
      const WorkloadRequest& before = *turns[k - 1];
      const WorkloadRequest& now = *turns[k];
      EXPECT_GE(now.arrival, before.arrival);
      const int64_t added = now.input_tokens - before.input_tokens - before.output_tokens;
      EXPECT_GE(added, 20) << k;
      EXPECT_LE(added, 200) << k;
      EXPECT_TRUE(std::equal(before.block_hashes.begin(), before.block_hashes.end(),
                             now.block_hashes.begin()))
          << k;
    }
  }
  // Every block after the system prompt belongs to one session.
  std::map<uint64_t, int64_t> owner;
  for (const auto& [id, turns] : sessions) {
    for (const WorkloadRequest* r : turns) {
      for (size_t b = 50; b < r->block_hashes.size(); ++b) {
        auto [it, fresh] = owner.emplace(r->block_hashes[b], id);
        ASSERT_EQ(it->second, id);
      }
    }
  }
  // A hash carries its block's index in its low 4 bits, and a run of 16 blocks of one
  // name (the system prompt's, then the session's) shares the rest, which PrefixIndex
  // turns into adjacent slots; a prompt's hashes all differ.
  for (const auto& [id, turns] : sessions) {
    const std::vector<uint64_t>& h = turns.back()->block_hashes;
    EXPECT_EQ(std::set<uint64_t>(h.begin(), h.end()).size(), h.size());
    for (size_t b = 0; b < h.size(); ++b) {
      EXPECT_EQ(h[b] & 15, b & 15) << b;
      if (b % 16 != 0 && b != 50) {
        EXPECT_EQ(h[b] >> 4, h[b - 1] >> 4) << b;
      }
    }
    EXPECT_NE(h[50] >> 4, h[49] >> 4);  // the session's own blocks begin
  }
  // A conversation's last turn marks its hashes past what its earlier turns sent (the
  // previous prompt's, or the system prompt's for a single turn) as its own, and no other
  // request has them; any other turn's may be sent again by a later turn (-1: all shared).
  std::map<uint64_t, int> holders;
  for (const WorkloadRequest& r : rs) {
    for (uint64_t h : r.block_hashes)
      ++holders[h];
  }
  for (const auto& [id, turns] : sessions) {
    SCOPED_TRACE("session " + std::to_string(id));
    for (size_t k = 0; k + 1 < turns.size(); ++k)
      EXPECT_EQ(turns[k]->shared_hashes, -1) << k;
    const WorkloadRequest& last = *turns.back();
    EXPECT_EQ(last.shared_hashes,
              static_cast<int64_t>(turns[turns.size() - 2]->block_hashes.size()));
    ASSERT_LT(last.shared_hashes, static_cast<int64_t>(last.block_hashes.size()));
    for (size_t b = static_cast<size_t>(last.shared_hashes); b < last.block_hashes.size(); ++b)
      EXPECT_EQ(holders.at(last.block_hashes[b]), 1) << b;
  }
  // Every turn names its conversation, where its own hashes begin (past the system
  // prompt's 50 blocks), and when its last turn arrives.
  std::set<uint64_t> families;
  for (const auto& [id, turns] : sessions) {
    SCOPED_TRACE("session " + std::to_string(id));
    const uint64_t family = turns[0]->family;
    EXPECT_NE(family, 0u);
    families.insert(family);
    for (const WorkloadRequest* r : turns) {
      EXPECT_EQ(r->family, family);
      EXPECT_EQ(r->family_hashes_from, 50);
      EXPECT_EQ(r->family_ends, turns.back()->arrival) << r->id;
    }
  }
  EXPECT_EQ(families.size(), sessions.size());
  std::string one_turn = kChat;
  const std::string turns_line = "    turns: {distribution: uniform, min: 2, max: 6}\n";
  one_turn.replace(one_turn.find(turns_line), turns_line.size(),
                   "    turns: {distribution: fixed, value: 1}\n");
  const auto single = Generate("  seed: 5\n  num_requests: 10\n" + one_turn + "    count: 10\n");
  ASSERT_EQ(single.size(), 10u);
  for (const WorkloadRequest& r : single)
    EXPECT_EQ(r.shared_hashes, 50) << r.id;  // the system prompt's blocks alone
}

TEST(Generator, ThinkTimeHasTheRequestedMean) {
  const auto rs = Generate(
      "  seed: 9\n  duration_s: 100000\n"
      "  arrivals: {process: poisson, rate_per_s: 0.5}\n"
      "  input_tokens: {distribution: fixed, value: 10}\n"
      "  output_tokens: {distribution: fixed, value: 5}\n"
      "  sessions: {count: 5000, turns: {distribution: fixed, value: 2}, think_time_s: 4.0}\n");
  std::map<int64_t, SimTime> first_turn;
  std::vector<double> thinks;
  for (const auto& r : rs) {
    const Turn t = ParseId(r.id);
    if (t.turn == 0) {
      first_turn[t.session] = r.arrival;
      EXPECT_EQ(r.input_tokens, 10);
    } else {
      thinks.push_back(ToSeconds(r.arrival - first_turn.at(t.session)));
      EXPECT_EQ(r.input_tokens, 25);  // 10 + 5 + 10
      EXPECT_TRUE(r.block_hashes.empty());
    }
  }
  ASSERT_EQ(thinks.size(), 5000u);
  EXPECT_NEAR(Mean(thinks), 4.0, 4.0 * 0.05);
}

TEST(Generator, IndependentPromptsShareOnlyTheSharedPrefix) {
  const std::string base =
      "  num_requests: 500\n  hash_block_size: 16\n"
      "  arrivals: {process: poisson, rate_per_s: 5}\n" +
      std::string(kLengths);
  std::set<uint64_t> seen;
  size_t blocks = 0;
  for (const auto& r : Generate(base)) {
    ASSERT_EQ(static_cast<int64_t>(r.block_hashes.size()), r.input_tokens / 16);
    blocks += r.block_hashes.size();
    seen.insert(r.block_hashes.begin(), r.block_hashes.end());
  }
  EXPECT_EQ(seen.size(), blocks);

  // Half of the prompts open with the same 64 tokens (4 blocks); the rest share nothing.
  const auto shared = Generate(base + "  shared_prefix: {tokens: 64, fraction: 0.5}\n");
  std::map<std::vector<uint64_t>, int> openings;
  int eligible = 0;
  for (const auto& r : shared) {
    if (r.input_tokens < 64) continue;
    ++eligible;
    ++openings[std::vector<uint64_t>(r.block_hashes.begin(), r.block_hashes.begin() + 4)];
  }
  int most = 0;
  for (const auto& [opening, n] : openings)
    most = std::max(most, n);
  EXPECT_NEAR(most, eligible / 2, eligible / 10);
  EXPECT_EQ(static_cast<int>(openings.size()), eligible - most + 1);

  // Only the shared prefix's blocks are marked as another request's: a prompt's own
  // hashes are its alone.
  std::map<uint64_t, int> holders;
  for (const auto& r : shared) {
    for (uint64_t h : r.block_hashes)
      ++holders[h];
  }
  int with_prefix = 0;
  for (const auto& r : shared) {
    ASSERT_GE(r.shared_hashes, 0);
    if (r.shared_hashes > 0) {
      EXPECT_EQ(r.shared_hashes, std::min<int64_t>(4, r.input_tokens / 16)) << r.id;
    }
    with_prefix += r.shared_hashes == 4 ? 1 : 0;
    for (size_t b = static_cast<size_t>(r.shared_hashes); b < r.block_hashes.size(); ++b)
      EXPECT_EQ(holders.at(r.block_hashes[b]), 1) << r.id << " block " << b;
  }
  EXPECT_EQ(with_prefix, most);
  for (const auto& r : Generate(base))
    EXPECT_EQ(r.shared_hashes, 0) << r.id;
}

TEST(Generator, DetectsSpecsAndNamesItsFormat) {
  TempFile spec("w.yaml",
                "generator:\n  num_requests: 1\n"
                "  arrivals: {process: poisson, rate_per_s: 1}\n" +
                    std::string(kLengths));
  EXPECT_TRUE(IsGeneratorSpec(spec.path()));
  EXPECT_EQ(OpenGeneratedWorkload(spec.path())->format(), "generator");
  TempFile other("c.yml", "model: x\n");
  EXPECT_FALSE(IsGeneratorSpec(other.path()));
  TempFile trace("t.jsonl", "{\"arrival_s\": 0, \"input_tokens\": 1, \"output_tokens\": 1}\n");
  EXPECT_FALSE(IsGeneratorSpec(trace.path()));
  EXPECT_FALSE(IsGeneratorSpec(spec.dir().string() + "/missing.yaml"));
}

TEST(Generator, BadSpecsNameTheKeyAndTheLine) {
  struct Case {
    std::string body, field;
    int line;
  };
  const std::string lengths = kLengths;  // lines 4 and 5
  const Case cases[] = {
      {"  num_requests: 5\n  arrivals: {process: poisson, rate: 5}\n" + lengths,
       "generator.arrivals.rate", 3},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: -2}\n" + lengths,
       "generator.arrivals.rate_per_s", 3},
      {"  num_requests: 5\n  arrivals: {process: bursty, rate_per_s: 2}\n" + lengths,
       "generator.arrivals.process", 3},
      {"  num_requests: 5\n  arrival: {process: poisson, rate_per_s: 2}\n" + lengths,
       "generator.arrival", 3},
      {"  num_requests: 5\n" + lengths, "generator.arrivals", 2},
      {"  seed: 1\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths,
       "generator.num_requests", 2},
      {"  num_requests: 0\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths,
       "generator.num_requests", 2},
      {"  num_requests: 5\n  arrivals: {process: gamma, rate_per_s: 2}\n" + lengths,
       "generator.arrivals.cv", 3},
      {"  num_requests: 5\n  arrivals: {process: gamma, rate_per_s: 2, cv: 2,\n"
       "    diurnal: {peak_to_trough: 2}}\n" +
           lengths,
       "generator.arrivals.diurnal", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2,\n"
       "    diurnal: {peak_to_trough: 0.5}}\n" +
           lengths,
       "generator.arrivals.diurnal.peak_to_trough", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2,\n"
       "    diurnal: {peak_to_trough: 2, peak_at_s: 90000}}\n" +
           lengths,
       "generator.arrivals.diurnal.peak_at_s", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2,\n"
       "    diurnal: {peak_to_trough: 2, period: 10}}\n" +
           lengths,
       "generator.arrivals.diurnal.period", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2,\n"
       "    diurnal: {peak_to_trough: 2, period_s: 1e12}}\n" +
           lengths,
       "generator.arrivals.diurnal.period_s", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n"
       "  input_tokens: {distribution: uniform, min: 50, max: 10}\n"
       "  output_tokens: {distribution: fixed, value: 1}\n",
       "generator.input_tokens.max", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n"
       "  input_tokens: {distribution: normal, mean: 5}\n"
       "  output_tokens: {distribution: fixed, value: 1}\n",
       "generator.input_tokens.distribution", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  sessions: {turns: {distribution: fixed, value: 2}, think_time_s: -1}\n",
       "generator.sessions.think_time_s", 6},
      // Issue 22: sizes and times that would exhaust memory or overflow the clock.
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n"
       "  input_tokens: {distribution: fixed, value: 4294967296}\n"
       "  output_tokens: {distribution: fixed, value: 1}\n",
       "generator.input_tokens.value", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n"
       "  input_tokens: {distribution: uniform, min: 1, max: 4294967296}\n"
       "  output_tokens: {distribution: fixed, value: 1}\n",
       "generator.input_tokens.max", 4},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  sessions: {turns: {distribution: fixed, value: 2}, system_prompt_tokens: "
           "4294967296}\n",
       "generator.sessions.system_prompt_tokens", 6},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  sessions: {turns: {distribution: fixed, value: 2}, think_time_s: 1e12}\n",
       "generator.sessions.think_time_s", 6},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 1e-12}\n" + lengths,
       "generator.arrivals.rate_per_s", 3},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  shared_prefix: {tokens: 4294967296}\n",
       "generator.shared_prefix.tokens", 6},
      // Request classes and models.
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  model: ''\n",
       "generator.model", 6},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  classes: []\n",
       "generator.classes", 6},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  classes:\n    - {weight: 2, model: a}\n    - {weight: 0, model: b}\n",
       "generator.classes[1].weight", 8},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  classes:\n    - {weight: 2, modle: a}\n",
       "generator.classes[0].modle", 7},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  classes:\n    - {model: \"" + std::string(65, 'm') + "\"}\n",
       "generator.classes[0].model", 7},
      {"  num_requests: 5\n  arrivals: {process: poisson, rate_per_s: 2}\n" + lengths +
           "  classes:\n    - {model: a, output_tokens: {distribution: fixed, value: 0}}\n",
       "generator.classes[0].output_tokens.value", 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    TempFile file("bad.yaml", "generator:\n" + c.body);
    const InputError e = CatchInputError([&] { OpenGeneratedWorkload(file.path()); });
    EXPECT_EQ(e.file(), file.path());
    EXPECT_EQ(e.field(), c.field) << e.what();
    EXPECT_EQ(e.line(), c.line) << e.what();
  }
}

TEST(Generator, AModelKeyLabelsEveryRequestAndChangesNothingElse) {
  const std::string body = std::string("  num_requests: 200\n") + kChat;
  const std::vector<WorkloadRequest> plain = Generate(body);
  // `model:` goes after the sessions mapping, at line 11 of the spec.
  const std::vector<WorkloadRequest> labelled = Generate(body + "  model: llama-3.1-70b\n");
  ASSERT_EQ(plain.size(), labelled.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(Same(plain[i], labelled[i])) << i;
    EXPECT_EQ(plain[i].model, "");
    EXPECT_EQ(labelled[i].model, "llama-3.1-70b");
    EXPECT_EQ(labelled[i].line, 11);
  }
}

TEST(Generator, ClassesShareRequestsByWeightWithTheirOwnLengths) {
  // 3:1 between two models, each with a fixed prompt of its own; no class of its own
  // output, so both draw the spec's.
  const std::vector<WorkloadRequest> rs = Generate(
      "  num_requests: 4000\n  arrivals: {process: poisson, rate_per_s: 5}\n"
      "  input_tokens: {distribution: fixed, value: 10}\n"
      "  output_tokens: {distribution: uniform, min: 1, max: 9}\n"
      "  classes:\n"
      "    - {weight: 3, model: small, input_tokens: {distribution: fixed, value: 100}}\n"
      "    - {weight: 1, model: large, input_tokens: {distribution: fixed, value: 700}}\n");
  std::map<std::string, int> count;
  for (const WorkloadRequest& r : rs) {
    ++count[r.model];
    EXPECT_EQ(r.input_tokens, r.model == "small" ? 100 : 700) << r.id;
    EXPECT_EQ(r.line, r.model == "small" ? 7 : 8) << r.id;
    EXPECT_GE(r.output_tokens, 1);
    EXPECT_LE(r.output_tokens, 9);
  }
  ASSERT_EQ(count.size(), 2u);
  // 3000 expected; the binomial's standard deviation is 27.
  EXPECT_NEAR(count["small"], 3000, 150);
  EXPECT_EQ(count["small"] + count["large"], 4000);
}

TEST(Generator, AClassWithoutAModelAsksForTheSpecsOrNone) {
  const std::string spec = "  num_requests: 400\n  arrivals: {process: poisson, rate_per_s: 5}\n" +
                           std::string(kLengths) +
                           "  classes:\n    - {weight: 1, model: named}\n    - {weight: 1}\n";
  std::set<std::string> models;
  for (const WorkloadRequest& r : Generate(spec))
    models.insert(r.model);
  EXPECT_EQ(models, (std::set<std::string>{"", "named"}));
  models.clear();
  for (const WorkloadRequest& r : Generate(spec + "  model: fallback\n"))
    models.insert(r.model);
  EXPECT_EQ(models, (std::set<std::string>{"fallback", "named"}));
}

TEST(Generator, EveryTurnOfAConversationAsksForItsSessionsModel) {
  const std::vector<WorkloadRequest> rs =
      Generate(std::string("  num_requests: 600\n") + kChat +
               "  classes:\n    - {weight: 1, model: a}\n    - {weight: 1, model: b}\n");
  std::map<std::string, std::set<std::string>> models_of_session;
  for (const WorkloadRequest& r : rs)
    models_of_session[r.id.substr(0, r.id.find('-'))].insert(r.model);
  std::set<std::string> seen;
  for (const auto& [session, models] : models_of_session) {
    EXPECT_EQ(models.size(), 1u) << session;
    seen.insert(models.begin(), models.end());
  }
  EXPECT_EQ(seen, (std::set<std::string>{"a", "b"}));
}

// Every rank of a fleet run reads its own copy of a generator and makes only its gateways'
// requests: what it passes over must leave the rest as they were -- for sessions too, whose
// later turns carry the history of the turns passed over.
TEST(Generator, PassingOverARequestLeavesEveryOtherAsNextMakesIt) {
  const std::string independent =
      "  arrivals: {process: poisson, rate_per_s: 9,\n"
      "             diurnal: {period_s: 60, peak_to_trough: 3, peak_at_s: 20}}\n"
      "  hash_block_size: 16\n"
      "  shared_prefix: {tokens: 100, fraction: 0.5}\n" +
      std::string(kLengths) +
      "  classes:\n    - {weight: 2, model: a}\n"
      "    - {weight: 1, model: b, output_tokens: {distribution: fixed, value: 7}}\n";
  const std::string chat = std::string(kChat) + "  classes:\n    - {weight: 2, model: a}\n" +
                           "    - {weight: 1, model: b}\n";
  for (const std::string& body :
       {"  num_requests: 300\n" + independent, "  duration_s: 30\n" + independent,
        "  num_requests: 300\n" + chat, "  duration_s: 150\n" + chat}) {
    SCOPED_TRACE(body);
    TempFile file("spec.yaml", "generator:\n" + body);
    const std::vector<WorkloadRequest> all = ReadAll(file.path());
    ASSERT_GT(all.size(), 200u);
    auto source = OpenGeneratedWorkload(file.path());
    ASSERT_TRUE(source->can_pass_over());
    std::size_t i = 0;
    for (;; ++i) {
      // Runs of passed-over requests of several lengths, as a rank sees them.
      if (i % 5 == 1 || i % 7 == 3 || i % 11 == 4) {
        const std::optional<SimTime> arrival = source->PassOver();
        if (!arrival) break;
        ASSERT_LT(i, all.size());
        EXPECT_EQ(*arrival, all[i].arrival) << i;
        continue;
      }
      std::optional<WorkloadRequest> r = source->Next();
      if (!r) break;
      ASSERT_LT(i, all.size());
      EXPECT_TRUE(Same(*r, all[i])) << i;
      EXPECT_EQ(r->model, all[i].model) << i;
    }
    EXPECT_EQ(i, all.size()) << "the stream ends where Next alone ends it";
    EXPECT_EQ(source->PassOver(), std::nullopt);
    EXPECT_EQ(source->Next(), std::nullopt);
  }
}

}  // namespace
}  // namespace fleetsim
