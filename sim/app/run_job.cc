#include "app/run_job.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>

#include "bundles/analytic_bundle.h"
#include "cluster/cluster_config.h"
#include "comm/collectives.h"
#include "comm/error_agreement.h"
#include "core/checkpoint_io.h"
#include "core/input_error.h"
#include "core/text_file.h"
#include "fleet/checkpoint_files.h"
#include "fleet/checkpoint_support.h"
#include "fleet/fleet_setup.h"
#include "fleet/run_writer.h"
#include "output/hdf5_file.h"
#include "workload/trace_catalog.h"
#include "workload/workload_source.h"

#ifndef FLEETSIM_VERSION
#define FLEETSIM_VERSION "unknown"
#endif

namespace fleetsim {
namespace {

// Rank 0 builds first -- it may generate and cache analytic bundles, which the other
// ranks then find.
FleetSetup BuildOnEveryRank(const ClusterConfig& cluster, MPI_Comm comm) {
  std::optional<FleetSetup> fleet;
  comm::OnRankZero(comm, [&] { fleet = BuildFleetSetup(cluster, CachedAnalyticBundle); });
  comm::OnEveryRank(comm, [&] {
    if (!fleet) fleet = BuildFleetSetup(cluster, CachedAnalyticBundle);
  });
  return std::move(*fleet);
}

// Each thread is a rank that waits for the others (comm/communicator.h): more of them than
// a process's processors gives the same results, slowly.
void WarnIfThreadsOutnumberProcessors(int threads, const comm::Comm& comm) {
  const int64_t processors = comm::AllReduceMin(comm::ProcessorsOfThisProcess(), comm);
  if (comm.rank() != 0 || threads <= processors) return;
  std::fprintf(stderr,
               "fleetsim: warning: --threads %d is more than the %lld processor(s) a process "
               "may run on (its affinity: mpirun binds each of two or fewer ranks to one core; "
               "--bind-to none, or srun's --cpus-per-task, gives it more): the threads, each "
               "a rank, take turns, so the run is slower; the results are the same\n",
               threads, static_cast<long long>(processors));
}

// --model must name a model some group serves: every request without one would be
// rejected otherwise.
void RequireServedModel(const std::string& model, const std::vector<std::string>& served) {
  if (model.empty() || std::find(served.begin(), served.end(), model) != served.end()) return;
  std::string list;
  for (const std::string& name : served)
    list += (list.empty() ? "" : ", ") + name;
  throw OptionError("--model",
                    "no instance group serves " + QuoteInput(model) + " (served: " + list + ")");
}

// A failure this rank met alone -- a failed FLEETSIM_CHECK, memory running out -- outside
// the parts the fleet loop guards (there every rank learns of an error at the next
// meeting): the other ranks may wait in a collective this one never joins, and the output
// file's destructor is collective too. With more than one rank the job is aborted, after
// this rank says why and removes the unfinished file (`<output>.tmp`, as Hdf5File names
// it); alone, the caller reports it.
void AbortIfNotAlone(const std::exception& e, const RunJob& job, MPI_Comm comm) {
  const int size = comm::SizeOf(comm);
  if (size <= 1) return;
  std::fprintf(stderr, "fleetsim: internal error on rank %d of %d: %s (aborting the run)\n",
               comm::RankOf(comm), size, e.what());
  std::fflush(stderr);
  std::error_code ignored;
  std::filesystem::remove(job.output + ".tmp", ignored);
  MPI_Abort(comm, 1);
}

// The fingerprint of everything that decides a run's results, saved with each checkpoint
// and checked on restart (docs/CHECKPOINT.md): the cluster config's text, the workload
// file's bytes, each group's bundle and what its engine became (pool, block size,
// capacity), and every option that changes results. Threads, the output path and the
// progress line are not in it: they change no result.
uint64_t InputsFingerprint(const RunJob& job, const std::string& workload,
                           const FleetSetup& fleet) {
  uint64_t h = HashBytes(ReadTextFile(job.cluster));
  std::ifstream in(workload, std::ios::binary);
  std::string chunk(1 << 20, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    h = HashBytes(std::string_view(chunk.data(), static_cast<std::size_t>(in.gcount())), h);
  }
  CheckpointWriter w;
  for (std::size_t g = 0; g < fleet.groups.size(); ++g) {
    w.Str(fleet.cluster.groups[g].bundle);
    w.I64(fleet.groups[g].num_blocks);
    w.I64(fleet.groups[g].layout.block_size);
  }
  for (const FleetInstanceInfo& info : fleet.instances)
    w.F64(info.capacity);
  w.Str(job.format);
  w.F64(job.window.rate_scale);
  w.I64(job.window.duration.value_or(-1));
  w.I64(job.window.num_requests.value_or(-1));
  w.Bool(job.window.skip_bad_lines);
  w.Str(job.window.default_model);
  w.Bool(job.strict_models);
  w.U64(job.fleet.seed);
  w.I64(job.fleet.horizon);
  w.Bool(job.fleet.trace_steps);
  w.Bool(job.fleet.request_rows);
  return HashBytes(w.bytes(), h);
}

// Checks a checkpointed or restarted run before anything is simulated: the fleet uses
// only what checkpoints save, the directory can be made, and a restart's checkpoint was
// written by this build for these inputs. The restart's manifest, when there is one.
std::optional<CheckpointManifest> PrepareCheckpoints(RunJob& job, const std::string& workload,
                                                     const FleetSetup& fleet, MPI_Comm comm) {
  CheckpointOptions& checkpoint = job.fleet.checkpoint;
  if (checkpoint.dir.empty() && checkpoint.restart.empty()) return std::nullopt;
  checkpoint.build = FLEETSIM_VERSION;
  checkpoint.command_line = job.command_line;
  if (const char* kill = std::getenv("FLEETSIM_TEST_KILL_AFTER_CHECKPOINT"))
    checkpoint.kill_after = std::atoll(kill);
  std::optional<CheckpointManifest> manifest;
  comm::OnEveryRank(comm, [&] {
    if (auto why = CheckpointRefusal(fleet))
      throw OptionError(checkpoint.dir.empty() ? "--restart" : "--checkpoint", *why);
    checkpoint.inputs = InputsFingerprint(job, workload, fleet);
    if (checkpoint.restart.empty()) return;
    manifest = ReadCheckpointManifest(checkpoint.restart);
    const std::string path = CheckpointManifestPath(checkpoint.restart);
    if (manifest->build != checkpoint.build)
      throw InputError(path, 0, "build",
                       "written by fleetsim " + manifest->build + ", this is " + checkpoint.build +
                           ": restart with the build that wrote it");
    if (manifest->inputs != checkpoint.inputs)
      throw InputError(path, 0, "inputs",
                       "written for other inputs (the cluster config, workload, bundles, seed "
                       "or a result-changing option differ): restart with the arguments of the "
                       "run that wrote it");
    // /provenance records the command line that began the run.
    checkpoint.command_line = manifest->command_line;
  });
  comm::OnRankZero(comm, [&] {
    if (checkpoint.dir.empty()) return;
    std::error_code error;
    std::filesystem::create_directories(checkpoint.dir, error);
    if (error || !std::filesystem::is_directory(checkpoint.dir))
      throw OptionError("--checkpoint", "cannot make the directory " + QuoteInput(checkpoint.dir) +
                                            ": " + error.message());
  });
  return manifest;
}

RunJobResult RunJobWith(const RunJob& given, MPI_Comm comm, std::optional<output::Hdf5File>& out) {
  RunJob job = given;
  const auto wall_start = std::chrono::steady_clock::now();
  std::optional<ClusterConfig> cluster;
  std::string workload;
  comm::OnEveryRank(comm, [&] {
    cluster = LoadClusterConfig(job.cluster);
    workload = ResolveWorkload(job.workload);
  });
  const FleetSetup fleet = BuildOnEveryRank(*cluster, comm);
  if (comm::RankOf(comm) == 0) {
    for (const std::string& warning : fleet.warnings)
      std::fprintf(stderr, "fleetsim: warning: %s\n", warning.c_str());
  }
  WarnIfThreadsOutnumberProcessors(job.fleet.threads, comm);
  WindowOptions window = job.window;
  comm::OnEveryRank(comm, [&] { RequireServedModel(window.default_model, fleet.models); });
  const std::optional<CheckpointManifest> restart = PrepareCheckpoints(job, workload, fleet, comm);
  if (job.strict_models) window.known_models = fleet.models;
  // Rank 0 opens the workload. When it can pass over a request (a generator), every other
  // rank opens its own copy and each makes only its gateways' requests; otherwise rank 0
  // alone reads and sends the others their arrivals (docs/DESIGN.md, "Readers").
  std::unique_ptr<WorkloadWindow> source;
  const auto open = [&] {
    source = std::make_unique<WorkloadWindow>(OpenWorkload(workload, job.format), window);
  };
  comm::OnRankZero(comm, open);
  const bool every_rank_reads =
      comm::AllReduceMax(source && source->can_pass_over() ? 1 : 0, comm) == 1;
  if (every_rank_reads) {
    comm::OnEveryRank(comm, [&] {
      if (!source) open();
    });
  }
  // Fail on a bad output path before simulating anything.
  std::optional<output::Hdf5File>& file = out;
  comm::OnEveryRank(comm, [&] { file.emplace(job.output, comm); });
  RunJobResult result;
  // A thread of this process that is a rank of its own (--threads) reads its own copy.
  const OpenWorkloadSource open_copy = [&]() -> std::unique_ptr<WorkloadSource> {
    return std::make_unique<WorkloadWindow>(OpenWorkload(workload, job.format), window);
  };
  result.stats = RunFleet(fleet, source.get(), job.fleet, *file, comm,
                          every_rank_reads ? open_copy : OpenWorkloadSource());
  result.instances = fleet.instances.size();
  // The slowest rank's wall time is the run's.
  result.wall_s =
      static_cast<double>(comm::AllReduceMax(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - wall_start)
                                                 .count(),
                                             comm)) /
      1e9;

  RunProvenance provenance;
  provenance.version = FLEETSIM_VERSION;
  provenance.command_line = restart ? restart->command_line : job.command_line;
  provenance.cluster_config_path = job.cluster;
  comm::OnEveryRank(comm, [&] { provenance.cluster_config_text = ReadTextFile(job.cluster); });
  provenance.workload_path = workload;
  provenance.workload_format = source ? source->format() : std::string();
  provenance.skipped_bad_lines = source ? source->skipped_lines() : 0;
  provenance.rate_scale = job.window.rate_scale;
  provenance.default_model = job.window.default_model;
  provenance.strict_models = job.strict_models;
  provenance.seed = job.fleet.seed;
  for (const InstanceGroupConfig& g : cluster->groups)
    provenance.bundles += g.name + "=" + g.bundle + "\n";
  // Each group's attention backend and decode kernel, and why (vLLM's choice for its model,
  // engine settings and GPU), and how its weights are stored.
  for (std::size_t g = 0; g < fleet.groups.size(); ++g) {
    const EngineSetup& setup = fleet.groups[g];
    provenance.attention += cluster->groups[g].name + "=";
    if (setup.layout.attention) {
      const AttentionPlan& a = *setup.layout.attention;
      provenance.attention += a.backend.name + " " + a.decode.name + " block " +
                              std::to_string(setup.layout.block_size) + " (" + a.backend_why +
                              "; " + a.decode_why + ")";
    } else {
      provenance.attention += "unknown (no GPU)";
    }
    provenance.attention += "; weights: " + setup.engine.quantization.Describe();
    if (setup.engine.speculative.enabled())
      provenance.attention += "; speculative: " + Describe(setup.engine.speculative);
    provenance.attention += "\n";
  }
  provenance.threads = job.fleet.threads;
  provenance.request_rows = job.fleet.request_rows;
  provenance.wall_time_s = result.wall_s;
  WriteProvenance(*file, provenance, result.stats, comm);
  // A signal that came while the tables were written still stops the run: no file. Past
  // this point one no longer does (the file is being committed).
  const int interrupted = job.begin_commit        ? job.begin_commit()
                          : job.fleet.interrupted ? job.fleet.interrupted()
                                                  : 0;
  if (const int64_t signal = comm::AllReduceMax(interrupted, comm); signal != 0)
    throw FleetInterrupted{static_cast<int>(signal)};
  comm::OnEveryRank(comm, [&] { file->Commit(); });
  return result;
}

}  // namespace

RunJobResult RunJobOn(const RunJob& job, MPI_Comm comm) {
  // The file lives outside the try: a failure on one rank alone is handled before its
  // collective destructor could wait for ranks that will never come.
  std::optional<output::Hdf5File> file;
  try {
    return RunJobWith(job, comm, file);
  } catch (const InputError&) {
    throw;  // met by every rank alike: inputs are read alike, output errors agreed on
  } catch (const std::exception& e) {
    // One an agreement rethrew is known to every rank: ReportFailures prints it.
    if (!comm::Agreed(std::current_exception())) AbortIfNotAlone(e, job, comm);
    throw;
  }
}

}  // namespace fleetsim
