// Random CSV fields for the numeric readers' tests: the shapes feature files hold (shortest and
// fixed-precision decimals of floats), float midpoints, and the malformed shapes next to them.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

namespace halo::test {

// A random field of the shapes feature files hold and of the shapes next to them.
inline std::string random_field(std::mt19937_64& rng) {
  std::string s;
  switch (rng() % 8) {
    case 0: {  // shortest decimal of a random float
      char text[64];
      const float f = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(rng), static_cast<int>(rng() % 40) - 30);
      const auto r = std::to_chars(text, text + sizeof text, f, rng() % 2 ? std::chars_format::general : std::chars_format::fixed);
      return std::string(text, r.ptr);
    }
    case 1: {  // fixed precision, as numpy and pandas write
      char text[64];
      std::snprintf(text, sizeof text, "%.*f", static_cast<int>(rng() % 17), std::uniform_real_distribution<double>(-1e6, 1e6)(rng));
      return text;
    }
    case 2:  // a midpoint between two floats, or next to one
      return std::to_string(16777217 + 2 * static_cast<int>(rng() % 8)) + ".0";
    case 3:
      return "";
    default: {  // [-|+]digits[.digits] with lengths at and past the 16-byte limit
      static const char* const signs[] = {"", "", "-", "+"};
      s = signs[rng() % 4];
      const int whole = static_cast<int>(rng() % 12);
      const int fraction = static_cast<int>(rng() % 14);
      for (int d = 0; d < whole; ++d) s += static_cast<char>('0' + rng() % 10);
      if (rng() % 8 != 0) s += '.';
      for (int d = 0; d < fraction; ++d) s += static_cast<char>('0' + rng() % 10);
      if (rng() % 16 == 0) s.insert(rng() % (s.size() + 1), 1, "x.e-"[rng() % 4]);
      return s;
    }
  }
}

}  // namespace halo::test
