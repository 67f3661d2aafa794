#include "shape_choice.hpp"

#include "api_error.hpp"
#include "model_io.hpp"

#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/layout.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace rknnxx::host {

namespace {

// NCHW dims from an attr's NHWC dims (4-D) or as given (other ranks).
std::vector<int64_t> onnx_dims(const rknn_tensor_attr& attr) {
  return nhwc_to_nchw(std::vector<int64_t>(attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS)));
}

std::vector<int64_t> attr_dims(const rknn_tensor_attr& attr) {
  return {attr.dims, attr.dims + std::min<uint32_t>(attr.n_dims, RKNN_MAX_DIMS)};
}

[[noreturn]] void refuse(std::span<const rknn_tensor_attr> attrs, const std::vector<ShapeChoice>& set) {
  std::string allowed;
  for (const ShapeChoice& choice : set) {
    allowed += "\n  ";
    for (size_t i = 0; i < choice.size(); ++i) {
      const auto& d = choice[i];
      allowed +=
          fmt::format("{}{} {}", i ? ", " : "", d.size() == 4 ? "NHWC" : "UNDEFINED", dims_text(nchw_to_nhwc(d)));
    }
  }
  std::string hint;
  for (const rknn_tensor_attr& a : attrs) {
    const auto given = attr_dims(a);
    for (const ShapeChoice& choice : set)
      if (given.size() == 4 && choice[a.index] == given)
        hint = fmt::format("\n  input {}: dims {} are this shape in NCHW order; NHWC wants {}", a.index,
                           dims_text(given), dims_text(nchw_to_nhwc(given)));
  }
  std::string given_text;
  for (size_t i = 0; i < attrs.size(); ++i)
    given_text += fmt::format("{}{}", i ? ", " : "", dims_text(attr_dims(attrs[i])));
  fail(RKNN_ERR_FAIL, "shapes {} are not in the model's shape set; the supported shapes are:{}{}", given_text, allowed,
       hint);
}

}  // namespace

ShapeChoice choose_shapes(const LoadedModel& model, std::span<const rknn_tensor_attr> attrs) {
  if (attrs.size() != model.inputs().size())
    fail(RKNN_ERR_PARAM_INVALID, "n_inputs is {}, the model has {} inputs", attrs.size(), model.inputs().size());
  ShapeChoice wanted(attrs.size());
  for (const rknn_tensor_attr& a : attrs) {
    check_index(model, true, a.index);
    const uint32_t n = std::min<uint32_t>(a.n_dims, RKNN_MAX_DIMS);
    const rknn_tensor_format expected_fmt = n == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
    if (a.fmt != expected_fmt)
      fail(RKNN_ERR_PARAM_INVALID, "input {}: fmt must be {} for a {}-D shape, given {}", a.index,
           name_of(static_cast<TensorFormat>(expected_fmt)), n, name_of(static_cast<TensorFormat>(a.fmt)));
    wanted[a.index] = onnx_dims(a);
  }
  const auto& set = model.dynamic() ? model.shape_set() : std::vector<ShapeChoice>{model.initial_shapes()};
  if (std::find(set.begin(), set.end(), wanted) == set.end()) refuse(attrs, set);
  return wanted;
}

}  // namespace rknnxx::host
