// Streams a CSV file with a header row, one record at a time, with typed access by
// column name. Every problem is an InputError naming the file, the line and the column.
//
//   CsvReader csv("tp1/dense.csv");
//   csv.RequireColumns({"layer", "tokens", "time_us"});
//   while (csv.Next()) use(csv.Text("layer"), csv.Int("tokens"), csv.Number("time_us"));
#pragma once

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

class CsvReader {
 public:
  explicit CsvReader(const std::string& path);

  const std::string& path() const { return path_; }
  int line() const { return line_; }
  bool HasColumn(std::string_view name) const { return ColumnIndex(name) >= 0; }
  void RequireColumns(std::initializer_list<std::string_view> names) const;

  // Advances to the next record; false at the end of the file.
  bool Next();
  std::string_view Text(std::string_view column) const;
  int64_t Int(std::string_view column) const;
  double Number(std::string_view column) const;
  [[noreturn]] void Fail(std::string_view column, const std::string& message) const;

 private:
  int ColumnIndex(std::string_view name) const;
  std::string_view Field(std::string_view column) const;

  std::string path_;
  std::ifstream in_;
  std::vector<std::string> header_;
  std::string record_;
  std::vector<std::string_view> fields_;
  int line_ = 0;
};

}  // namespace fleetsim
