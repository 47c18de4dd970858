// Recursive-descent parser for the Python literal subset of .npy headers.
#include "datasets/detail/py_literal.hpp"

#include <cctype>
#include <limits>

#include "graph/base/error.hpp"

namespace halo::datasets::detail {

namespace {

class Parser {
 public:
  explicit Parser(const std::string& text) : text_(text) {}

  PyValue parse_all() {
    PyValue v = parse_value(0);
    skip_space();
    if (pos_ != text_.size()) fail("end of the literal");
    return v;
  }

 private:
  // Headers nest two levels deep; the limit only guards against hostile input.
  static constexpr int max_depth = 32;

  [[noreturn]] void fail(const std::string& expected) const {
    const std::string found = pos_ < text_.size() ? "'" + std::string(1, text_[pos_]) + "'" : "the end";
    throw InvalidArgument("expected " + expected + " at character " + std::to_string(pos_) + ", found " + found);
  }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool accept_word(const char* word) {
    const std::string w(word);
    if (text_.compare(pos_, w.size(), w) != 0) return false;
    const std::size_t after = pos_ + w.size();
    if (after < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[after])) || text_[after] == '_'))
      return false;
    pos_ = after;
    return true;
  }

  PyValue parse_value(int depth) {
    if (depth > max_depth) fail("a shallower literal");
    skip_space();
    if (pos_ >= text_.size()) fail("a value");
    const char c = text_[pos_];
    PyValue v;
    if (c == '\'' || c == '"') {
      v.kind = PyValue::Kind::string;
      v.string = parse_string();
    } else if (c == '-' || c == '+' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = PyValue::Kind::integer;
      v.integer = parse_integer();
    } else if (c == '(') {
      ++pos_;
      v.kind = PyValue::Kind::tuple;
      // "(x)" is a parenthesised value, not a tuple; only "(x,)" is a one-element tuple.
      const bool trailing_comma = parse_sequence(')', depth, v.items);
      if (v.items.size() == 1 && !trailing_comma) return std::move(v.items[0]);
    } else if (c == '[') {
      ++pos_;
      v.kind = PyValue::Kind::list;
      parse_sequence(']', depth, v.items);
    } else if (c == '{') {
      ++pos_;
      v.kind = PyValue::Kind::dict;
      v.entries = parse_dict(depth);
    } else if (accept_word("True")) {
      v.kind = PyValue::Kind::boolean;
      v.boolean = true;
    } else if (accept_word("False")) {
      v.kind = PyValue::Kind::boolean;
    } else if (accept_word("None")) {
      v.kind = PyValue::Kind::none;
    } else {
      fail("a value");
    }
    return v;
  }

  // Elements up to `close`; returns whether the last element was followed by a comma.
  bool parse_sequence(char close, int depth, std::vector<PyValue>& items) {
    bool comma = false;
    while (!accept(close)) {
      if (!items.empty() && !comma) fail(std::string("',' or '") + close + "'");
      items.push_back(parse_value(depth + 1));
      comma = accept(',');
    }
    return comma;
  }

  std::vector<std::pair<PyValue, PyValue>> parse_dict(int depth) {
    std::vector<std::pair<PyValue, PyValue>> entries;
    bool comma = true;
    while (!accept('}')) {
      if (!comma) fail("',' or '}'");
      PyValue key = parse_value(depth + 1);
      if (!accept(':')) fail("':'");
      PyValue value = parse_value(depth + 1);
      entries.emplace_back(std::move(key), std::move(value));
      comma = accept(',');
    }
    return entries;
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string s;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) break;
        c = text_[pos_++];
      }
      s.push_back(c);
    }
    if (pos_ >= text_.size()) fail(std::string("closing ") + quote);
    ++pos_;
    return s;
  }

  std::int64_t parse_integer() {
    bool negative = false;
    if (text_[pos_] == '-' || text_[pos_] == '+') negative = text_[pos_++] == '-';
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) fail("a digit");
    std::int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("an integer that fits in 64 bits");
      value = value * 10 + digit;
      ++pos_;
    }
    // Python 2 era numpy wrote long integers as "3L".
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    return negative ? -value : value;
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

}  // namespace

const PyValue* PyValue::find(const std::string& key) const {
  for (const auto& [k, v] : entries)
    if (k.kind == Kind::string && k.string == key) return &v;
  return nullptr;
}

const char* describe(PyValue::Kind kind) {
  switch (kind) {
    case PyValue::Kind::none: return "None";
    case PyValue::Kind::boolean: return "a boolean";
    case PyValue::Kind::integer: return "an integer";
    case PyValue::Kind::string: return "a string";
    case PyValue::Kind::tuple: return "a tuple";
    case PyValue::Kind::list: return "a list";
    case PyValue::Kind::dict: return "a dict";
  }
  return "a value";
}

PyValue parse_py_literal(const std::string& text) { return Parser(text).parse_all(); }

}  // namespace halo::datasets::detail
