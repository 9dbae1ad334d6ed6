#include "app/bundle_command.h"

#include <iostream>
#include <memory>

#include "bundles/analytic_bundle.h"
#include "core/input_error.h"
#include "core/project_paths.h"
#include "model/hardware.h"
#include "model/model_catalog.h"

namespace fleetsim {
namespace {

struct BuildOptions {
  std::string source = "analytic";
  std::string model;
  std::string hardware;
  std::vector<int> tps;
  std::string out;
};

void Build(const BuildOptions& options) {
  if (options.source != "analytic") {
    throw OptionError("--source",
                      "'" + options.source +
                          "' is not available yet (accepted now: analytic; kernel-db is planned)");
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
  const std::string out = options.out.empty()
                              ? (ModelsDir() / card.name / "bundles" / hardware.name).string()
                              : options.out;
  WriteAnalyticBundle(card, hardware, tps, out);
  std::cout << "wrote " << out << " (analytic, TP";
  for (int tp : tps)
    std::cout << ' ' << tp;
  std::cout << ")\n";
}

}  // namespace

void AddBundleCommand(CLI::App& app) {
  CLI::App* bundle = app.add_subcommand("bundle", "Build performance bundles");
  bundle->require_subcommand(1);
  auto options = std::make_shared<BuildOptions>();
  CLI::App* build = bundle->add_subcommand(
      "build", "Build a bundle for a model card on a catalog GPU (analytic: roofline + occupancy)");
  build->add_option("--source", options->source, "How to build it: analytic")
      ->capture_default_str();
  build->add_option("--model", options->model, "Model card name or config.json path")->required();
  build->add_option("--hardware", options->hardware, "GPU from cluster_configs/hardware/")
      ->required();
  build
      ->add_option("--tp", options->tps,
                   "TP degrees (default: 1, 2, 4, 8 where they fit and divide)")
      ->delimiter(',');
  build->add_option("--out", options->out,
                    "Bundle directory (default: models/<model>/bundles/<hardware>/)");
  build->callback([options]() { Build(*options); });
}

}  // namespace fleetsim
