#include "core/csv_reader.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/input_error.h"

namespace fleetsim {
namespace {

// Into a vector the caller keeps, so that a file's records reuse one allocation.
void SplitInto(std::string_view text, std::vector<std::string_view>& fields) {
  fields.clear();
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ',') {
      fields.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
}

void StripLineEnd(std::string& text) {
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n'))
    text.pop_back();
}

}  // namespace

CsvReader::CsvReader(const std::string& path) : path_(path), in_(path) {
  if (!in_) throw InputError(path, 0, "", "cannot open file");
  std::string header;
  if (!std::getline(in_, header))
    throw InputError(path, 1, "", "empty file: expected a header row");
  line_ = 1;
  StripLineEnd(header);
  SplitInto(header, fields_);
  for (std::string_view name : fields_)
    header_.emplace_back(name);
}

int CsvReader::ColumnIndex(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

void CsvReader::RequireColumns(std::initializer_list<std::string_view> names) const {
  for (std::string_view name : names) {
    if (ColumnIndex(name) < 0) {
      throw InputError(path_, 1, std::string(name), "missing column in the header");
    }
  }
}

void CsvReader::Fail(std::string_view column, const std::string& message) const {
  throw InputError(path_, line_, std::string(column), message);
}

bool CsvReader::Next() {
  while (std::getline(in_, record_)) {
    ++line_;
    StripLineEnd(record_);
    if (record_.empty()) continue;
    SplitInto(record_, fields_);
    if (fields_.size() != header_.size()) {
      Fail("", "has " + std::to_string(fields_.size()) + " fields, the header has " +
                   std::to_string(header_.size()));
    }
    return true;
  }
  return false;
}

std::string_view CsvReader::Field(std::string_view column) const {
  const int index = ColumnIndex(column);
  if (index < 0) Fail(column, "no such column");
  return fields_[static_cast<std::size_t>(index)];
}

std::string_view CsvReader::Text(std::string_view column) const {
  return Field(column);
}

int64_t CsvReader::Int(std::string_view column) const {
  const std::string_view text = Field(column);
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    Fail(column, "expected an integer, got " + QuoteInput(text));
  }
  return value;
}

double CsvReader::Number(std::string_view column) const {
  const std::string_view field = Field(column);
  // from_chars and strtod both round correctly, so a field both read gives the same double.
  // from_chars is the fast path; what it refuses (a leading '+' or space, an underflow)
  // goes to strtod, which accepts or names it as before.
  double fast = 0;
  auto [fast_end, fast_error] = std::from_chars(field.data(), field.data() + field.size(), fast);
  if (fast_error == std::errc() && fast_end == field.data() + field.size() && std::isfinite(fast))
    return fast;
  const std::string text(field);
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    Fail(column, "expected a number, got " + QuoteInput(text));
  }
  if (!std::isfinite(value)) Fail(column, "expected a finite number, got " + QuoteInput(text));
  return value;
}

}  // namespace fleetsim
