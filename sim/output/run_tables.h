// The tables of a run's HDF5 file, as plain rows with their schemas (SPEC.md, Outputs):
//   /requests   one row per request of the workload, in id order
//   /instances  one row per engine instance
//   /summary    one row per instance group, then one for the whole fleet
//   /steps      one row per engine step (only with --trace-steps)
//   /timeseries one row per instance group and interval, then the fleet's
// Times are integer nanoseconds (*_ns) or seconds as float64 (*_s); every column's unit is
// in its table's `units` attribute. Strings are fixed-length UTF-8 (parallel HDF5 1.10
// cannot write variable-length strings collectively), as wide as a name may be: a longer
// one is refused, never cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/input_error.h"
#include "core/request_name.h"
#include "output/table_schema.h"

namespace fleetsim::output {

struct RequestRow {
  int64_t id;
  char name[kMaxRequestIdBytes];
  int32_t instance;  // -1: never reached one (arrived at its gateway after the horizon)
  int32_t preemptions;
  int32_t gateway;
  int32_t prefill_instance;  // -1: none (served by a mixed instance, or never routed)
  int64_t arrival_ns;        // at the gateway: the trace time
  int64_t input_tokens;
  int64_t output_tokens;
  int64_t cached_tokens;
  int64_t queue_delay_ns;  // first scheduled - arrival; -1 when never scheduled
  int64_t first_token_ns;  // at the client; -1 when none
  int64_t finish_ns;       // at the client; -1 when not finished
  double ttft_s;           // NaN when not defined
  double tpot_s;
  double e2e_s;
  // Prefill/decode disaggregation (docs/DISAGGREGATION.md); -1 (and 0 bytes) otherwise.
  int32_t decode_instance;  // where the prefill instance handed it (it reached it)
  // The DP rank of a data-parallel instance that served it (its front end's choice); -1
  // on an instance without data parallelism (docs/OUTPUT.md).
  int32_t dp_rank;
  int64_t transfer_start_ns;  // the decode instance starts reading the KV
  int64_t transfer_end_ns;    // the KV is in its blocks: the request arrives there
  int64_t transfer_bytes;
  char state[16];   // finished, rejected, unfinished
  char reason[24];  // why rejected ("" otherwise)
};

struct InstanceRow {
  int32_t id;
  int32_t tp;
  char group[kMaxLabelBytes];
  char hardware[kMaxLabelBytes];
  char model[kMaxLabelBytes];
  char pool[kMaxLabelBytes];
  int32_t node;                  // node index within the pool
  int32_t first_gpu;             // first GPU on that node; TP ranks take the next tp - 1
  double capacity_tokens_per_s;  // bundle throughput of a saturated step (router weight)
  int64_t block_size;
  int64_t pool_blocks;
  int64_t steps;
  int64_t busy_ns;
  int64_t requests;
  int64_t prompt_tokens;
  int64_t output_tokens;
  int64_t preemptions;
  int64_t prefix_hit_tokens;
  char role[8];  // mixed, prefill, decode
  int32_t dp;    // data-parallel ranks (each of tp GPUs; 1: none)
  int32_t unused;
};

struct SummaryRow {
  char group[kMaxLabelBytes];  // an instance group, or "fleet"
  int64_t requests;
  int64_t finished;
  int64_t rejected;
  int64_t unfinished;
  double duration_s;      // first arrival to last finish
  double throughput_rps;  // finished requests per second
  double output_tokens_per_s;
  double goodput_rps;     // finished within both SLOs, per second
  double slo_attainment;  // fraction of all requests within both SLOs
  double ttft_p50_s, ttft_p90_s, ttft_p99_s;
  double tpot_p50_s, tpot_p90_s, tpot_p99_s;
  double e2e_p50_s, e2e_p90_s, e2e_p99_s;
};

struct StepRow {
  int32_t instance;
  int32_t draft_tokens;  // speculative decoding: drafts verified (0 without)
  int64_t start_ns;
  int64_t duration_ns;
  int64_t prefill_tokens;
  int64_t prefill_chunks;
  int64_t decodes;
  int64_t generated_tokens;
  int64_t preemptions;
  int64_t cache_hit_tokens;
  int64_t running;
  int64_t waiting;
  double kv_usage;
  // The decodes' contexts: their mean and the longest (the spread the skew correction
  // prices; 0 without decodes).
  double decode_context_mean;
  int64_t decode_context_max;
  int32_t accepted_tokens;  // of draft_tokens, those the target accepted
  // A data-parallel instance's rows: one per DP rank per lock-step (a rank without work
  // ran a dummy batch: no tokens); -1 for an instance without data parallelism.
  int32_t dp_rank;
};

// One instance group's state at the start of an interval of /timeseries, and its
// throughput over the interval.
struct TimeseriesRow {
  char group[kMaxLabelBytes];
  double time_s;  // interval start
  int64_t running;
  int64_t waiting;
  double kv_usage;  // blocks held by requests / usable blocks, over the group
  double prompt_tokens_per_s;
  double generation_tokens_per_s;
};

TableSchema RequestSchema();
TableSchema InstanceSchema();
TableSchema SummarySchema();
TableSchema StepSchema();
TableSchema TimeseriesSchema();

// Copies `text` into a fixed-length field, NUL-padded. A text longer than the field is
// refused (InputError), never cut: two names must never become one in the output.
template <std::size_t N>
void CopyName(char (&field)[N], std::string_view text) {
  if (text.size() > N) {
    throw InputError("", 0, "",
                     "name " + QuoteInput(text) + " is longer than the " + std::to_string(N) +
                         " bytes the output's name columns hold");
  }
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), text.size());
}

}  // namespace fleetsim::output
