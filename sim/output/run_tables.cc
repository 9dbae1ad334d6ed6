#include "output/run_tables.h"

namespace fleetsim::output {

#define FLEETSIM_COLUMN(schema, Row, Type, field) schema.Type(#field, offsetof(Row, field))
#define FLEETSIM_STRING(schema, Row, field) \
  schema.String(#field, offsetof(Row, field), sizeof(Row::field))

TableSchema RequestSchema() {
  TableSchema s(sizeof(RequestRow));
  FLEETSIM_COLUMN(s, RequestRow, Int64, id);
  FLEETSIM_STRING(s, RequestRow, name);
  FLEETSIM_COLUMN(s, RequestRow, Int32, instance);
  FLEETSIM_COLUMN(s, RequestRow, Int32, preemptions);
  FLEETSIM_COLUMN(s, RequestRow, Int32, gateway);
  FLEETSIM_COLUMN(s, RequestRow, Int64, arrival_ns);
  FLEETSIM_COLUMN(s, RequestRow, Int64, input_tokens);
  FLEETSIM_COLUMN(s, RequestRow, Int64, output_tokens);
  FLEETSIM_COLUMN(s, RequestRow, Int64, cached_tokens);
  FLEETSIM_COLUMN(s, RequestRow, Int64, queue_delay_ns);
  FLEETSIM_COLUMN(s, RequestRow, Int64, first_token_ns);
  FLEETSIM_COLUMN(s, RequestRow, Int64, finish_ns);
  FLEETSIM_COLUMN(s, RequestRow, Float64, ttft_s);
  FLEETSIM_COLUMN(s, RequestRow, Float64, tpot_s);
  FLEETSIM_COLUMN(s, RequestRow, Float64, e2e_s);
  FLEETSIM_STRING(s, RequestRow, state);
  FLEETSIM_STRING(s, RequestRow, reason);
  return s;
}

TableSchema InstanceSchema() {
  TableSchema s(sizeof(InstanceRow));
  FLEETSIM_COLUMN(s, InstanceRow, Int32, id);
  FLEETSIM_COLUMN(s, InstanceRow, Int32, tp);
  FLEETSIM_STRING(s, InstanceRow, group);
  FLEETSIM_STRING(s, InstanceRow, hardware);
  FLEETSIM_STRING(s, InstanceRow, model);
  FLEETSIM_STRING(s, InstanceRow, pool);
  FLEETSIM_COLUMN(s, InstanceRow, Int32, node);
  FLEETSIM_COLUMN(s, InstanceRow, Int32, first_gpu);
  FLEETSIM_COLUMN(s, InstanceRow, Float64, capacity_tokens_per_s);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, block_size);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, pool_blocks);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, steps);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, busy_ns);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, requests);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, prompt_tokens);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, output_tokens);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, preemptions);
  FLEETSIM_COLUMN(s, InstanceRow, Int64, prefix_hit_tokens);
  return s;
}

TableSchema SummarySchema() {
  TableSchema s(sizeof(SummaryRow));
  FLEETSIM_STRING(s, SummaryRow, group);
  FLEETSIM_COLUMN(s, SummaryRow, Int64, requests);
  FLEETSIM_COLUMN(s, SummaryRow, Int64, finished);
  FLEETSIM_COLUMN(s, SummaryRow, Int64, rejected);
  FLEETSIM_COLUMN(s, SummaryRow, Int64, unfinished);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, duration_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, throughput_rps);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, output_tokens_per_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, goodput_rps);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, slo_attainment);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p50_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p90_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, ttft_p99_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p50_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p90_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, tpot_p99_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p50_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p90_s);
  FLEETSIM_COLUMN(s, SummaryRow, Float64, e2e_p99_s);
  return s;
}

TableSchema StepSchema() {
  TableSchema s(sizeof(StepRow));
  FLEETSIM_COLUMN(s, StepRow, Int32, instance);
  FLEETSIM_COLUMN(s, StepRow, Int64, start_ns);
  FLEETSIM_COLUMN(s, StepRow, Int64, duration_ns);
  FLEETSIM_COLUMN(s, StepRow, Int64, prefill_tokens);
  FLEETSIM_COLUMN(s, StepRow, Int64, prefill_chunks);
  FLEETSIM_COLUMN(s, StepRow, Int64, decodes);
  FLEETSIM_COLUMN(s, StepRow, Float64, decode_context_mean);
  FLEETSIM_COLUMN(s, StepRow, Int64, decode_context_max);
  FLEETSIM_COLUMN(s, StepRow, Int64, generated_tokens);
  FLEETSIM_COLUMN(s, StepRow, Int64, preemptions);
  FLEETSIM_COLUMN(s, StepRow, Int64, cache_hit_tokens);
  FLEETSIM_COLUMN(s, StepRow, Int64, running);
  FLEETSIM_COLUMN(s, StepRow, Int64, waiting);
  FLEETSIM_COLUMN(s, StepRow, Float64, kv_usage);
  return s;
}

TableSchema TimeseriesSchema() {
  TableSchema s(sizeof(TimeseriesRow));
  FLEETSIM_STRING(s, TimeseriesRow, group);
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, time_s);
  FLEETSIM_COLUMN(s, TimeseriesRow, Int64, running);
  FLEETSIM_COLUMN(s, TimeseriesRow, Int64, waiting);
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, kv_usage);
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, prompt_tokens_per_s);
  FLEETSIM_COLUMN(s, TimeseriesRow, Float64, generation_tokens_per_s);
  return s;
}

#undef FLEETSIM_COLUMN
#undef FLEETSIM_STRING

}  // namespace fleetsim::output
