#pragma once
// The bodies of <rknnxx/core/shape_set.hpp> that are not templates (the run-time ShapeSet<>): included
// by it (header-only, the default) or compiled once (RKNNXX_SEPARATE_COMPILATION,
// docs/separate-compilation.md).

#include <rknnxx/core/shape_set.hpp>
#include <rknnxx/impl/decl.hpp>

namespace rknnxx {

RKNNXX_DECL ShapeSet<>::ShapeSet(const std::vector<std::vector<Dims>>& groups) {
  inputs_ = groups.empty() ? 0 : groups[0].size();
  shapes_count_ = groups.size();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].size() != inputs_)
      detail::fail("rknnxx::ShapeSet", "shape counts differ: group {} gives {} input shapes, group 0 gives {}", g,
                   groups[g].size(), inputs_);
    for (const Dims& d : groups[g]) shapes_.push_back(d);
  }
  base::validate(storage(), inputs_, shapes_count_);
}

RKNNXX_DECL ShapeSet<> ShapeSet<>::from_ranges(std::span<const rknn_input_range> ranges) {
  ShapeSet set;
  std::size_t shapes = 0;
  set.shapes_ = base::read_ranges(ranges, shapes);
  set.inputs_ = ranges.size();
  set.shapes_count_ = shapes;
  base::validate(set.storage(), set.inputs_, set.shapes_count_);
  return set;
}

}  // namespace rknnxx
