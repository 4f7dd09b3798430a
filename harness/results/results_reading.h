// The results reader's own ground, shared by its files (results_reader.cpp, results_reader_*.cpp, and the
// matrix.json reader matrix_reader.cpp), not by anyone else: a Field (a value of the document with its path, whose every wrong read throws a
// ResultsFileError naming the file and the field), the array helpers, and the readers one file hands
// another (meta, the mode's configuration, a phase, a run, a tenant's metrics and warnings, a decision).
#pragma once

#include "harness/results/results_reader.h"
#include "harness/core/numbers.h"

#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace ib::results_reading {

using ojson = nlohmann::ordered_json;


// The file being read, for errors: its name and what a wrong field says about it.
struct Source {
  std::string file;
  std::string wrong_field_note;  // e.g. "; not a results file of this version (schema 2.0)"
};

// A value of the document with its path, for errors that say where. Reading a field that is missing
// or of the wrong type throws ResultsFileError naming the file and the path.
class Field {
 public:
  Field(const ojson& value, std::string path, const Source& source) : v_(value), path_(std::move(path)), source_(source) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw ResultsFileError(source_.file, path_.empty() ? "(top level)" : path_, problem + source_.wrong_field_note);
  }

  bool has(const char* key) const { return v_.is_object() && v_.contains(key); }
  Field operator[](const char* key) const {
    if (!v_.is_object()) fail("an object was expected, found " + type());
    const std::string path = path_.empty() ? key : path_ + "." + key;
    const auto it = v_.find(key);
    if (it == v_.end()) Field(v_, path, source_).fail("missing");
    return Field(*it, path, source_);
  }
  Field operator[](std::size_t i) const { return Field(v_.at(i), path_ + "[" + std::to_string(i) + "]", source_); }

  bool is_null() const { return v_.is_null(); }
  const ojson& json() const { return v_; }
  std::string type() const { return v_.type_name(); }

  std::size_t size() const {
    if (!v_.is_array()) fail("an array was expected, found " + type());
    return v_.size();
  }
  std::size_t object_size() const {
    if (!v_.is_object()) fail("an object was expected, found " + type());
    return v_.size();
  }

  // A number; null (what the writer writes for NaN) reads as NaN.
  double number() const {
    if (v_.is_null()) return kNaN;
    if (!v_.is_number()) fail("a number was expected, found " + type());
    return v_.get<double>();
  }
  template <typename T>
  T integer() const {
    const bool fits = std::is_unsigned<T>::value ? v_.is_number_unsigned() : v_.is_number_integer();
    if (!fits) fail(std::string(std::is_unsigned<T>::value ? "a non-negative " : "an ") + "integer was expected, found " +
                    type());
    if (!in_range<T>(v_)) fail(v_.dump() + " is out of range (" + std::to_string(std::numeric_limits<T>::min()) + ".." +
                               std::to_string(std::numeric_limits<T>::max()) + ")");
    return v_.get<T>();
  }
  // A JSON integer that T holds (get<T>() would wrap one that it does not: 2^63 as an int64 is -2^63).
  template <typename T, typename J>
  static bool in_range(const J& v) {
    if (v.is_number_unsigned()) return v.template get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    const auto i = v.template get<std::int64_t>();
    if (std::is_unsigned<T>::value) return i >= 0 && static_cast<std::uint64_t>(i) <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
    return i >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) && i <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
  }
  std::string string() const {
    if (!v_.is_string()) fail("a string was expected, found " + type());
    return v_.get<std::string>();
  }
  bool boolean() const {
    if (!v_.is_boolean()) fail("true or false was expected, found " + type());
    return v_.get<bool>();
  }
  template <typename E>
  E word() const {
    const auto e = parse_name<E>(string());
    if (!e) fail("\"" + string() + "\" is not one of the words this field takes");
    return *e;
  }
  // null reads as nullopt.
  std::optional<double> optional_number() const {
    return v_.is_null() ? std::nullopt : std::optional<double>(number());
  }
  template <typename T>
  std::optional<T> optional_integer() const {
    return v_.is_null() ? std::nullopt : std::optional<T>(integer<T>());
  }

  // Arrays of numbers are read without a Field per element (raw sample arrays are long).
  std::vector<double> numbers() const {
    std::vector<double> out;
    out.reserve(size());
    for (std::size_t i = 0; i < v_.size(); ++i)
      out.push_back(v_[i].is_number() ? v_[i].get<double>() : (*this)[i].number());
    return out;
  }
  std::vector<std::string> strings() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < size(); ++i) out.push_back((*this)[i].string());
    return out;
  }
  // A free-form object (params, placement, mode_config) as the structs hold it.
  nlohmann::json free_form() const { return nlohmann::json::parse(v_.dump()); }

  template <typename F>
  void each_member(F f) const {
    object_size();
    for (auto it = v_.begin(); it != v_.end(); ++it) f(it.key(), (*this)[it.key().c_str()]);
  }

 private:
  const ojson& v_;
  std::string path_;
  const Source& source_;
};

// Integer arrays are long too: checked in one pass, converted in another.
template <typename T>
std::vector<T> integer_array(const Field& f) {
  const ojson& a = f.json();
  f.size();
  std::vector<T> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool fits = (std::is_unsigned<T>::value ? a[i].is_number_unsigned() : a[i].is_number_integer()) &&
                      Field::in_range<T>(a[i]);
    out.push_back(fits ? a[i].get<T>() : f[i].integer<T>());
  }
  return out;
}

// A per-sample array has one value per sample, or none (a flag the phase does not have: the
// analysis then reads every sample as one block, in its window, counted).
template <typename T>
void check_length(const Field& f, const std::vector<T>& v, std::size_t n) {
  if (!v.empty() && v.size() != n)
    f.fail(std::to_string(v.size()) + " values where start_ns has " + std::to_string(n));
}

inline std::optional<std::string> optional_string(const Field& f) {
  return f.is_null() ? std::nullopt : std::optional<std::string>(f.string());
}

// results_reader_meta.cpp: meta (and its devices), a run's mode_config.
Meta read_meta(const Field& f, bool& raw_samples);
ModeConfig read_mode_config(const Field& f);

// results_reader_phases.cpp: one tenant's phase (outcome, statistics, telemetry, samples).
PhaseResult read_phase(const Field& f);

// results_reader_runs.cpp: a run (blocks, tenants, stopping), and what an aggregate shares with a tenant.
RunResult read_run(const Field& f);
std::optional<TenantMetrics> read_metrics(const Field& f);
std::vector<Warning> read_warnings(const Field& f);
std::optional<Decision> read_decision(const Field& f);

}  // namespace ib::results_reading
