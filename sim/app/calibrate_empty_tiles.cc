#include "app/calibrate_empty_tiles.h"

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "core/input_error.h"
#include "core/json_writer.h"
#include "core/project_paths.h"
#include "model/attention_backend.h"
#include "model/hardware.h"
#include "model/model_catalog.h"
#include "perf/analytic_kernels.h"
#include "perf/bundle.h"
#include "perf/kernel_db/empty_tile_fit.h"

namespace fleetsim {
namespace {

struct Options {
  std::string bundle;
  std::string model;
  std::string hardware;
  int tp = 1;
  bool json = false;
};

void Run(const Options& o) {
  const ModelCard card = ModelCatalog(ModelsDir()).Load(o.model);
  const HardwareSpec gpu = LoadHardware(HardwareCatalogDir(), o.hardware);
  const AttentionPlan plan = DefaultAttentionPlan(gpu.attention);
  if (!MixedCallLaunchesEmptyTiles(plan)) {
    throw InputError("", 0, "--hardware",
                     gpu.name + "'s attention backend (" + plan.backend.name +
                         ") schedules only real tiles in a mixed step (packed query heads, or "
                         "separate prefill and decode calls): its mixed calls launch no empty "
                         "tiles to fit");
  }
  if (card.attention.num_q_heads % o.tp != 0) {
    throw InputError("", 0, "--tp",
                     std::to_string(o.tp) + " does not divide " + card.name + "'s " +
                         std::to_string(card.attention.num_q_heads) + " query heads");
  }
  const Bundle bundle = LoadBundle(o.bundle);
  bundle.ForTp(o.tp);  // an InputError naming the degrees the bundle holds
  for (const std::string& mismatch : BundleMismatches(bundle, card.name, gpu.name))
    std::fprintf(stderr, "fleetsim: warning: %s\n", mismatch.c_str());
  const std::string table =
      (std::filesystem::path(o.bundle) / ("tp" + std::to_string(o.tp)) / "attention.csv").string();
  const EmptyTileGeometry geometry{
      .q_heads = static_cast<double>(card.attention.num_q_heads / o.tp),
      .compute_units = gpu.compute_units.value,
      .query_tile_rows = static_cast<double>(plan.backend.query_tile_rows)};
  const EmptyTileFit fit = FitEmptyTileSeconds(table, geometry);
  const double shipped = AnalyticConstants{}.attention_empty_tile_s;

  if (o.json) {
    JsonWriter json(std::cout);
    json.BeginObject();
    json.Field("table", table);
    json.Field("query_heads_per_rank", geometry.q_heads);
    json.Field("compute_units", geometry.compute_units);
    json.Field("cells", fit.cells);
    json.Field("empty_tile_s", fit.seconds);
    json.Field("mean_excess_us", fit.mean_excess_us);
    json.Field("rms_residual_us", fit.rms_residual_us);
    json.Field("shipped_empty_tile_s", shipped);
    json.EndObject();
    std::cout << "\n";
    return;
  }
  std::printf("empty FlashAttention 2 tiles in %s\n", table.c_str());
  std::printf("  %s at TP %d: %.0f query heads per rank; %s: %.0f SMs, %d-row query tiles\n",
              card.name.c_str(), o.tp, geometry.q_heads, gpu.name.c_str(), geometry.compute_units,
              plan.backend.query_tile_rows);
  std::printf("  cells fitted          %d (decodes of at most %.0f keys beside chunks over %d)\n",
              fit.cells, geometry.key_block, plan.backend.query_tile_rows);
  std::printf("  one empty tile        %.1f ns on one SM\n", fit.seconds * 1e9);
  std::printf("  fit                   mean excess %.1f us, rms residual %.1f us\n",
              fit.mean_excess_us, fit.rms_residual_us);
  std::printf("  analytic constant     %.1f ns (attention_empty_tile_s), this table %+.1f %%\n",
              shipped * 1e9, 100 * (fit.seconds / shipped - 1));
}

}  // namespace

void AddCalibrateEmptyTilesCommand(CLI::App& bundle) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = bundle.add_subcommand(
      "calibrate-empty-tiles",
      "Fit what an empty FlashAttention 2 tile costs one SM (a decode's query blocks past its "
      "one token, launched because a chunk beside it is longer) on a measured bundle's "
      "attention table, beside the analytic model's constant");
  cmd->add_option("bundle", o->bundle, "The measured bundle directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--model", o->model, "Model card name or config.json path")->required();
  cmd->add_option("--hardware", o->hardware, "GPU from cluster_configs/hardware/")->required();
  cmd->add_option("--tp", o->tp, "The bundle's TP degree to read")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o]() { Run(*o); });
}

}  // namespace fleetsim
