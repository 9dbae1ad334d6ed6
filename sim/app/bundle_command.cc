#include "app/bundle_command.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/calibrate_empty_tiles.h"
#include "app/collectives_command.h"
#include "bundles/analytic_bundle.h"
#include "bundles/kernel_db_bundle.h"
#include "core/format.h"
#include "core/input_error.h"
#include "core/json_writer.h"
#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "perf/bundle.h"
#include "perf/bundle_compare.h"
#include "perf/kernel_db/calibrate.h"
#include "perf/kernel_db/collective_error.h"
#include "perf/kernel_db/kernel_error.h"
#include "perf/kernel_db/measured_collectives.h"
#include "perf/kernel_db/measured_kernels.h"
#include "perf/kernel_db/nccl_tests_output.h"
#include "perf/step_cost.h"

namespace fleetsim {
namespace {

std::string DefaultKernelTables() {
  return (ProjectRoot() / ".." / "shared" / "data" / "profiles" / "aiconfigurator")
      .lexically_normal()
      .string();
}

struct BuildOptions {
  std::string data = DefaultKernelTables();
  std::string source = "analytic";
  std::string model;
  std::string hardware;
  std::vector<int> tps;
  std::string out;
};

void Build(const BuildOptions& options) {
  if (options.source != "analytic" && options.source != "kernel-db") {
    throw OptionError("--source",
                      "unknown source '" + options.source + "' (accepted: analytic, kernel-db)");
  }
  const ModelCard card = ModelCatalog(ModelsDir()).Load(options.model);
  const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), options.hardware);
  std::vector<int> tps = options.tps.empty() ? DefaultTpDegrees(card, hardware) : options.tps;
  for (int tp : tps) {
    if (tp > hardware.gpus_per_node.value) {
      throw OptionError("--tp", "TP " + std::to_string(tp) + " exceeds the " +
                                    std::to_string(static_cast<int>(hardware.gpus_per_node.value)) +
                                    " GPUs of one " + hardware.name + " node");
    }
  }
  // Beside the cached analytic bundles (`analytic-<version>-<fingerprint>/`), never over them.
  const std::string out =
      options.out.empty()
          ? (CacheRoot() / "built" / card.name / hardware.name / options.source).string()
          : options.out;
  // The TP degrees came from --tp (or its default).
  const SettingError tp_error = [](std::string_view setting, const std::string& message) {
    return OptionError("--tp", std::string(setting) + ": " + message);
  };
  if (options.source == "kernel-db") {
    WriteKernelDbBundle(card, hardware, tps, options.data, out, tp_error);
  } else {
    WriteAnalyticBundle(card, hardware, tps, out, tp_error);
  }
  std::cout << "wrote " << out << " (" << options.source << ", TP";
  for (int tp : tps)
    std::cout << ' ' << tp;
  std::cout << ")\n";
}

struct CompareOptions {
  std::string candidate;
  std::string reference;
  bool json = false;
};

void JsonError(JsonWriter& json, const KernelError& e) {
  json.BeginObject();
  json.Field("tp", e.tp);
  json.Field("kind", e.kind);
  json.Field("kernel", e.kernel);
  json.Field("cells", e.cells);
  json.Field("mape", e.mape);
  json.Field("bias", e.bias);
  json.Key("worst");
  json.BeginArray();
  for (const CellError& c : e.worst) {
    json.BeginObject();
    json.Field("at", c.where);
    json.Field("candidate_us", c.candidate_us);
    json.Field("reference_us", c.reference_us);
    json.Field("error", c.error);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

void Compare(const CompareOptions& options) {
  const Bundle candidate = LoadBundle(options.candidate);
  const Bundle reference = LoadBundle(options.reference);
  // Comparing across models or GPUs is allowed (a proxy's error), but rarely meant.
  for (const std::string& mismatch :
       BundleMismatches(candidate, reference.model, reference.hardware))
    std::fprintf(stderr, "fleetsim: warning: B is another model's or GPU's: %s\n",
                 mismatch.c_str());
  const BundleComparison c = CompareBundles(candidate, reference);
  if (c.kinds.empty()) {
    throw OptionError("B", "the bundles share no TP degree and kernel to compare");
  }
  if (options.json) {
    JsonWriter json(std::cout);
    json.BeginObject();
    json.Field("candidate", options.candidate);
    json.Field("reference", options.reference);
    for (const auto* list : {&c.kinds, &c.kernels}) {
      json.Key(list == &c.kinds ? "kinds" : "kernels");
      json.BeginArray();
      for (const KernelError& e : *list)
        JsonError(json, e);
      json.EndArray();
    }
    json.Key("only_in_reference");
    json.BeginArray();
    for (const std::string& k : c.only_in_reference)
      json.Value(k);
    json.EndArray();
    json.EndObject();
    return;
  }
  std::printf("%-4s %-18s %-20s %7s %8s %8s  %s\n", "tp", "kind", "kernel", "cells", "MAPE", "bias",
              "worst cell (A vs B us)");
  for (const auto* list : {&c.kinds, &c.kernels}) {
    for (const KernelError& e : *list) {
      std::string worst;
      if (!e.worst.empty()) {
        worst = Printf("%s %.1f vs %.1f", e.worst[0].where.c_str(), e.worst[0].candidate_us,
                       e.worst[0].reference_us);
      }
      std::printf("%-4d %-18s %-20s %7lld %7.1f%% %+7.1f%%  %s\n", e.tp, e.kind.c_str(),
                  e.kernel.c_str(), static_cast<long long>(e.cells), 100 * e.mape, 100 * e.bias,
                  worst.c_str());
    }
    if (list == &c.kinds) std::printf("\n");
  }
  for (const std::string& k : c.only_in_reference)
    std::printf("not in A: %s\n", k.c_str());
}

struct CoverageOptions {
  std::string bundle;
  std::string model;
};

void ReportCoverage(const CoverageOptions& options) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load(options.model);
  const Bundle bundle = LoadBundle(options.bundle);
  for (const std::string& mismatch : BundleMismatches(bundle, card.name, ""))
    std::fprintf(stderr, "fleetsim: warning: %s\n", mismatch.c_str());
  std::string missing;
  for (int tp : bundle.TpDegrees()) {
    std::printf("tp%d\n", tp);
    for (const CoverageRow& row : Coverage(card, bundle.ForTp(tp))) {
      const std::string state = !row.covered
                                    ? (row.required ? "MISSING (required)" : "absent (not charged)")
                                : row.fused_into.empty() ? "covered"
                                                         : "covered (in " + row.fused_into + ")";
      std::printf("  %-17s %-8s %-22s %s\n", row.block.c_str(), row.regime.c_str(),
                  row.kernel.c_str(), state.c_str());
      if (row.required && !row.covered) {
        missing += (missing.empty() ? "" : ", ") + std::string("tp") + std::to_string(tp) + "/" +
                   row.table + " " + row.kernel + " (" + row.block +
                   (row.regime == "all" ? "" : ", " + row.regime) + ")";
      }
    }
  }
  if (!missing.empty()) {
    throw InputError(options.bundle, 0, "", "does not cover " + card.name + ": missing " + missing);
  }
  std::printf("covered: every kernel %s needs is in the bundle\n", card.name.c_str());
}

struct CalibrateOptions {
  std::string data = DefaultKernelTables();
  bool json = false;
};

// Refits the analytic constants on the measured H100 and H200 kernel tables from the
// fixed uncalibrated start: the defaults in AnalyticConstants are this command's output.
void RunCalibration(const CalibrateOptions& options) {
  std::vector<CalibrationGpu> gpus;
  for (const auto& [system, catalog] :
       {std::pair{"h100_sxm", "H100-SXM"}, std::pair{"h200_sxm", "H200-SXM"}}) {
    gpus.push_back(
        {LoadHardware(HardwareCatalogDir(), catalog), LoadMeasuredKernels(options.data, system)});
  }
  const CalibrationResult result = Calibrate(gpus);
  if (options.json) {
    JsonWriter json(std::cout);
    WriteJson(json, result);
    return;
  }
  std::printf("fitted constants (AnalyticConstants defaults):\n");
  {
    JsonWriter json(std::cout);
    WriteJson(json, result.fitted);
  }
  std::printf("%-10s %-18s %7s %16s %16s %11s\n", "gpu", "class", "rows", "MAPE before",
              "MAPE after", "bias after");
  for (const ClassCalibration& c : result.classes) {
    std::printf("%-10s %-18s %7lld %15.1f%% %15.1f%% %+10.1f%%\n", c.system.c_str(),
                std::string(NameOf(c.cls)).c_str(), static_cast<long long>(c.after.rows),
                100 * c.before.mape, 100 * c.after.mape, 100 * c.after.bias);
  }
}

struct CompareKernelsOptions {
  std::string data = DefaultKernelTables();
  std::string system;
  std::string hardware;
  bool json = false;
};

// The calibrated analytic kernels on one GPU against that GPU's measured per-op tables:
// in sample for h100_sxm and h200_sxm (the fit's data), out of sample for a100_sxm.
void CompareKernels(const CompareKernelsOptions& options) {
  const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), options.hardware);
  const MeasuredTables tables = LoadMeasuredKernels(options.data, options.system);
  // Another GPU's tables can be meant (how far a proxy is), but rarely are.
  if (KernelDbSystemFor(hardware) != options.system) {
    std::fprintf(stderr, "fleetsim: warning: %s's kernels against the %s tables, another GPU's\n",
                 hardware.name.c_str(), options.system.c_str());
  }
  const KernelRoofline roofline(hardware, Dtype::kBfloat16);
  const KernelErrorReport report = CompareWithMeasured(tables, roofline);
  if (options.json) {
    JsonWriter json(std::cout);
    WriteJson(json, report);
    return;
  }
  std::printf("analytic kernels on %s vs measured %s (MAPE, bias > 0 = model too slow)\n",
              hardware.name.c_str(), report.system.c_str());
  std::printf("%-18s %7s %8s %8s  %s\n", "class", "rows", "MAPE", "bias", "worst row");
  for (const ClassError& c : report.classes) {
    std::string worst;
    if (!c.worst.empty()) {
      const RowError& w = c.worst.front();
      worst = Printf("%s:%d: %s, %.1f vs %.1f us", std::filesystem::path(c.file).filename().c_str(),
                     w.line, w.shape.c_str(), w.predicted_us, w.measured_us);
    }
    std::printf("%-18s %7lld %7.1f%% %+7.1f%%  %s\n", std::string(NameOf(c.cls)).c_str(),
                static_cast<long long>(c.summary.rows), 100 * c.summary.mape, 100 * c.summary.bias,
                worst.c_str());
  }
}

struct CompareCollectivesOptions {
  std::string data = DefaultKernelTables();
  std::string system;
  std::string nccl_tests;  // a user's nccl-tests output, instead of a system's tables
  std::string op;          // its collective
  std::string hardware;    // default: the system's own GPU
  bool fit = false;
  bool uncalibrated = false;
  bool rows = true;
  bool json = false;
};

void WriteJson(JsonWriter& json, const CollectiveConstants& c) {
  json.BeginObject();
  json.Field("nccl_latency_scale", c.nccl_latency_scale);
  json.Field("nccl_bandwidth_efficiency", c.nccl_bandwidth_efficiency);
  json.Field("nccl_ring_local_pass", c.nccl_ring_local_pass);
  json.Field("p2p_latency_scale", c.p2p_latency_scale);
  json.Field("p2p_bandwidth_efficiency", c.p2p_bandwidth_efficiency);
  json.Field("custom_latency_s", c.custom_latency_s);
  json.Field("custom_bandwidth_fraction", c.custom_bandwidth_fraction);
  json.Field("symm_mem_latency_s", c.symm_mem_latency_s);
  json.Field("symm_mem_bandwidth_fraction", c.symm_mem_bandwidth_fraction);
  json.EndObject();
}

// The collective model against a system's measured nccl-tests and vLLM all-reduce tables,
// row by row and per operation; with --fit, the constants refitted on these tables first.
void CompareCollectivesCommand(const CompareCollectivesOptions& options) {
  const bool own = !options.nccl_tests.empty();
  if (!own && options.system.empty()) {
    throw OptionError("--system",
                      "name the measured tables' system (h200_sxm, h100_sxm, "
                      "a100_sxm), or give --nccl-tests FILE --op OP --hardware H");
  }
  if (own && options.hardware.empty()) {
    throw OptionError("--hardware",
                      "name the GPU the nccl-tests ran on, from "
                      "cluster_configs/hardware/ (or a YAML path)");
  }
  if (own && options.op.empty()) {
    throw OptionError("--op",
                      "name the nccl-tests' collective (all_reduce, all_gather, "
                      "reduce_scatter, alltoall, broadcast, reduce): its output does not");
  }
  const std::string gpu =
      !options.hardware.empty() ? options.hardware : HardwareOfSystem(options.system);
  const HardwareSpec hardware = LoadHardware(HardwareCatalogDir(), gpu);
  const MeasuredCollectives tables = own ? LoadNcclTestsOutput(options.nccl_tests, options.op)
                                         : LoadMeasuredCollectives(options.data, options.system);
  if (own && tables.rows.front().gpus > hardware.gpus_per_node.value) {
    throw InputError(options.nccl_tests, 0, "# Rank lines",
                     Printf("%d GPUs ran, more than a %s node has (%d): the model covers one node",
                            tables.rows.front().gpus, hardware.name.c_str(),
                            static_cast<int>(hardware.gpus_per_node.value)));
  }
  const CollectiveConstants constants = options.fit ? FitCollectiveConstants(tables, hardware)
                                        : options.uncalibrated ? CollectiveConstants::Uncalibrated()
                                                               : CollectiveConstants{};
  const CollectiveComparison c = CompareCollectives(tables, hardware, constants);
  if (options.json) {
    JsonWriter json(std::cout);
    json.BeginObject();
    json.Field("system", c.system);
    json.Field("hardware", c.hardware);
    json.Field("nccl_version", c.nccl_version);
    json.Field("vllm_version", c.vllm_version);
    json.Key("constants");
    WriteJson(json, constants);
    json.Key("operations");
    json.BeginArray();
    for (const CollectiveOperationError& op : c.operations) {
      json.BeginObject();
      json.Field("operation", op.operation);
      json.Field("target", op.target);
      json.Field("rows", op.rows);
      json.Field("mape", op.mape);
      json.Field("bias", op.bias);
      json.EndObject();
    }
    json.EndArray();
    json.Key("rows");
    json.BeginArray();
    for (const CollectiveRowError& r : c.rows) {
      json.BeginObject();
      json.Field("operation", r.operation);
      json.Field("dtype", r.measured.dtype);
      json.Field("gpus", r.measured.gpus);
      json.Field("bytes", static_cast<double>(r.measured.bytes));
      json.Field("measured_us", r.measured.measured_us);
      json.Field("model_us", r.model_us);
      json.Field("error", r.error());
      json.Field("how", r.how);
      json.EndObject();
    }
    json.EndArray();
    json.EndObject();
    return;
  }
  if (own) {
    std::printf("collectives on %s vs measured %s (nccl-tests of NCCL %s, %d GPUs)\n",
                c.hardware.c_str(), c.system.c_str(), c.nccl_version.c_str(),
                tables.rows.front().gpus);
  } else {
    std::printf("collectives on %s vs measured %s (nccl-tests of NCCL %s, vLLM %s all-reduce)\n",
                c.hardware.c_str(), c.system.c_str(), c.nccl_version.c_str(),
                c.vllm_version.c_str());
  }
  if (options.fit) {
    std::printf("constants fitted on these tables (CollectiveConstants):\n");
    JsonWriter json(std::cout);
    WriteJson(json, constants);
    std::printf("\n");
  }
  if (options.rows) {
    std::printf("%-24s %-8s %4s %12s %12s %12s %8s  %s\n", "operation", "dtype", "gpus", "bytes",
                "measured us", "model us", "error", "model's choice");
    for (const CollectiveRowError& r : c.rows) {
      std::printf("%-24s %-8s %4d %12lld %12.2f %12.2f %+7.1f%%  %s\n", r.operation.c_str(),
                  r.measured.dtype.c_str(), r.measured.gpus,
                  static_cast<long long>(r.measured.bytes), r.measured.measured_us, r.model_us,
                  100 * r.error(), r.how.c_str());
    }
    std::printf("\n");
  }
  std::printf("%-24s %6s %8s %8s  %s\n", "operation", "rows", "MAPE", "bias", "worst row");
  for (const CollectiveOperationError& op : c.operations) {
    const CollectiveRowError& w = c.rows[static_cast<std::size_t>(op.worst)];
    std::printf("%-24s %6d %7.1f%% %+7.1f%%  %d GPUs, %lld B: %.1f vs %.1f us%s\n",
                op.operation.c_str(), op.rows, 100 * op.mape, 100 * op.bias, w.measured.gpus,
                static_cast<long long>(w.measured.bytes), w.model_us, w.measured.measured_us,
                op.target ? "" : "  (not a target: host-bound eager calls)");
  }
}

// Removes (or, dry, lists) the cached analytic bundles no current build reads.
void PruneCache(bool dry_run) {
  uintmax_t total = 0;
  int done = 0;
  for (const std::string& dir : StaleCachedBundles()) {
    uintmax_t bytes = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
      if (entry.is_regular_file(error)) bytes += entry.file_size(error);
    }
    if (!dry_run) {
      std::filesystem::remove_all(dir, error);
      if (error) {
        std::printf("could not remove %s: %s\n", dir.c_str(), error.message().c_str());
        continue;
      }
    }
    total += bytes;
    ++done;
    std::printf("%s %s (%.1f MB)\n", dry_run ? "would remove" : "removed", dir.c_str(),
                static_cast<double>(bytes) / 1e6);
  }
  std::printf("%d stale bundle folder(s) %s, %.1f MB; the current generator is %s\n", done,
              dry_run ? "to remove" : "removed", static_cast<double>(total) / 1e6,
              AnalyticGeneratorVersion());
}

}  // namespace

void AddBundleCommand(CLI::App& app) {
  CLI::App* bundle = app.add_subcommand(
      "bundle", "Build, compare, check and calibrate performance bundles; prune their cache");
  bundle->require_subcommand(1);
  auto options = std::make_shared<BuildOptions>();
  CLI::App* build = bundle->add_subcommand(
      "build",
      "Build a bundle for a model card on a catalog GPU (analytic: roofline + occupancy; "
      "kernel-db: measured kernel tables with an analytic fill)");
  build
      ->add_option("--source", options->source,
                   "analytic (any catalog GPU) or kernel-db (measured aiconfigurator tables where "
                   "they hold the shape, analytic elsewhere: A100-SXM-80GB, H100-SXM, H200-SXM)")
      ->capture_default_str();
  CLI::Option* data = build
                          ->add_option("--data", options->data,
                                       "The aiconfigurator tables folder, for --source kernel-db")
                          ->capture_default_str();
  build->add_option("--model", options->model, "Model card name or config.json path")->required();
  build->add_option("--hardware", options->hardware, "GPU from cluster_configs/hardware/")
      ->required();
  build
      ->add_option("--tp", options->tps,
                   "TP degrees (default: 1, 2, 4, 8 where they fit and divide)")
      ->delimiter(',');
  build->add_option(
      "--out", options->out,
      "Bundle directory, new, empty or a bundle fleetsim built (default: "
      "<cache>/built/<model>/<hardware>/<source>/, the cache as for analytic bundles)");
  build->callback([options, data]() {
    if (data->count() > 0 && options->source != "kernel-db")
      throw OptionError("--data", "only --source kernel-db reads kernel tables");
    Build(*options);
  });

  auto compare = std::make_shared<CompareOptions>();
  CLI::App* cmp = bundle->add_subcommand("compare",
                                         "How far bundle A is from reference bundle B: per kernel "
                                         "and regime, MAPE, bias, worst cells");
  cmp->add_option("A", compare->candidate, "The bundle to judge")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmp->add_option("B", compare->reference, "The reference (e.g. a measured bundle)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmp->add_flag("--json", compare->json, "Machine-readable output");
  cmp->callback([compare]() { Compare(*compare); });

  auto coverage = std::make_shared<CoverageOptions>();
  CLI::App* cov = bundle->add_subcommand(
      "coverage", "Which kernels a bundle covers for a model, per block type and batch regime");
  cov->add_option("bundle", coverage->bundle, "Bundle directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  cov->add_option("--model", coverage->model, "Model card name or config.json path")->required();
  cov->callback([coverage]() { ReportCoverage(*coverage); });

  auto calibrate = std::make_shared<CalibrateOptions>();
  CLI::App* cal = bundle->add_subcommand(
      "calibrate",
      "Refit the analytic model's constants on the measured H100 and H200 kernel tables");
  cal->add_option("--data", calibrate->data, "The aiconfigurator tables folder")
      ->capture_default_str();
  cal->add_flag("--json", calibrate->json, "Machine-readable output");
  cal->callback([calibrate]() { RunCalibration(*calibrate); });
  AddCalibrateEmptyTilesCommand(*bundle);

  auto kernels = std::make_shared<CompareKernelsOptions>();
  CLI::App* ck = bundle->add_subcommand("compare-kernels",
                                        "Compare the calibrated analytic kernels with a GPU's "
                                        "measured per-op tables (aiconfigurator): "
                                        "per kernel class, MAPE, bias and the worst row");
  ck->add_option("--system", kernels->system,
                 "The tables' system: h100_sxm, h200_sxm (fitted on), a100_sxm (held out)")
      ->required();
  ck->add_option("--hardware", kernels->hardware, "The GPU from cluster_configs/hardware/")
      ->required();
  ck->add_option("--data", kernels->data, "The aiconfigurator tables folder")
      ->capture_default_str();
  ck->add_flag("--json", kernels->json, "Machine-readable output (every class's worst rows)");
  ck->callback([kernels]() { CompareKernels(*kernels); });

  auto collectives = std::make_shared<CompareCollectivesOptions>();
  CLI::App* cc = bundle->add_subcommand(
      "compare-collectives",
      "Compare the collective model (NCCL's cost model, vLLM's all-reduce choice) with a "
      "system's measured nccl-tests and vLLM all-reduce tables (aiconfigurator), or with your "
      "own node's nccl-tests output: per operation, GPU count and message size, and MAPE and "
      "bias per operation");
  CLI::Option* system = cc->add_option(
      "--system", collectives->system,
      "The tables' system: h200_sxm (the constants are fitted on it), h100_sxm, a100_sxm "
      "(held out)");
  CLI::Option* own = cc->add_option("--nccl-tests", collectives->nccl_tests,
                                    "Instead of a system's tables: the output of one nccl-tests "
                                    "run on your node (e.g. all_reduce_perf -b 1K -e 256M -f 2 "
                                    "-g 8 > FILE), with --op and --hardware");
  own->excludes(system);
  cc->add_option("--op", collectives->op,
                 "The --nccl-tests run's collective: all_reduce, all_gather, reduce_scatter, "
                 "alltoall, broadcast, reduce")
      ->needs(own);
  cc->add_option("--hardware", collectives->hardware,
                 "The GPU from cluster_configs/hardware/ (default: the system's; required with "
                 "--nccl-tests)");
  cc->add_option("--data", collectives->data, "The aiconfigurator tables folder")
      ->capture_default_str();
  CLI::Option* fit = cc->add_flag("--fit", collectives->fit,
                                  "Refit the constants on these tables first and print them");
  fit->excludes(own);
  cc->add_flag("--uncalibrated", collectives->uncalibrated,
               "NCCL's own estimate as it is, and the kernels at their links' full bandwidth "
               "(the fit's starting point)")
      ->excludes(fit);
  cc->add_flag("!--no-rows", collectives->rows, "Print only the per-operation summary");
  cc->add_flag("--json", collectives->json, "Machine-readable output");
  cc->callback([collectives]() { CompareCollectivesCommand(*collectives); });
  AddCollectivesCommand(*bundle);

  auto dry_run = std::make_shared<bool>(false);
  CLI::App* prune = bundle->add_subcommand(
      "prune-cache",
      "Remove cached analytic bundles of other generator versions or since-edited inputs (and "
      "builds interrupted over an hour ago); nothing else in the cache is touched");
  prune->add_flag("--dry-run", *dry_run, "Only list what would be removed");
  prune->callback([dry_run]() { PruneCache(*dry_run); });
}

}  // namespace fleetsim
