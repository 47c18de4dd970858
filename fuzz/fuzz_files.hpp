// What the fuzz targets share: a scratch folder of their own per process (files the parsers read
// by path are written there for every input), and the rule that a parser may reject an input only
// with halo::Error (anything else escaping, or any crash, is a finding).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "graph/base/error.hpp"

namespace halo::fuzz {

// /tmp/halo-fuzz-<pid>/, made on first use.
inline const std::string& scratch() {
  static const std::string dir = [] {
    const std::string d = "/tmp/halo-fuzz-" + std::to_string(::getpid());
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// Writes the input to scratch()/name and returns its path.
inline std::string write_input(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `parse`; a halo::Error is the clear refusal a bad input must get.
template <class F>
void expect_clean(F&& parse) {
  try {
    parse();
  } catch (const Error&) {
  }
}

}  // namespace halo::fuzz
