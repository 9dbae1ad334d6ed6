#include "perf/kernel_db/calibrate.h"

#include <algorithm>
#include <span>
#include <utility>

#include "model/dtype.h"

namespace fleetsim {
namespace {

// Search bounds: physically plausible, wide enough that no fit should sit on one.
constexpr double kMinEfficiency = 0.05;
constexpr double kMaxEfficiency = 1.0;
constexpr double kMinLaunchS = 1e-7;
constexpr double kMaxLaunchS = 1e-4;
constexpr double kMinTileS = 1e-9;  // effectively no tile term
constexpr double kMaxTileS = 1e-4;

// The rows a fit evaluates: every stride-th row of each class, per GPU.
struct FitRows {
  const CalibrationGpu* gpu;
  std::vector<MeasuredKernel> rows;
};

std::vector<FitRows> Subsample(const std::vector<CalibrationGpu>& gpus, int stride) {
  std::vector<FitRows> out;
  for (const CalibrationGpu& g : gpus) {
    FitRows f{&g, {}};
    for (KernelClass cls : kKernelClasses) {
      int64_t seen = 0;
      for (const MeasuredKernel& k : g.tables.rows) {
        if (k.cls == cls && seen++ % stride == 0) f.rows.push_back(k);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

KernelPredictor PredictorFor(const CalibrationGpu& g, const AnalyticConstants& c) {
  return KernelPredictor(g.hardware, Dtype::kBfloat16, c);
}

// Mean over GPUs and the given classes of each one's MAPE; (GPU, class) pairs without
// rows do not count.
double MeanMape(const std::vector<FitRows>& fit, const AnalyticConstants& c,
                std::span<const KernelClass> classes) {
  double sum = 0;
  int terms = 0;
  for (const FitRows& f : fit) {
    const KernelPredictor predictor = PredictorFor(*f.gpu, c);
    for (KernelClass cls : classes) {
      const ErrorSummary s = SummarizeErrors(f.rows, cls, predictor);
      if (s.rows == 0) continue;
      sum += s.mape;
      ++terms;
    }
  }
  return terms > 0 ? sum / terms : 0;
}

}  // namespace

ClassCalibration CalibrationResult::Of(const std::string& system, KernelClass cls) const {
  for (const ClassCalibration& c : classes) {
    if (c.system == system && c.cls == cls) return c;
  }
  return {system, cls, {}, {}};
}

CalibrationResult Calibrate(const std::vector<CalibrationGpu>& gpus, const AnalyticConstants& start,
                            const CalibrationOptions& options) {
  CalibrationResult result;
  result.start = start;
  AnalyticConstants c = start;
  const std::vector<FitRows> fit = Subsample(gpus, std::max(1, options.row_stride));

  // GEMMs first: their memory_efficiency and launch_s are then fixed for the rest.
  CoordinateSearch gemm(options.search);
  AnalyticConstants& a = c;
  gemm.Add("gemm_efficiency", &a.gemm_efficiency, kMinEfficiency, kMaxEfficiency);
  gemm.Add("gemm_half_m", &a.gemm_half_m, 1, 4096);
  gemm.Add("memory_efficiency", &a.memory_efficiency, kMinEfficiency, kMaxEfficiency);
  gemm.Add("launch_s", &a.launch_s, kMinLaunchS, kMaxLaunchS);
  constexpr KernelClass kGemmOnly[] = {KernelClass::kGemm};
  gemm.Minimize([&] { return MeanMape(fit, c, kGemmOnly); });

  // Attention, prefill and decode together. Without the proposed terms attention launches
  // like any kernel, as in today's model.
  CoordinateSearch attention(options.search);
  auto split_tokens = static_cast<double>(a.kv_split_tokens);
  attention.Add("attention_efficiency", &a.attention_efficiency, kMinEfficiency, kMaxEfficiency);
  attention.Add("kv_split_tokens", &split_tokens, 16, 8192, /*integral=*/true);
  if (options.proposed_attention_terms) {
    attention.Add("attention_launch_s", &a.attention_launch_s, kMinLaunchS, kMaxLaunchS);
    attention.Add("attention_tile_s", &a.attention_tile_s, kMinTileS, kMaxTileS);
  } else {
    a.attention_launch_s = a.launch_s;
    a.attention_tile_s = 0;
  }
  constexpr KernelClass kAttention[] = {KernelClass::kPrefillAttention,
                                        KernelClass::kDecodeAttention};
  attention.Minimize([&] {
    a.kv_split_tokens = static_cast<int64_t>(split_tokens);
    return MeanMape(fit, c, kAttention);
  });
  a.kv_split_tokens = static_cast<int64_t>(split_tokens);

  // GDN, its four sub-kernels together (only GPUs with a GDN table count); the fp32
  // state streams at GEMM's memory_efficiency, fixed above.
  CoordinateSearch gdn(options.search);
  gdn.Add("gdn_conv_efficiency", &a.gdn_conv_efficiency, kMinEfficiency, kMaxEfficiency);
  gdn.Add("gdn_chunk_efficiency", &a.gdn_chunk_efficiency, kMinEfficiency, kMaxEfficiency);
  gdn.Add("gdn_update_launch_s", &a.gdn_update_launch_s, kMinLaunchS, kMaxLaunchS);
  gdn.Add("gdn_launch_s", &a.gdn_launch_s, kMinLaunchS, kMaxLaunchS);
  gdn.Minimize([&] { return MeanMape(fit, c, kGdnKernelClasses); });

  result.fitted = c;
  result.evaluations = gemm.evaluations() + attention.evaluations() + gdn.evaluations();
  for (const CalibrationGpu& g : gpus) {
    const KernelPredictor before = PredictorFor(g, start);
    const KernelPredictor after = PredictorFor(g, c);
    for (KernelClass cls : kKernelClasses) {
      if (g.tables.CountOf(cls) == 0) continue;
      result.classes.push_back({g.tables.files.system, cls,
                                SummarizeErrors(g.tables.rows, cls, before),
                                SummarizeErrors(g.tables.rows, cls, after)});
    }
  }
  return result;
}

void WriteJson(JsonWriter& json, const AnalyticConstants& c) {
  json.BeginObject();
  json.Field("gemm_efficiency", c.gemm_efficiency);
  json.Field("gemm_half_m", c.gemm_half_m);
  json.Field("memory_efficiency", c.memory_efficiency);
  json.Field("launch_s", c.launch_s);
  json.Field("attention_efficiency", c.attention_efficiency);
  json.Field("kv_split_tokens", c.kv_split_tokens);
  json.Field("attention_launch_s", c.attention_launch_s);
  json.Field("attention_tile_s", c.attention_tile_s);
  json.Field("gdn_conv_efficiency", c.gdn_conv_efficiency);
  json.Field("gdn_chunk_efficiency", c.gdn_chunk_efficiency);
  json.Field("gdn_update_launch_s", c.gdn_update_launch_s);
  json.Field("gdn_launch_s", c.gdn_launch_s);
  json.EndObject();
}

void WriteJson(JsonWriter& json, const CalibrationResult& r) {
  json.BeginObject();
  json.Key("start");
  WriteJson(json, r.start);
  json.Key("fitted");
  WriteJson(json, r.fitted);
  json.Field("evaluations", r.evaluations);
  json.Key("classes");
  json.BeginArray();
  for (const ClassCalibration& c : r.classes) {
    json.BeginObject();
    json.Field("system", c.system);
    json.Field("class", NameOf(c.cls));
    json.Key("before");
    WriteJson(json, c.before);
    json.Key("after");
    WriteJson(json, c.after);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace fleetsim
