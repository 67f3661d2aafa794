#include "broadcast.hpp"

#include "engine_error.hpp"
#include "tensor.hpp"

#include <algorithm>

namespace rknnxx::host {

std::vector<int64_t> broadcast_shape(std::span<const std::vector<int64_t>> shapes, std::string& error) {
  std::size_t rank = 0;
  for (const auto& s : shapes) {
    rank = std::max(rank, s.size());
  }
  std::vector<int64_t> out(rank, 1);
  for (std::size_t d = 0; d < rank; ++d) {
    for (const auto& s : shapes) {
      if (d + s.size() < rank) {
        continue;
      }
      const int64_t dim = s[d + s.size() - rank];
      if (dim == out[d] || dim == 1) {
        continue;
      }
      if (out[d] == 1) {
        out[d] = dim;
        continue;
      }
      std::vector<std::string> given;
      for (const auto& t : shapes) {
        given.push_back(shape_string(t));
      }
      error = "shapes ";
      for (std::size_t i = 0; i < given.size(); ++i) {
        error += (i == 0 ? "" : (i + 1 == given.size() ? " and " : ", ")) + given[i];
      }
      error += " cannot be broadcast together";
      return {};
    }
  }
  return out;
}

Broadcast::Broadcast(std::span<const std::vector<int64_t>> shapes) {
  if (shapes.size() > max_operands) {
    throw EngineError("too many operands to broadcast");
  }
  std::string error;
  shape_ = broadcast_shape(shapes, error);
  if (!error.empty()) {
    throw EngineError(error);
  }
  elements_ = element_count(shape_);
  const std::size_t rank = shape_.size();
  // Per operand: is each output dimension broadcast (operand dim 1 while output dim is not)?
  std::vector<std::vector<bool>> broadcast(shapes.size(), std::vector<bool>(rank, false));
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    for (std::size_t d = 0; d < rank; ++d) {
      const bool present = d + shapes[k].size() >= rank;
      const int64_t dim = present ? shapes[k][d + shapes[k].size() - rank] : 1;
      broadcast[k][d] = dim == 1 && shape_[d] != 1;
    }
  }
  // Merge adjacent dimensions that every operand treats alike; drop size-1 dimensions.
  std::vector<std::vector<bool>> merged_broadcast(shapes.size());
  for (std::size_t d = 0; d < rank; ++d) {
    if (shape_[d] == 1) {
      continue;
    }
    bool same = !dims_.empty();
    for (std::size_t k = 0; k < shapes.size() && same; ++k) {
      same = merged_broadcast[k].back() == broadcast[k][d];
    }
    if (same) {
      dims_.back() *= shape_[d];
    } else {
      dims_.push_back(shape_[d]);
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        merged_broadcast[k].push_back(broadcast[k][d]);
      }
    }
  }
  strides_.assign(shapes.size(), std::vector<int64_t>(dims_.size(), 0));
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    int64_t stride = 1;
    for (std::size_t d = dims_.size(); d-- > 0;) {
      if (!merged_broadcast[k][d]) {
        strides_[k][d] = stride;
        stride *= dims_[d];
      }
    }
  }
}

void Broadcast::row_offsets(int64_t row, std::span<int64_t> offsets) const {
  std::fill(offsets.begin(), offsets.end(), 0);
  for (std::size_t d = dims_.size() - (dims_.empty() ? 0 : 1); d-- > 0;) {
    const int64_t index = row % dims_[d];
    row /= dims_[d];
    for (std::size_t k = 0; k < offsets.size(); ++k) {
      offsets[k] += index * strides_[k][d];
    }
  }
}

}  // namespace rknnxx::host
