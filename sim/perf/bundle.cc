#include "perf/bundle.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>

#include "core/csv_reader.h"
#include "core/input_error.h"
#include "core/yaml_section.h"
#include "perf/bundle_format.h"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

// Rows of one table before gridding: coordinates (up to four axes, the unused ones 0)
// and time. A fixed array: a bundle's tables are tens of thousands of rows.
struct Point {
  std::array<double, 4> x;
  double us;
};

// A row's time: microseconds, finite (CsvReader checks) and not negative.
double TimeUs(const CsvReader& csv) {
  const double us = csv.Number(column::kTimeUs);
  if (us < 0) csv.Fail(column::kTimeUs, "must not be negative");
  return us;
}

// Builds a complete regular grid from rows; refuses two rows at one point, and a grid with
// holes, naming the first.
GridTable Grid(const std::vector<Point>& points, std::size_t rank, const std::string& file,
               const std::string& what) {
  std::vector<std::vector<double>> axes(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::vector<double>& axis = axes[i];
    axis.reserve(points.size());
    for (const Point& p : points)
      axis.push_back(p.x[i]);
    // Stable, so that of equal values (0 and -0) the first row's is kept, as a set keeps it.
    std::stable_sort(axis.begin(), axis.end());
    axis.erase(std::unique(axis.begin(), axis.end()), axis.end());
  }
  GridTable table(axes);
  std::vector<std::size_t> index(rank);
  for (const Point& p : points) {
    for (std::size_t i = 0; i < rank; ++i) {
      index[i] = static_cast<std::size_t>(AxisIndex(table.axis(i), p.x[i]));
    }
    if (table.IsSet(index))
      throw InputError(file, 0, what, "has two rows at " + table.PointText(index));
    table.Set(index, p.us);
  }
  table.FillHoles();
  if (std::string missing = table.FirstMissingPoint(); !missing.empty()) {
    throw InputError(file, 0, what, "the grid has no row at " + missing);
  }
  return table;
}

std::map<std::string, GridTable> ReadCurves(const std::string& file, std::string_view x_column) {
  CsvReader csv(file);
  csv.RequireColumns({column::kLayer, x_column, column::kTimeUs});
  std::map<std::string, std::vector<Point>> by_kernel;
  while (csv.Next()) {
    const double us = TimeUs(csv);
    by_kernel[std::string(csv.Text(column::kLayer))].push_back(
        {{static_cast<double>(csv.Int(x_column))}, us});
  }
  std::map<std::string, GridTable> curves;
  for (const auto& [kernel, points] : by_kernel)
    curves[kernel] = Grid(points, 1, file, kernel);
  return curves;
}

AttentionTables ReadAttention(const std::string& file) {
  CsvReader csv(file);
  AttentionTables tables;
  tables.legacy_kv_prefill = csv.HasColumn(column::kKvPrefill);
  const std::string_view key_column =
      tables.legacy_kv_prefill ? column::kKvPrefill : column::kPrefillKey;
  csv.RequireColumns(
      {column::kPrefillChunk, key_column, column::kNDecode, column::kKvDecode, column::kTimeUs});
  const bool has_q_len = csv.HasColumn(column::kDecodeQLen);
  std::vector<Point> prefill, decode, mixed;
  while (csv.Next()) {
    if (has_q_len && csv.Int(column::kDecodeQLen) > 1) continue;  // speculative-decode rows
    const auto chunk = static_cast<double>(csv.Int(column::kPrefillChunk));
    const double key = csv.Number(key_column);
    const auto n = static_cast<double>(csv.Int(column::kNDecode));
    const auto kv = static_cast<double>(csv.Int(column::kKvDecode));
    const double us = TimeUs(csv);
    if (chunk > 0 && n > 0) {
      mixed.push_back({{chunk, key, n, kv}, us});
    } else if (chunk > 0) {
      prefill.push_back({{chunk, key}, us});
    } else if (n > 0) {
      decode.push_back({{n, kv}, us});
    }
  }
  if (prefill.empty() || decode.empty()) {
    throw InputError(file, 0, "", "needs prefill-only and decode-only rows");
  }
  tables.prefill = Grid(prefill, 2, file, "prefill-only rows");
  tables.decode = Grid(decode, 2, file, "decode-only rows");
  if (!mixed.empty()) tables.mixed = Grid(mixed, 4, file, "mixed rows");
  return tables;
}

// The 64-token scan-chunk staircase: rows at token counts in the same chunk count keep
// the largest-token row (the cost of the whole chunk).
std::vector<Point> InScanChunks(std::vector<Point> points) {
  for (Point& p : points)
    p.x[0] = std::ceil(p.x[0] / kGdnScanChunk);
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
  std::vector<Point> kept;
  for (const Point& p : points) {
    if (!kept.empty() && kept.back().x == p.x) {
      kept.back().us = std::max(kept.back().us, p.us);
    } else {
      kept.push_back(p);
    }
  }
  return kept;
}

std::map<std::string, GdnKernelTables> ReadLinearAttention(const std::string& file) {
  CsvReader csv(file);
  csv.RequireColumns({column::kLayer, column::kPrefillTokens, column::kNDecode, column::kTimeUs});
  std::map<std::string, std::vector<Point>> prefill, decode, mixed;
  while (csv.Next()) {
    const std::string kernel(csv.Text(column::kLayer));
    const auto tokens = static_cast<double>(csv.Int(column::kPrefillTokens));
    const auto n = static_cast<double>(csv.Int(column::kNDecode));
    const double us = TimeUs(csv);
    if (tokens > 0 && n > 0) {
      mixed[kernel].push_back({{tokens, n}, us});
    } else if (tokens > 0) {
      prefill[kernel].push_back({{tokens}, us});
    } else if (n > 0) {
      decode[kernel].push_back({{n}, us});
    }
  }
  // The packed operator replaces the historical regime kernels; a bundle is one or the other.
  std::set<std::string> names;
  for (const auto* regime : {&prefill, &decode, &mixed}) {
    for (const auto& [kernel, points] : *regime)
      names.insert(kernel);
  }
  const std::string packed(NameOf(Kernel::kGdnCore));
  if (names.contains(packed) && names.size() > 1) {
    throw InputError(
        file, 0, packed,
        "mixes the packed gdn_core layout with historical regime kernels; a bundle uses one");
  }
  std::map<std::string, GdnKernelTables> kernels;
  for (auto& [kernel, points] : prefill)
    kernels[kernel].prefill = Grid(InScanChunks(points), 1, file, kernel);
  for (auto& [kernel, points] : decode)
    kernels[kernel].decode = Grid(points, 1, file, kernel);
  for (auto& [kernel, points] : mixed)
    kernels[kernel].mixed = Grid(InScanChunks(points), 2, file, kernel);
  return kernels;
}

// MoE rows exist only where the experts can be reached (activated <= tokens x top-k):
// an unreachable cell takes the value of the nearest reachable one on its tokens row.
GridTable ReadMoe(const std::string& file) {
  CsvReader csv(file);
  csv.RequireColumns({column::kTokens, column::kActivatedExperts, column::kTimeUs});
  const bool has_ep = csv.HasColumn(column::kEp);
  std::vector<Point> points;
  while (csv.Next()) {
    if (has_ep && csv.Int(column::kEp) != 1) continue;
    points.push_back({{static_cast<double>(csv.Int(column::kTokens)),
                       static_cast<double>(csv.Int(column::kActivatedExperts))},
                      TimeUs(csv)});
  }
  std::set<double> tokens, experts;
  for (const Point& p : points) {
    tokens.insert(p.x[0]);
    experts.insert(p.x[1]);
  }
  GridTable table({{tokens.begin(), tokens.end()}, {experts.begin(), experts.end()}});
  for (const Point& p : points) {
    table.Set({static_cast<std::size_t>(AxisIndex(table.axis(0), p.x[0])),
               static_cast<std::size_t>(AxisIndex(table.axis(1), p.x[1]))},
              p.us);
  }
  for (std::size_t t = 0; t < table.axis(0).size(); ++t) {
    std::optional<double> last;
    for (std::size_t e = 0; e < table.axis(1).size(); ++e) {
      if (table.IsSet({t, e})) {
        last = table.At({t, e});
      } else if (last) {
        table.Fill({t, e}, *last);
      }
    }
  }
  if (std::string missing = table.FirstMissingPoint(); !missing.empty()) {
    throw InputError(file, 0, "", "the MoE grid has no row at " + missing);
  }
  return table;
}

BundleTables ReadTp(const fs::path& dir, int tp) {
  const auto path = [&dir](BundleFile file) { return (dir / FileName(file)).string(); };
  BundleTables tables;
  tables.tp = tp;
  tables.dense = ReadCurves(path(BundleFile::kDense), column::kTokens);
  tables.per_sequence = ReadCurves(path(BundleFile::kPerSequence), column::kSequences);
  tables.attention = ReadAttention(path(BundleFile::kAttention));
  if (fs::exists(path(BundleFile::kLinearAttention))) {
    tables.linear_attention = ReadLinearAttention(path(BundleFile::kLinearAttention));
  }
  if (fs::exists(path(BundleFile::kMoe))) tables.moe = ReadMoe(path(BundleFile::kMoe));
  if (fs::exists(path(BundleFile::kAllreduce))) {
    const std::string file = path(BundleFile::kAllreduce);
    CsvReader csv(file);
    csv.RequireColumns({column::kBytes, column::kTimeUs});
    std::vector<Point> points;
    while (csv.Next())
      points.push_back({{static_cast<double>(csv.Int(column::kBytes))}, TimeUs(csv)});
    tables.allreduce = Grid(points, 1, file, "allreduce");
  }
  return tables;
}

// Lower-case letters and digits of a name's last path part.
std::string NameKey(std::string_view name) {
  if (const auto slash = name.rfind('/'); slash != std::string_view::npos)
    name = name.substr(slash + 1);
  std::string key;
  for (const char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return key;
}

bool SameName(const std::string& a, const std::string& b) {
  const std::string x = NameKey(a), y = NameKey(b);
  return x.rfind(y, 0) == 0 || y.rfind(x, 0) == 0;
}

void ReadMeta(const fs::path& dir, Bundle& bundle) {
  const YamlSection meta = LoadYamlFile((dir / kMetaFile).string());
  bundle.hardware = meta.GetOr<std::string>(meta_key::kHardware, "");
  bundle.model = meta.GetOr<std::string>(meta_key::kModel, "");
  if (auto source = meta.FindChild(meta_key::kSource)) {
    bundle.source = source->Get<std::string>(meta_key::kKind);
  } else if (meta.Has(meta_key::kSource)) {
    bundle.source = meta.Get<std::string>(meta_key::kSource);
  }
  if (bundle.source != "measured" && bundle.source != "kernel-db" && bundle.source != "analytic") {
    meta.Fail(meta_key::kSource,
              "unknown source '" + bundle.source + "' (accepted: measured, kernel-db, analytic)");
  }
  // A degree meta.yaml lists must have its tables: a bundle copied without one would
  // otherwise pass for complete.
  if (meta.Has(meta_key::kTpDegrees)) {
    for (const int tp : meta.GetList<int>(meta_key::kTpDegrees)) {
      if (!fs::is_directory(dir / TpFolder(tp)))
        meta.Fail(meta_key::kTpDegrees, "lists TP " + std::to_string(tp) +
                                            ", but the bundle has no " + TpFolder(tp) + "/ folder");
    }
  }
  if (auto effective = meta.FindChild(meta_key::kEngineEffective)) {
    bundle.block_size = effective->Find<int>(meta_key::kBlockSize);
    bundle.enforce_eager = effective->GetOr<bool>(meta_key::kEnforceEager, false);
  }
  if (auto resolved = meta.FindChild(meta_key::kEngineResolved)) {
    const YamlSection per_tp = resolved->Child(meta_key::kPerTp);
    for (const std::string& key : per_tp.Keys()) {
      const YamlSection entry = per_tp.Child(key);
      BundleEngineResolved engine;
      engine.block_size = entry.Get<int>(meta_key::kBlockSize);
      engine.kv_cache_bytes = entry.GetOr<int64_t>(meta_key::kKvCacheBytes, 0);
      engine.max_num_batched_tokens = entry.GetOr<int>(meta_key::kMaxNumBatchedTokens, 0);
      engine.attention_backend = entry.GetOr<std::string>(meta_key::kAttentionBackend, "");
      engine.decode_kernel = entry.GetOr<std::string>(meta_key::kDecodeKernel, "");
      bundle.engine_resolved[std::stoi(key)] = engine;
    }
  }
}

}  // namespace

const GridTable* BundleTables::Curve(Kernel kernel) const {
  const BundleFile file = FileOf(kernel);
  if (file != BundleFile::kDense && file != BundleFile::kPerSequence) return nullptr;
  const auto& curves = file == BundleFile::kDense ? dense : per_sequence;
  const auto found = curves.find(std::string(NameOf(kernel)));
  return found == curves.end() ? nullptr : &found->second;
}

std::vector<int> Bundle::TpDegrees() const {
  std::vector<int> degrees;
  for (const auto& [tp, tables] : per_tp)
    degrees.push_back(tp);
  return degrees;
}

const BundleTables& Bundle::ForTp(int tp) const {
  auto found = per_tp.find(tp);
  if (found != per_tp.end()) return found->second;
  std::vector<int> degrees = TpDegrees();
  degrees.insert(degrees.end(), unread_tp.begin(), unread_tp.end());
  std::sort(degrees.begin(), degrees.end());
  std::string available;
  for (int degree : degrees)
    available += (available.empty() ? "" : ", ") + std::to_string(degree);
  throw InputError(
      dir, 0, "tp",
      "the bundle has no tables for TP " + std::to_string(tp) + " (available: " + available + ")");
}

Bundle LoadBundle(const std::string& dir, std::optional<int> only_tp) {
  const fs::path root(dir);
  if (!fs::exists(root / kMetaFile)) {
    throw InputError(dir, 0, "", "not a performance bundle: no meta.yaml");
  }
  Bundle bundle;
  bundle.dir = dir;
  ReadMeta(root, bundle);
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string name = entry.path().filename().string();
    const std::optional<int> folder_tp = TpOfFolder(name);
    if (!entry.is_directory() || !folder_tp) continue;
    const int tp = *folder_tp;
    if (only_tp && tp != *only_tp) {
      bundle.unread_tp.push_back(tp);
      continue;
    }
    bundle.per_tp[tp] = ReadTp(entry.path(), tp);
  }
  if (!bundle.per_tp.empty()) {
    const YamlSection meta = LoadYamlFile((root / kMetaFile).string());
    for (auto& [tp, tables] : bundle.per_tp) {
      tables.skew =
          ReadSkewFit(meta, tp, (root / TpFolder(tp) / FileName(BundleFile::kSkewFit)).string());
    }
  }
  if (bundle.per_tp.empty() && bundle.unread_tp.empty())
    throw InputError(dir, 0, "", "no tp<N>/ folders in the bundle");
  return bundle;
}

std::vector<std::string> BundleMismatches(const Bundle& bundle, const std::string& model,
                                          const std::string& hardware) {
  std::vector<std::string> out;
  if (!bundle.model.empty() && !model.empty() && !SameName(bundle.model, model)) {
    out.push_back("the bundle " + bundle.dir + " is for model '" + bundle.model + "', not " +
                  model + ": its times are that model's");
  }
  if (!bundle.hardware.empty() && !hardware.empty() && !SameName(bundle.hardware, hardware)) {
    out.push_back("the bundle " + bundle.dir + " was measured or built on '" + bundle.hardware +
                  "', not " + hardware + ": its times are that GPU's");
  }
  return out;
}

}  // namespace fleetsim
