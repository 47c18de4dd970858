// A parser for the small subset of Python literals found in .npy headers: dicts, tuples, lists,
// strings, integers, True, False and None. Enough for numpy's header dict, nothing more.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace halo::datasets::detail {

struct PyValue {
  enum class Kind { none, boolean, integer, string, tuple, list, dict };
  Kind kind = Kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string string;
  std::vector<PyValue> items;                          // tuple and list elements
  std::vector<std::pair<PyValue, PyValue>> entries;    // dict (key, value) in source order

  // The value of a dict entry whose key is the string `key`, or nullptr.
  const PyValue* find(const std::string& key) const;
};

// What a PyValue is, for messages: "a string", "a tuple", ...
const char* describe(PyValue::Kind kind);

// Parses one literal spanning all of `text` (surrounding whitespace allowed). Throws
// InvalidArgument saying what was expected at which character offset.
PyValue parse_py_literal(const std::string& text);

}  // namespace halo::datasets::detail
