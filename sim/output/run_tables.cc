#include "output/run_tables.h"

namespace fleetsim::output {

#define FLEETSIM_COLUMN(schema, Row, Type, field, unit) \
  schema.Type(#field, offsetof(Row, field), unit)
#define FLEETSIM_STRING(schema, Row, field) \
  schema.String(#field, offsetof(Row, field), sizeof(Row::field))

TableSchema RequestSchema() {
  TableSchema s(sizeof(RequestRow));
  FLEETSIM_COLUMN(s, RequestRow, Int64, id, "index");
  FLEETSIM_STRING(s, RequestRow, name);
  FLEETSIM_COLUMN(s, RequestRow, Int32, instance, "index");
  FLEETSIM_COLUMN(s, RequestRow, Int32, preemptions, "preemptions");
  FLEETSIM_COLUMN(s, RequestRow, Int32, gateway, "index");
  FLEETSIM_COLUMN(s, RequestRow, Int64, arrival_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Int64, input_tokens, "tokens");
  FLEETSIM_COLUMN(s, RequestRow, Int64, output_tokens, "tokens");
  FLEETSIM_COLUMN(s, RequestRow, Int64, cached_tokens, "tokens");
  FLEETSIM_COLUMN(s, RequestRow, Int64, queue_delay_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Int64, first_token_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Int64, finish_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Float64, ttft_s, "s");
  FLEETSIM_COLUMN(s, RequestRow, Float64, tpot_s, "s");
  FLEETSIM_COLUMN(s, RequestRow, Float64, e2e_s, "s");
  FLEETSIM_COLUMN(s, RequestRow, Int32, prefill_instance, "index");
  FLEETSIM_COLUMN(s, RequestRow, Int32, decode_instance, "index");
  FLEETSIM_COLUMN(s, RequestRow, Int32, dp_rank, "index");
  FLEETSIM_COLUMN(s, RequestRow, Int64, transfer_start_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Int64, transfer_end_ns, "ns");
  FLEETSIM_COLUMN(s, RequestRow, Int64, transfer_bytes, "bytes");
  FLEETSIM_STRING(s, RequestRow, state);
  FLEETSIM_STRING(s, RequestRow, reason);
  return s;
}

TableSchema InstanceSchema() {
  TableSchema s(sizeof(InstanceRow));
  FLEETSIM_COLUMN(s, InstanceRow, Int32, id, "index");
  FLEETSIM_COLUMN(s, InstanceRow, Int32, tp, "GPUs");
  FLEETSIM_COLUMN(s, InstanceRow, Int32, dp, "ranks");
  FLEETSIM_STRING(s, InstanceRow, group);
  FLEETSIM_STRING(s, InstanceRow, hardware);
  FLEETSIM_STRING(s, InstanceRow, model);
  FLEETSIM_STRING(s, InstanceRow, pool);
  FLEETSIM_COLUMN(s, InstanceRow, Int32, node, "index");
  FLEETSIM_COLUMN(s, InstanceRow, Int32, first_gpu, "index");
  FLEETSIM_COLUMN(s, InstanceRow, Float64, capacity_tokens_per_s, "tokens/s");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, block_size, "tokens");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, pool_blocks, "blocks");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, steps, "steps");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, busy_ns, "ns");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, requests, "requests");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, prompt_tokens, "tokens");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, output_tokens, "tokens");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, preemptions, "preemptions");
  FLEETSIM_COLUMN(s, InstanceRow, Int64, prefix_hit_tokens, "tokens");
  FLEETSIM_STRING(s, InstanceRow, role);
  return s;
}

TableSchema SummarySchema() {
  TableSchema s(sizeof(SummaryRow));
  FLEETSIM_STRING(s, SummaryRow, group);
  FLEETSIM_COLUMN(s, SummaryRow, Int64, requests, "requests");
  FLEETSIM_COLUMN(s, SummaryRow, Int64, finished, "requests");
  FLEETSIM_COLUMN(s, SummaryRow, Int64, rejected, "requests");
  FLEETSIM_COLUMN(s, SummaryRow, Int64, unfinished, "requests");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, duration_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, throughput_rps, "requests/s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, output_tokens_per_s, "tokens/s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, goodput_rps, "requests/s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, slo_attainment, "fraction");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p50_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p90_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p99_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p50_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p90_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p99_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p50_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p90_s, "s");
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p99_s, "s");
  return s;
}

TableSchema StepSchema() {
  TableSchema s(sizeof(StepRow));
  FLEETSIM_COLUMN(s, StepRow, Int32, instance, "index");
  FLEETSIM_COLUMN(s, StepRow, Int32, dp_rank, "index");
  FLEETSIM_COLUMN(s, StepRow, Int64, start_ns, "ns");
  FLEETSIM_COLUMN(s, StepRow, Int64, duration_ns, "ns");
  FLEETSIM_COLUMN(s, StepRow, Int64, prefill_tokens, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int64, prefill_chunks, "requests");
  FLEETSIM_COLUMN(s, StepRow, Int64, decodes, "requests");
  FLEETSIM_COLUMN(s, StepRow, Float64, decode_context_mean, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int64, decode_context_max, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int64, generated_tokens, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int32, draft_tokens, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int32, accepted_tokens, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int64, preemptions, "preemptions");
  FLEETSIM_COLUMN(s, StepRow, Int64, cache_hit_tokens, "tokens");
  FLEETSIM_COLUMN(s, StepRow, Int64, running, "requests");
  FLEETSIM_COLUMN(s, StepRow, Int64, waiting, "requests");
  FLEETSIM_COLUMN(s, StepRow, Float64, kv_usage, "fraction");
  return s;
}

TableSchema TimeseriesSchema() {
  TableSchema s(sizeof(TimeseriesRow));
  FLEETSIM_STRING(s, TimeseriesRow, group);
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, time_s, "s");
  FLEETSIM_COLUMN(s, TimeseriesRow, Int64, running, "requests");
  FLEETSIM_COLUMN(s, TimeseriesRow, Int64, waiting, "requests");
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, kv_usage, "fraction");
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, prompt_tokens_per_s, "tokens/s");
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, generation_tokens_per_s, "tokens/s");
  return s;
}

#undef FLEETSIM_COLUMN
#undef FLEETSIM_STRING

}  // namespace fleetsim::output
