#pragma once
// Shape sets of dynamic-shape models: the toolkit's dynamic_input (docs/c-interface.md#dynamic-shapes), [[input0_shapeA, input1_shapeA],
// [input0_shapeB, input1_shapeB], ...]. The s-th shape of every input belongs together: a model
// runs with one group at a time, never a mix across groups.
//
//   constexpr ShapeSet seed{{{Dims{1, 224}, Dims{1, 40}},     // group 0
//                            {Dims{1, 112}, Dims{1, 80}}}};   // group 1
//   static_assert(seed.max_shape_index() == 0);  // 1x224 + 1x40 = 264 > 1x112 + 1x80 = 192
//   template <auto Shapes> struct Model;  Model<seed> m;     // usable as a template argument
//   auto set = ShapeSet<>::from_ranges(ranges);             // from RKNN_QUERY_INPUT_DYNAMIC_RANGE
//   set.fill_input_attrs(1, attrs);                         // then rknn_set_input_shapes(ctx, n, attrs)
//
// Order of dims: the query reports 4-D inputs as NHWC; the toolkit's dynamic_input is in the
// framework's order (NCHW for ONNX). set.transform(nchw_to_nhwc) converts a whole set.
//
// ShapeSet<I, S> has I inputs and S shapes known at compile time (S <= 512, RKNN_MAX_DYNAMIC_SHAPE_NUM);
// ShapeSet<> (both dynamic) is the same vocabulary with the counts read at run time. Both are
// validated on construction: every group has one shape per input, and every shape of one input
// has the same rank. At compile time a violation does not compile; at run time it throws Error.

#include <rknnxx/abi/c_api.h>
#include <rknnxx/core/dims.hpp>
#include <rknnxx/core/error.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace rknnxx {

inline constexpr std::size_t max_shapes = RKNN_MAX_DYNAMIC_SHAPE_NUM;
inline constexpr std::size_t dynamic_count = std::dynamic_extent;  // a count read at run time

template <std::size_t Inputs = dynamic_count, std::size_t Shapes = dynamic_count> class ShapeSet;

namespace detail {

// The algorithms shared by the static and the dynamic shape set; storage is group-major.
template <class Derived> class ShapeSetBase {
public:
  [[nodiscard]] constexpr const Dims& shape(std::size_t group, std::size_t input) const {
    if (group >= self().num_shapes() || input >= self().num_inputs())
      fail("rknnxx::ShapeSet::shape", "shape ({}, {}) is outside {} groups of {} inputs", group, input,
           self().num_shapes(), self().num_inputs());
    return self().storage()[group * self().num_inputs() + input];
  }
  [[nodiscard]] constexpr std::span<const Dims> group(std::size_t g) const {
    if (g >= self().num_shapes())
      fail("rknnxx::ShapeSet::group", "group {} is outside the set's {} groups", g, self().num_shapes());
    return self().storage().subspan(g * self().num_inputs(), self().num_inputs());
  }
  // The sum of the input sizes (element counts) of one group.
  [[nodiscard]] constexpr std::uint64_t group_elements(std::size_t g) const {
    std::uint64_t sum = 0;
    for (const Dims& d : group(g)) {
      const std::uint64_t e = d.elements();
      if (sum + e < sum) fail("rknnxx::ShapeSet::group_elements", "the input sizes of group {} overflow 64 bits", g);
      sum += e;  // a wrapped sum would pick the wrong MaxShape
    }
    return sum;
  }
  // The toolkit's MaxShape: the group with the largest sum of input sizes (the first on a tie).
  [[nodiscard]] constexpr std::size_t max_shape_index() const {
    std::size_t best = 0;
    for (std::size_t g = 1; g < self().num_shapes(); ++g)
      if (group_elements(g) > group_elements(best)) best = g;
    return best;
  }
  [[nodiscard]] constexpr std::span<const Dims> max_shape() const { return group(max_shape_index()); }
  // The largest element count each input takes over all groups (buffer sizing).
  [[nodiscard]] constexpr std::uint64_t max_elements(std::size_t input) const {
    std::uint64_t m = 0;
    for (std::size_t g = 0; g < self().num_shapes(); ++g) m = std::max(m, shape(g, input).elements());
    return m;
  }
  // The group whose shapes equal `shapes` (one per input), if there is one.
  [[nodiscard]] constexpr std::optional<std::size_t> find(std::span<const Dims> shapes) const noexcept {
    if (shapes.size() != self().num_inputs()) return std::nullopt;
    for (std::size_t g = 0; g < self().num_shapes(); ++g) {
      bool same = true;
      for (std::size_t i = 0; i < shapes.size(); ++i)
        same = same && self().storage()[g * shapes.size() + i] == shapes[i];
      if (same) return g;
    }
    return std::nullopt;
  }
  [[nodiscard]] constexpr bool contains(std::span<const Dims> shapes) const noexcept {
    return find(shapes).has_value();
  }

  // Writes group g into the attributes passed to rknn_set_input_shapes: index, n_dims, dims and
  // fmt (NHWC for 4-D inputs, UNDEFINED otherwise, as the runtime requires). The dims must
  // already be in the runtime's order (see nchw_to_nhwc).
  constexpr void fill_input_attrs(std::size_t g, std::span<rknn_tensor_attr> attrs) const {
    if (attrs.size() != self().num_inputs())
      fail("rknnxx::ShapeSet::fill_input_attrs", "{} attributes given for a set of {} inputs", attrs.size(),
           self().num_inputs());
    const auto shapes = group(g);
    for (std::size_t i = 0; i < attrs.size(); ++i) {
      attrs[i].index = static_cast<std::uint32_t>(i);
      shapes[i].to_abi(attrs[i].n_dims, attrs[i].dims);
      attrs[i].fmt = shapes[i].rank() == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
    }
  }

  template <class Other>
  [[nodiscard]] friend constexpr bool operator==(const ShapeSetBase& a, const ShapeSetBase<Other>& b) noexcept {
    const auto& x = a.self();
    const auto& y = static_cast<const Other&>(b);
    if (x.num_inputs() != y.num_inputs() || x.num_shapes() != y.num_shapes()) return false;
    const auto xs = x.storage();
    const auto ys = y.storage();
    for (std::size_t k = 0; k < xs.size(); ++k)
      if (!(xs[k] == ys[k])) return false;
    return true;
  }

protected:
  // Every group has one shape (rank >= 1) per input; the shapes of one input share a rank.
  static constexpr void validate(std::span<const Dims> all, std::size_t inputs, std::size_t shapes) {
    if (inputs == 0) fail("rknnxx::ShapeSet", "a shape set needs at least one input, given {}", inputs);
    if (shapes == 0) fail("rknnxx::ShapeSet", "a shape set needs at least one shape, given {}", shapes);
    if (shapes > max_shapes)
      fail("rknnxx::ShapeSet", "{} shapes exceed RKNN_MAX_DYNAMIC_SHAPE_NUM ({})", shapes, max_shapes);
    for (std::size_t g = 0; g < shapes; ++g) {
      std::size_t given = 0;
      while (given < inputs && !all[g * inputs + given].empty()) ++given;
      if (given != inputs)
        fail("rknnxx::ShapeSet", "shape counts differ: group {} gives {} input shapes, the set has {} inputs", g, given,
             inputs);
      for (std::size_t i = 0; i < inputs; ++i)
        if (all[g * inputs + i].rank() != all[i].rank())
          fail("rknnxx::ShapeSet", "inconsistent ranks: input {} has rank {} in group {} and rank {} in group 0", i,
               all[g * inputs + i].rank(), g, all[i].rank());
    }
  }
  // Reads one rknn_input_range per input, in input order.
  static std::vector<Dims> read_ranges(std::span<const rknn_input_range> ranges, std::size_t& shapes) {
    constexpr std::string_view who = "rknnxx::ShapeSet::from_ranges";
    if (ranges.empty()) fail(who, "no rknn_input_range given: a shape set needs at least one input ({})", 0);
    shapes = ranges[0].shape_number;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      const auto& r = ranges[i];
      if (r.index != i) fail(who, "range {} is for input index {}: pass them in input order", i, r.index);
      if (r.shape_number > max_shapes)
        fail(who, "input {} reports {} shapes, more than RKNN_MAX_DYNAMIC_SHAPE_NUM ({})", i, r.shape_number,
             max_shapes);
      if (r.shape_number != shapes)
        fail(who, "shape counts differ: input {} has {} shapes, input 0 has {}", i, r.shape_number, shapes);
      if (r.n_dims == 0 || r.n_dims > max_rank)
        fail(who, "input {} reports rank {}, outside 1..RKNN_MAX_DIMS ({})", i, r.n_dims, max_rank);
    }
    std::vector<Dims> all;
    all.reserve(ranges.size() * shapes);
    for (std::size_t g = 0; g < shapes; ++g)
      for (const auto& r : ranges) all.push_back(Dims(std::span<const std::uint32_t>(r.dyn_range[g], r.n_dims)));
    return all;
  }

private:
  constexpr const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace detail

// Static counts: a literal type, usable in constant expressions and as a template argument.
template <std::size_t Inputs, std::size_t Shapes> class ShapeSet
    : public detail::ShapeSetBase<ShapeSet<Inputs, Shapes>> {
  static_assert(Inputs >= 1, "a shape set needs at least one input");
  static_assert(Shapes >= 1, "a shape set needs at least one shape");
  static_assert(Shapes <= max_shapes, "a shape set holds at most RKNN_MAX_DYNAMIC_SHAPE_NUM (512) shapes");
  using base = detail::ShapeSetBase<ShapeSet<Inputs, Shapes>>;

public:
  // groups[s][i] is the s-th shape of input i (the order of the toolkit's dynamic_input).
  constexpr ShapeSet(const Dims (&groups)[Shapes][Inputs]) {
    for (std::size_t g = 0; g < Shapes; ++g)
      for (std::size_t i = 0; i < Inputs; ++i) shapes_[g * Inputs + i] = groups[g][i];
    base::validate(storage(), Inputs, Shapes);
  }
  // shapes[i][s] is the s-th shape of input i (the order of RKNN_QUERY_INPUT_DYNAMIC_RANGE).
  [[nodiscard]] static constexpr ShapeSet per_input(const Dims (&shapes)[Inputs][Shapes]) {
    ShapeSet set;
    for (std::size_t i = 0; i < Inputs; ++i) {
      std::size_t given = 0;
      while (given < Shapes && !shapes[i][given].empty()) ++given;
      if (given != Shapes)
        detail::fail("rknnxx::ShapeSet::per_input", "shape counts differ: input {} lists {} shapes, the set has {}", i,
                     given, Shapes);
      for (std::size_t g = 0; g < Shapes; ++g) set.shapes_[g * Inputs + i] = shapes[i][g];
    }
    base::validate(set.storage(), Inputs, Shapes);
    return set;
  }
  // From the per-input ranges of RKNN_QUERY_INPUT_DYNAMIC_RANGE; the counts must match.
  [[nodiscard]] static ShapeSet from_ranges(std::span<const rknn_input_range> ranges) {
    std::size_t shapes = 0;
    const auto all = base::read_ranges(ranges, shapes);
    if (ranges.size() != Inputs || shapes != Shapes)
      detail::fail("rknnxx::ShapeSet::from_ranges",
                   "expected {} inputs with {} shapes, the model has {} inputs with {} shapes", Inputs, Shapes,
                   ranges.size(), shapes);
    ShapeSet set;
    for (std::size_t k = 0; k < all.size(); ++k) set.shapes_[k] = all[k];
    base::validate(set.storage(), Inputs, Shapes);
    return set;
  }

  // The same set with f applied to every shape, e.g. set.transform(nchw_to_nhwc) to compare a
  // dynamic_input written in ONNX order with what RKNN_QUERY_INPUT_DYNAMIC_RANGE reports.
  template <class F> [[nodiscard]] constexpr ShapeSet transform(F f) const {
    ShapeSet set;
    for (std::size_t k = 0; k < shapes_.size(); ++k) set.shapes_[k] = f(shapes_[k]);
    base::validate(set.storage(), Inputs, Shapes);
    return set;
  }

  [[nodiscard]] static constexpr std::size_t num_inputs() noexcept { return Inputs; }
  [[nodiscard]] static constexpr std::size_t num_shapes() noexcept { return Shapes; }
  [[nodiscard]] constexpr std::span<const Dims> storage() const noexcept { return shapes_; }

  // Public only because a template argument's members must be: read through the accessors.
  std::array<Dims, Inputs * Shapes> shapes_{};

private:
  constexpr ShapeSet() = default;
};

template <std::size_t S, std::size_t I> ShapeSet(const Dims (&)[S][I]) -> ShapeSet<I, S>;

// Dynamic counts, read at run time.
template <> class ShapeSet<dynamic_count, dynamic_count>
    : public detail::ShapeSetBase<ShapeSet<dynamic_count, dynamic_count>> {
  using base = detail::ShapeSetBase<ShapeSet<dynamic_count, dynamic_count>>;

public:
  // groups[s][i] is the s-th shape of input i.
  explicit ShapeSet(const std::vector<std::vector<Dims>>& groups);
  template <std::size_t I, std::size_t S>
  ShapeSet(const ShapeSet<I, S>& fixed)  // NOLINT: a static set widens implicitly
      : inputs_(I), shapes_count_(S), shapes_(fixed.storage().begin(), fixed.storage().end()) {}

  [[nodiscard]] static ShapeSet from_ranges(std::span<const rknn_input_range> ranges);

  template <class F> [[nodiscard]] ShapeSet transform(F f) const {
    ShapeSet set;
    set.inputs_ = inputs_;
    set.shapes_count_ = shapes_count_;
    for (const Dims& d : shapes_) set.shapes_.push_back(f(d));
    base::validate(set.storage(), inputs_, shapes_count_);
    return set;
  }

  [[nodiscard]] std::size_t num_inputs() const noexcept { return inputs_; }
  [[nodiscard]] std::size_t num_shapes() const noexcept { return shapes_count_; }
  [[nodiscard]] std::span<const Dims> storage() const noexcept { return shapes_; }

private:
  ShapeSet() = default;
  std::size_t inputs_ = 0;
  std::size_t shapes_count_ = 0;
  std::vector<Dims> shapes_;
};

ShapeSet(const std::vector<std::vector<Dims>>&) -> ShapeSet<>;

}  // namespace rknnxx

#ifndef RKNNXX_SEPARATE_COMPILATION
#include <rknnxx/core/impl/shape_set.hpp>
#endif
