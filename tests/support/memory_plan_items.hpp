// Looking up a memory plan's items by name (train::MemoryPlan), for the tests that check which
// items a plan has.
#pragma once

#include <string>

#include "train/memory_plan.hpp"

namespace halo::test {

inline bool has_item(const train::MemoryPlan& plan, const std::string& name) {
  for (const train::MemoryItem& item : plan.items)
    if (item.name == name) return true;
  return false;
}

}  // namespace halo::test
