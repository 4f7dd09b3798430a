// The words the results use for their enums, in one table per enum: to_string(e) for writers and
// messages, parse_name<E>(text) for readers (nullopt for a word the enum does not have).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace ib {

// Specialised once per enum: `words` lists the names in the order of the enum's values (0, 1, ...).
template <typename E>
struct EnumWords;

template <typename E>
constexpr const char* to_string(E e) {
  return EnumWords<E>::words[static_cast<std::size_t>(e)];
}

template <typename E>
std::optional<E> parse_name(std::string_view text) {
  const auto& words = EnumWords<E>::words;
  for (std::size_t i = 0; i < words.size(); ++i)
    if (text == words[i]) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace ib
