// Seeded synthetic workloads: a WorkloadSource that makes requests on demand from a YAML
// spec, instead of reading a trace. Memory does not grow with the number of requests.
//
//   generator:
//     seed: 42
//     num_requests: 1000     # and/or duration_s: 600; stops at whichever comes first
//     arrivals: {process: poisson, rate_per_s: 5.0}   # poisson | gamma (cv) | constant
//     input_tokens: {distribution: lognormal, median: 1000, sigma: 0.8, min: 1, max: 32768}
//     output_tokens: {distribution: uniform, min: 32, max: 512}
//     # optional: multi-turn conversations
//     sessions: {count: 50, turns: {distribution: uniform, min: 2, max: 6},
//                think_time_s: 5.0, system_prompt_tokens: 800}
//     # optional, without sessions: requests (a fraction of them) open with a common prefix
//     shared_prefix: {tokens: 512, fraction: 0.5}
//     hash_block_size: 16    # optional: emit per-full-block prefix hashes (generator_prompt.h)
//     model: llama-3.1-8b    # optional: the model every request asks for (else none: any group)
//     # optional: a mix of request classes, each its share (weight), model and lengths
//     classes:
//       - {weight: 3, model: llama-3.1-8b}
//       - {weight: 1, model: llama-3.1-70b, output_tokens: {distribution: fixed, value: 600}}
//
// Distributions are in workload/generator_lengths.h, arrival processes in
// workload/generator_arrivals.h. The first arrival is at time 0.
//
// Without sessions, each request is independent; its prompt shares nothing with others
// beyond the optional shared prefix. With sessions, `arrivals` paces session starts and
// `input_tokens` is each turn's new user message: turn k's prompt is the system prompt
// (the same in every session), then every earlier turn's message and output, then the new
// message. Turn k arrives an exponential think time (mean think_time_s) after turn k-1's
// arrival. Requests come out in (arrival, session, turn) order.
//
// With classes, each request -- with sessions, each conversation, all its turns -- draws its
// class by weight from its own stream (one more stream per entity: a spec without classes
// draws exactly what it drew before). A class's input_tokens and output_tokens replace the
// spec's; a class without a model asks for the spec's `model`.
//
// Determinism: the same spec gives the same requests with any compiler or standard
// library. Each entity draws from its own stream (see generator_random.h), so growing
// num_requests or duration_s only appends requests.
//
//   if (IsGeneratorSpec(path)) source = OpenGeneratedWorkload(path);
//   while (auto r = source->Next()) ...   // ids: "r<i>", or "s<session>-t<turn>"
#pragma once

#include <memory>
#include <string>

#include "workload/workload_source.h"

namespace fleetsim {

// True for a .yaml/.yml file whose top level has `generator:`. A .yaml file that does not
// parse also answers true, so that OpenGeneratedWorkload reports the syntax error and
// its line instead of a trace reader failing on line 1.
bool IsGeneratorSpec(const std::string& path);

// Reads and checks the whole spec now: a bad spec is an InputError naming the file, the
// line and the key. format() is "generator".
std::unique_ptr<WorkloadSource> OpenGeneratedWorkload(const std::string& spec_path);

}  // namespace fleetsim
