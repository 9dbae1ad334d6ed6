// Conversations cached lazily (KvCacheManager): a turn's blocks past the system prompt
// wait anonymously until another turn of its conversation comes to the instance. Nothing
// but that turn can tell, so an instance must give exactly the results it gives when every
// block is cached as it is hashed -- with turns that overlap, preempt, hit what is left
// of an earlier turn, go on after a checkpoint, and with records forgotten once their
// conversations end.
#include <algorithm>
#include <functional>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "core/checkpoint_io.h"
#include "engine/engine_setup.h"
#include "engine/instance.h"
#include "engine/test_models.h"
#include "perf/synthetic_bundle.h"

namespace fleetsim {
namespace {

constexpr int64_t kSystemBlocks = 3;

struct Turn {
  SimTime arrival = 0;
  uint64_t family = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  bool last = false;
  int64_t earlier_prompt_tokens = 0;  // what the conversation's previous turn sent
  SimTime ends = 0;                   // the conversation's last turn's arrival
};

// Conversations of 1-5 turns: a shared system prompt, then each turn's prompt is the
// previous one's plus its output and a new message. Think times are short, so turns of a
// conversation often overlap and land while an earlier turn's blocks are still queued.
std::vector<Turn> Conversations(uint32_t seed, int64_t block, int conversations) {
  std::mt19937 rng(seed);
  std::vector<Turn> turns;
  SimTime start = 0;
  for (int c = 0; c < conversations; ++c) {
    start += static_cast<SimTime>(rng() % 10'000'000);
    SimTime at = start;
    int64_t prompt =
        kSystemBlocks * block + 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(3 * block));
    int64_t sent = 0;
    const int count = 1 + static_cast<int>(rng() % 5);
    const std::size_t first = turns.size();
    for (int k = 0; k < count; ++k) {
      Turn turn;
      turn.arrival = at;
      turn.family = static_cast<uint64_t>(c) + 1;
      turn.prompt_tokens = prompt;
      turn.output_tokens = 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(8 * block));
      turn.last = k + 1 == count;
      turn.earlier_prompt_tokens = sent;
      turns.push_back(turn);
      sent = prompt;
      prompt +=
          turn.output_tokens + 1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(2 * block));
      at += static_cast<SimTime>(rng() % 200'000'000);  // up to 0.2 s: often overlapping
    }
    for (std::size_t t = first; t < turns.size(); ++t)
      turns[t].ends = turns.back().arrival;
  }
  std::stable_sort(turns.begin(), turns.end(),
                   [](const Turn& a, const Turn& b) { return a.arrival < b.arrival; });
  return turns;
}

// Two turns in three: the rest went to other instances.
std::vector<Turn> SomeTurns(std::vector<Turn> turns) {
  std::vector<Turn> some;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (i % 3 != 1) some.push_back(turns[i]);
  }
  return some;
}

std::unique_ptr<Request> RequestOf(const Turn& turn, int64_t id, int64_t block, bool families) {
  auto r = std::make_unique<Request>();
  r->id = id;
  r->name = "c" + std::to_string(turn.family) + "-" + std::to_string(id);
  r->prompt_tokens = turn.prompt_tokens;
  r->max_output_tokens = turn.output_tokens;
  for (int64_t b = 0; b < turn.prompt_tokens / block; ++b) {
    r->prompt_block_hashes.push_back(b < kSystemBlocks
                                         ? 1000 + static_cast<BlockHash>(b)
                                         : turn.family * 1'000'000 + static_cast<BlockHash>(b));
  }
  // A last turn's own blocks: no later turn sends them.
  if (turn.last) r->shared_hash_limit = turn.earlier_prompt_tokens / block;
  if (families) {
    r->family = turn.family;
    r->family_hash_start = kSystemBlocks;
    r->family_ends = turn.ends;
  }
  return r;
}

struct Outcome {
  std::vector<RequestRecord> records;
  std::vector<StepRecord> steps;
  int64_t catch_ups = 0;
  int64_t records_seen = 0;
  int64_t records_at_checkpoint = 0;
  int64_t records_forgotten = 0;  // as conversations ended
};

// Runs the turns through a fresh instance, windows of `window` (0: one go); with
// `checkpoint_at` > 0, the instance is saved there and the rest runs on a loaded copy.
// With `forget`, before each arrival the instance forgets the conversations that ended
// before it, as a fleet has it do.
Outcome Simulate(const std::function<std::unique_ptr<Instance>()>& make,
                 const std::vector<Turn>& turns, int64_t block, bool families, SimTime window,
                 SimTime checkpoint_at = 0, bool forget = false) {
  std::unique_ptr<Instance> instance = make();
  Outcome outcome;
  const auto observe = [&outcome](Instance& i) {
    i.OnStep([&outcome](const StepRecord& s) { outcome.steps.push_back(s); });
  };
  observe(*instance);
  SimTime next_window = window;
  bool checkpointed = checkpoint_at <= 0;
  const auto run_until = [&](SimTime until) {
    for (; window > 0 && next_window < until; next_window += window) {
      instance->RunUntil(next_window);
      outcome.records_seen = std::max(outcome.records_seen, instance->kv_cache().family_records());
      if (!checkpointed && next_window >= checkpoint_at) {
        checkpointed = true;
        outcome.catch_ups += instance->kv_cache().family_catch_ups();
        outcome.records_at_checkpoint = instance->kv_cache().family_records();
        CheckpointWriter w;
        instance->Save(w);
        instance = make();
        observe(*instance);
        CheckpointReader r(w.bytes(), "test checkpoint");
        instance->Load(r);
      }
    }
    instance->RunUntil(until);
  };
  for (std::size_t i = 0; i < turns.size(); ++i) {
    run_until(turns[i].arrival);
    if (forget) {  // every turn arriving before this one has been handed over
      const int64_t before = instance->kv_cache().family_records();
      instance->ForgetEndedConversations(turns[i].arrival);
      outcome.records_forgotten += before - instance->kv_cache().family_records();
    }
    instance->Arrive(RequestOf(turns[i], static_cast<int64_t>(i), block, families),
                     turns[i].arrival);
  }
  if (window > 0) {
    while (!instance->idle() && instance->NextEventTime() != kNever)
      run_until(next_window + 1);
  }
  instance->RunUntil(kNever);
  outcome.records = instance->records();
  std::sort(outcome.records.begin(), outcome.records.end(),
            [](const RequestRecord& a, const RequestRecord& b) { return a.id < b.id; });
  outcome.catch_ups += instance->kv_cache().family_catch_ups();
  return outcome;
}

void ExpectIdentical(const Outcome& eager, const Outcome& lazy) {
  ASSERT_EQ(eager.records.size(), lazy.records.size());
  for (std::size_t i = 0; i < eager.records.size(); ++i) {
    const RequestRecord& a = eager.records[i];
    const RequestRecord& b = lazy.records[i];
    SCOPED_TRACE(a.name);
    EXPECT_EQ(a.first_scheduled, b.first_scheduled);
    EXPECT_EQ(a.first_token, b.first_token);
    EXPECT_EQ(a.finish, b.finish);
    EXPECT_EQ(a.cached_tokens, b.cached_tokens);
    EXPECT_EQ(a.preemptions, b.preemptions);
    EXPECT_EQ(a.state, b.state);
    if (::testing::Test::HasFailure()) return;
  }
  ASSERT_EQ(eager.steps.size(), lazy.steps.size());
  for (std::size_t i = 0; i < eager.steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(eager.steps[i].start, lazy.steps[i].start);
    EXPECT_EQ(eager.steps[i].duration, lazy.steps[i].duration);
    EXPECT_EQ(eager.steps[i].prefill_tokens, lazy.steps[i].prefill_tokens);
    EXPECT_EQ(eager.steps[i].preemptions, lazy.steps[i].preemptions);
    EXPECT_DOUBLE_EQ(eager.steps[i].kv_usage, lazy.steps[i].kv_usage);
    if (::testing::Test::HasFailure()) return;
  }
}

int64_t HitTokens(const Outcome& outcome) {
  int64_t hits = 0;
  for (const RequestRecord& r : outcome.records)
    hits += r.cached_tokens;
  return hits;
}

int Preemptions(const Outcome& outcome) {
  int preemptions = 0;
  for (const RequestRecord& r : outcome.records)
    preemptions += r.preemptions;
  return preemptions;
}

TEST(ConversationCache, LazyConversationBlocksGiveTheResultsOfCachingThemAll) {
  testing::SyntheticBundle bundle;
  testing::WriteDenseBundle(bundle);
  for (int64_t block : {4, 16}) {
    // A tight pool -- room for the longest turn and a few blocks more: preemptions, and
    // evictions of what an earlier turn left -- and a roomy one.
    int64_t longest = 0;
    for (uint32_t seed : {1u, 2u, 3u}) {
      for (const Turn& turn : Conversations(seed, block, 40))
        longest = std::max(longest, (turn.prompt_tokens + turn.output_tokens + block - 1) / block);
    }
    for (int64_t blocks : {longest + 6, int64_t{4000}}) {
      EngineConfig config;
      config.enable_prefix_caching = true;
      config.block_size = block;
      config.max_num_batched_tokens = 512;
      config.max_model_len = 4096;
      const EngineSetup setup =
          testing::EngineWithBlocks("llama-3.1-8b", bundle.dir(), config, blocks);
      const auto make = [&setup] { return setup.MakeInstance(); };
      int64_t catch_ups = 0;
      int64_t records = 0;
      int64_t records_saved = 0;
      int64_t forgotten = 0;
      int preemptions = 0;
      for (uint32_t seed : {1u, 2u, 3u}) {
        for (bool elsewhere : {false, true}) {
          // With `elsewhere`, a third of the turns go to other instances, as a router by
          // load sends them: records here then outlive their conversations.
          const std::vector<Turn> turns = elsewhere ? SomeTurns(Conversations(seed, block, 40))
                                                    : Conversations(seed, block, 40);
          for (SimTime window : {SimTime{0}, SimTime{5'000'000}}) {
            SCOPED_TRACE("block " + std::to_string(block) + " blocks " + std::to_string(blocks) +
                         " seed " + std::to_string(seed) + " window " + std::to_string(window) +
                         (elsewhere ? " some turns elsewhere" : ""));
            const Outcome eager = Simulate(make, turns, block, false, window);
            const Outcome lazy = Simulate(make, turns, block, true, window);
            EXPECT_EQ(eager.catch_ups, 0);
            EXPECT_GT(HitTokens(eager), 0);
            ExpectIdentical(eager, lazy);
            catch_ups += lazy.catch_ups;
            records += lazy.records_seen;
            preemptions += Preemptions(eager);
            if (window > 0) {  // saved in the middle and run on from the copy
              const Outcome restarted = Simulate(make, turns, block, true, window, 400'000'000);
              ExpectIdentical(eager, restarted);
              records_saved += restarted.records_at_checkpoint;
            }
            // Forgetting the records of ended conversations changes nothing either.
            const Outcome forgetting = Simulate(make, turns, block, true, window, 0, true);
            ExpectIdentical(eager, forgetting);
            forgotten += forgetting.records_forgotten;
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
      // The lazy path was taken: records kept and made good, turns' held blocks too.
      EXPECT_GT(catch_ups, 0);
      EXPECT_GT(records, 0);
      EXPECT_GT(records_saved, 0);  // the checkpoints held records
      EXPECT_GT(forgotten, 0);      // records were forgotten as their conversations ended
      if (blocks < 1000) {
        EXPECT_GT(preemptions, 0) << "the tight pool really is tight";
      }
    }
  }
}

}  // namespace
}  // namespace fleetsim
