#include "workload/generator.h"

#include <algorithm>
#include <filesystem>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/random.h"
#include "core/yaml_section.h"
#include "workload/generator_arrivals.h"
#include "workload/generator_prompt.h"
#include "workload/generator_random.h"
#include "workload/generator_spec.h"

namespace fleetsim {
namespace {

using workload_gen::ArrivalProcess;
using workload_gen::GeneratorSpec;
using workload_gen::LengthDistribution;
using workload_gen::PromptBuilder;
using workload_gen::StreamPurpose;
using workload_gen::StreamSeed;

// The stopping rules (num_requests, duration_s) shared by both kinds of workload; a
// subclass produces the unbounded stream in arrival order.
class GeneratedWorkload : public WorkloadSource {
 public:
  GeneratedWorkload(GeneratorSpec spec, std::string path)
      : spec_(std::move(spec)), path_(std::move(path)), stop_(spec_.num_requests, spec_.duration) {
    double sum = 0;
    for (const workload_gen::RequestClassSpec& c : spec_.classes)
      cumulative_weights_.push_back(sum += c.weight);
  }
  std::string format() const override { return "generator"; }
  std::string path() const override { return path_; }
  std::optional<int64_t> expected_requests() const override { return spec_.num_requests; }

  std::optional<WorkloadRequest> Next() final {
    if (stop_.Ended()) return std::nullopt;
    std::optional<WorkloadRequest> request = Produce();
    if (!stop_.Admit(request ? std::optional<SimTime>(request->arrival) : std::nullopt))
      return std::nullopt;
    return request;
  }

  std::optional<SimTime> PassOver() final {
    if (stop_.Ended()) return std::nullopt;
    const std::optional<SimTime> arrival = ProduceArrival();
    return stop_.Admit(arrival) ? arrival : std::nullopt;
  }

 protected:
  virtual std::optional<WorkloadRequest> Produce() = 0;
  // The next request's arrival alone (where can_pass_over()).
  virtual std::optional<SimTime> ProduceArrival() { return WorkloadSource::PassOver(); }

  uint64_t Stream(StreamPurpose purpose, int64_t a = 0, int64_t b = 0) const {
    return StreamSeed(spec_.seed, purpose, static_cast<uint64_t>(a), static_cast<uint64_t>(b));
  }

  // What a request of one class draws from and asks for.
  struct RequestClass {
    const LengthDistribution* input_tokens;
    const LengthDistribution* output_tokens;
    const std::string* model;
    int model_line;
  };
  // The class of entity `entity` (a request, or a session), drawn by weight from its own
  // stream; the spec itself when it has no classes (and then nothing is drawn).
  RequestClass ClassOf(int64_t entity) const {
    if (spec_.classes.empty())
      return {&spec_.input_tokens, &spec_.output_tokens, &spec_.model, spec_.model_line};
    Rng rng(Stream(StreamPurpose::kClass, entity));
    const double x = rng.Uniform() * cumulative_weights_.back();
    std::size_t k = 0;
    while (k + 1 < cumulative_weights_.size() && cumulative_weights_[k] <= x)
      ++k;
    const workload_gen::RequestClassSpec& c = spec_.classes[k];
    const bool own_model = !c.model.empty();
    return {c.input_tokens ? &*c.input_tokens : &spec_.input_tokens,
            c.output_tokens ? &*c.output_tokens : &spec_.output_tokens,
            own_model ? &c.model : &spec_.model, own_model ? c.model_line : spec_.model_line};
  }
  static void Label(WorkloadRequest& r, const RequestClass& c) {
    r.model = *c.model;
    r.line = c.model_line;
  }

  const GeneratorSpec spec_;

 private:
  std::string path_;
  StopRule stop_;                           // num_requests, duration_s
  std::vector<double> cumulative_weights_;  // of the classes, in their order
};

class IndependentRequests : public GeneratedWorkload {
 public:
  IndependentRequests(GeneratorSpec spec, std::string path)
      : GeneratedWorkload(std::move(spec), std::move(path)),
        arrivals_(spec_.arrivals, Stream(StreamPurpose::kArrivals)) {}
  // A request's content comes from its own streams, keyed by its index: only the
  // arrivals are one stream through all of them.
  bool can_pass_over() const override { return true; }

 private:
  std::optional<SimTime> ProduceArrival() override {
    ++next_index_;
    return arrivals_.Next();
  }

  std::optional<WorkloadRequest> Produce() override {
    const int64_t i = next_index_++;
    WorkloadRequest r;
    r.id = "r" + std::to_string(i);
    r.arrival = arrivals_.Next();
    const RequestClass c = ClassOf(i);
    Label(r, c);
    Rng rng(Stream(StreamPurpose::kLengths, i));
    const int64_t input = c.input_tokens->Sample(rng);
    r.output_tokens = c.output_tokens->Sample(rng);
    // Its family: its own prompt's content id, unique to it like the request.
    PromptBuilder prompt(spec_.hash_block_size, Stream(StreamPurpose::kPrompt, i));
    int64_t shared = 0;
    if (spec_.shared_prefix && rng.Uniform() < spec_.shared_prefix->fraction) {
      // A prompt shorter than the prefix is all prefix: its blocks still match others'.
      shared = std::min(input, spec_.shared_prefix->tokens);
      prompt.Append(Stream(StreamPurpose::kSharedPrefix), shared);
    }
    prompt.Append(Stream(StreamPurpose::kPrompt, i), input - shared);
    r.input_tokens = prompt.tokens();
    r.block_hashes = prompt.block_hashes();
    r.hash_block_size = spec_.hash_block_size;
    // Only the shared prefix's blocks can be another request's: the rest are its own.
    if (spec_.hash_block_size > 0) r.shared_hashes = shared / spec_.hash_block_size;
    return r;
  }

  ArrivalProcess arrivals_;
  int64_t next_index_ = 0;
};

class Sessions : public GeneratedWorkload {
 public:
  Sessions(GeneratorSpec spec, std::string path)
      : GeneratedWorkload(std::move(spec), std::move(path)),
        arrivals_(spec_.arrivals, Stream(StreamPurpose::kArrivals)),
        next_start_(arrivals_.Next()) {}
  // A turn depends only on its own session's earlier turns, which a reader moves on without
  // making them (NextTurn): every rank can keep the whole set of sessions in step and make
  // only its gateways' turns.
  bool can_pass_over() const override { return true; }

 private:
  // One conversation in progress: its history so far and when its next turn arrives.
  struct Session {
    int64_t id = 0;
    int64_t turns = 0;
    int64_t next_turn = 0;
    SimTime next_arrival = 0;
    SimTime last_arrival = -1;  // its last turn's (-1: not yet known)
    // Hashes the turns so far sent (the last one's prompt blocks): other requests -- this
    // conversation's earlier turns, which may still be running -- can produce those.
    int64_t sent_hashes = 0;
    PromptBuilder prompt{0, 0};  // replaced when the session starts
    RequestClass kind{};         // every turn of a conversation is of one class
  };
  // A session's next turn in the heap: its key and the session's slot (a key moves
  // through the heap more cheaply than a conversation's history).
  struct Turn {
    SimTime arrival = 0;
    int64_t session = 0;
    int64_t turn = 0;
    std::size_t slot = 0;
    auto Key() const { return std::make_tuple(arrival, session, turn); }
  };
  // Orders the heap so that its front is the earliest (time, session, turn).
  static bool Later(const Turn& a, const Turn& b) { return a.Key() > b.Key(); }

  void Enqueue(std::size_t slot) {
    const Session& s = sessions_[slot];
    pending_.push_back({s.next_arrival, s.id, s.next_turn, slot});
    std::push_heap(pending_.begin(), pending_.end(), Later);
  }

  bool MayStart() const {
    const auto& count = spec_.sessions->count;
    return !count || next_session_ < *count;
  }

  void StartSession() {
    std::size_t slot = sessions_.size();
    if (free_slots_.empty()) {
      sessions_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    Session& s = sessions_[slot];
    s.id = next_session_++;
    s.next_arrival = next_start_;
    s.kind = ClassOf(s.id);
    Rng turns(Stream(StreamPurpose::kSessionTurns, s.id));
    s.turns = spec_.sessions->turns.Sample(turns);
    // Its family: a seed unique to the session (the one its turn count is drawn from).
    s.prompt = PromptBuilder(spec_.hash_block_size, Stream(StreamPurpose::kSessionTurns, s.id));
    s.prompt.Append(Stream(StreamPurpose::kSystemPrompt), spec_.sessions->system_prompt_tokens);
    // The system prompt's blocks are every conversation's.
    if (spec_.hash_block_size > 0)
      s.sent_hashes = spec_.sessions->system_prompt_tokens / spec_.hash_block_size;
    Enqueue(slot);
    next_start_ = arrivals_.Next();
  }

  // When the turn after `turn` of session `session` arrives, `turn` having arrived at
  // `arrival`. Saturating, as ArrivalProcess::Next does: a tail draw must not overflow the
  // clock.
  SimTime AfterThinking(SimTime arrival, int64_t session, int64_t turn) const {
    Rng think(Stream(StreamPurpose::kThinkTime, session, turn));
    const double think_s = think.Exponential() * spec_.sessions->think_time_s;
    return std::min(arrival + SecondsToSimTime(std::min(think_s, kMaxSimSeconds)), 2 * kMaxSimTime);
  }

  std::optional<WorkloadRequest> Produce() override { return NextTurn(true); }
  std::optional<SimTime> ProduceArrival() override {
    const std::optional<WorkloadRequest> turn = NextTurn(false);
    return turn ? std::optional<SimTime>(turn->arrival) : std::nullopt;
  }

  // The next turn of whichever session comes first; with `make` false only its arrival is
  // filled in, but every session moves on exactly as when it is made (the same draws, the
  // same pieces of history), which is all a later turn depends on.
  std::optional<WorkloadRequest> NextTurn(bool make) {
    // Start sessions lazily, exactly when their first turn is the next request, so the
    // output is a prefix of the same unbounded stream whatever the stopping rule.
    while (MayStart() && (pending_.empty() || std::make_tuple(next_start_, next_session_,
                                                              int64_t{0}) < pending_[0].Key())) {
      StartSession();
    }
    if (pending_.empty()) return std::nullopt;
    std::pop_heap(pending_.begin(), pending_.end(), Later);
    const std::size_t slot = pending_.back().slot;
    pending_.pop_back();
    Session& s = sessions_[slot];

    const int64_t turn = s.next_turn++;
    WorkloadRequest r;
    r.arrival = s.next_arrival;
    Rng rng(Stream(StreamPurpose::kLengths, s.id, turn));
    s.prompt.Append(Stream(StreamPurpose::kUserMessage, s.id, turn),
                    s.kind.input_tokens->Sample(rng));
    r.output_tokens = s.kind.output_tokens->Sample(rng);
    if (make) {
      r.id = "s" + std::to_string(s.id) + "-t" + std::to_string(turn);
      Label(r, s.kind);
      r.input_tokens = s.prompt.tokens();
      r.block_hashes = s.prompt.block_hashes();
      r.hash_block_size = spec_.hash_block_size;
      // The last turn's hashes past what earlier turns sent are its own: no later turn will
      // send them again, so no other request can hit those blocks.
      if (s.next_turn == s.turns && spec_.hash_block_size > 0) r.shared_hashes = s.sent_hashes;
      // Past the system prompt, only this conversation's turns have its hashes.
      if (spec_.hash_block_size > 0) {
        r.family = s.prompt.own_name();
        r.family_hashes_from = s.prompt.first_piece_blocks();
        if (s.last_arrival < 0) {
          // Each think time has a stream of its own, so the last turn's arrival is known
          // from any turn's (worked out when a turn is first made, not on passing over).
          s.last_arrival = r.arrival;
          for (int64_t later = turn; later + 1 < s.turns; ++later)
            s.last_arrival = AfterThinking(s.last_arrival, s.id, later);
        }
        r.family_ends = s.last_arrival;
      }
    }
    if (spec_.hash_block_size > 0) s.sent_hashes = s.prompt.tokens() / spec_.hash_block_size;

    if (s.next_turn < s.turns) {
      s.prompt.Append(Stream(StreamPurpose::kOutput, s.id, turn), r.output_tokens);
      s.next_arrival = AfterThinking(s.next_arrival, s.id, turn);
      Enqueue(slot);
    } else {
      s = Session{};  // its history goes; the slot serves a later session
      free_slots_.push_back(slot);
    }
    return r;
  }

  ArrivalProcess arrivals_;
  SimTime next_start_;
  int64_t next_session_ = 0;
  std::vector<Session> sessions_;        // the active ones, by slot
  std::vector<std::size_t> free_slots_;  // slots of ended sessions
  std::vector<Turn> pending_;            // a min-heap by Key(): one entry per active session
};

}  // namespace

bool IsGeneratorSpec(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext != ".yaml" && ext != ".yml") return false;
  try {
    const YAML::Node doc = YAML::LoadFile(path);
    return doc.IsMap() && doc["generator"].IsDefined();
  } catch (const YAML::BadFile&) {
    return false;
  } catch (const YAML::Exception&) {
    return true;  // let OpenGeneratedWorkload report where the syntax is wrong
  }
}

std::unique_ptr<WorkloadSource> OpenGeneratedWorkload(const std::string& spec_path) {
  GeneratorSpec spec = GeneratorSpec::Parse(LoadYamlFile(spec_path));
  if (spec.sessions) return std::make_unique<Sessions>(std::move(spec), spec_path);
  return std::make_unique<IndependentRequests>(std::move(spec), spec_path);
}

}  // namespace fleetsim
