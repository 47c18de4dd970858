// Tests of partition/detail/stdio_capture.*: what a C library prints is captured, not shown, and
// folded into one line.
#include "partition/detail/stdio_capture.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

using namespace halo::partition::detail;

TEST_CASE("StdioCapture collects what is printed on stdout and stderr until finish", "[partition]") {
  StdioCapture capture;
  std::printf("Input Error: ");
  std::fprintf(stderr, "nparts is 0\n");
  const std::string text = capture.finish();
  CHECK(text.find("Input Error: ") != std::string::npos);
  CHECK(text.find("nparts is 0\n") != std::string::npos);
  CHECK(capture.finish().empty());
}

TEST_CASE("one_line trims the lines, drops empty ones and joins the rest", "[partition]") {
  CHECK(one_line("   Current memory used:  12 bytes\n\n***Memory allocation failed\r\n") ==
        "Current memory used:  12 bytes; ***Memory allocation failed");
  CHECK(one_line("").empty());
  CHECK(one_line(std::string(50, 'x'), 10) == "xxxxxxx...");
}
