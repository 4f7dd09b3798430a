#include "kernels/workload.h"

#include <cmath>
#include <sstream>

namespace ib {

const char* backend_name(Backend b) { return b == Backend::cuda ? "cuda" : "host"; }

void Registry::add(WorkloadSpec spec) {
  const std::string name = spec.name;
  if (!specs_.emplace(name, std::move(spec)).second) {
    throw std::logic_error("workload registered twice: " + name);
  }
}

const WorkloadSpec* Registry::find(const std::string& name) const {
  auto it = specs_.find(name);
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<const WorkloadSpec*> Registry::all() const {
  std::vector<const WorkloadSpec*> out;
  for (const auto& [name, spec] : specs_) out.push_back(&spec);
  return out;
}

namespace {

std::string format_bound(double v) {
  if (std::fabs(v) < 1e15 && v == std::floor(v)) return std::to_string(static_cast<long long>(v));
  std::ostringstream os;
  os << v;
  return os.str();
}

// A value echoed in an error: at most `n` characters.
std::string shortened(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n) + "..."; }

std::string expected_text(const ParamSpec& p) {
  switch (p.type) {
    case ParamSpec::Type::integer:
    case ParamSpec::Type::number: {
      std::string t = p.type == ParamSpec::Type::integer ? "integer" : "number";
      if (p.min && p.max) return t + " in [" + format_bound(*p.min) + ", " + format_bound(*p.max) + "]";
      if (p.min) return t + " >= " + format_bound(*p.min);
      if (p.max) return t + " <= " + format_bound(*p.max);
      return t;
    }
    case ParamSpec::Type::string: {
      if (!p.suffix.empty()) return "empty, or a file name ending in " + p.suffix;
      if (p.choices.empty()) return "string";
      std::string s = "one of ";
      for (size_t i = 0; i < p.choices.size(); ++i) s += (i ? ", " : "") + p.choices[i];
      return s;
    }
    case ParamSpec::Type::boolean:
      return "boolean";
  }
  return "?";
}

bool value_ok(const ParamSpec& p, const nlohmann::json& v) {
  switch (p.type) {
    case ParamSpec::Type::integer:
    case ParamSpec::Type::number: {
      if (p.type == ParamSpec::Type::integer ? !v.is_number_integer() : !v.is_number()) return false;
      const double x = v.get<double>();
      if (!std::isfinite(x)) return false;
      if (p.min && x < *p.min) return false;
      if (p.max && x > *p.max) return false;
      return true;
    }
    case ParamSpec::Type::string:
      if (!v.is_string()) return false;
      if (!p.suffix.empty()) {
        const std::string text = v.get<std::string>();
        if (!text.empty() && (text.size() <= p.suffix.size() ||
                              text.compare(text.size() - p.suffix.size(), p.suffix.size(), p.suffix) != 0))
          return false;
      }
      if (p.choices.empty()) return true;
      for (const auto& c : p.choices)
        if (c == v.get<std::string>()) return true;
      return false;
    case ParamSpec::Type::boolean:
      return v.is_boolean();
  }
  return false;
}

}  // namespace

std::optional<Params> validate_params(const WorkloadSpec& spec, const nlohmann::json& given,
                                      std::string& error) {
  if (spec.validate) return spec.validate(given, error);
  if (!given.is_object()) {
    error = ": expected an object of parameters, got " + std::string(given.type_name());
    return std::nullopt;
  }
  Params out = nlohmann::json::object();
  for (const auto& [key, value] : given.items()) {
    const ParamSpec* match = nullptr;
    for (const auto& p : spec.params)
      if (p.name == key) match = &p;
    if (!match) {
      std::string known;
      for (const auto& p : spec.params) known += (known.empty() ? "" : ", ") + p.name;
      error = shortened(key, 40) + ": unknown parameter of workload '" + spec.name + "' (known: " +
              (known.empty() ? "none" : known) + ")";
      return std::nullopt;
    }
    if (!value_ok(*match, value)) {
      error = key + ": expected " + expected_text(*match) + ", got " + shortened(value.dump(), 40);
      return std::nullopt;
    }
  }
  for (const auto& p : spec.params) out[p.name] = given.contains(p.name) ? given.at(p.name) : p.default_value;
  return out;
}

}  // namespace ib
