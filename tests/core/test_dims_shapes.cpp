#include <doctest/doctest.h>
#include <rknnxx/core/shape_set.hpp>

#include <cstring>
#include <vector>

using namespace rknnxx;

TEST_CASE("dims: rank up to 16, extents at least 1, 64-bit element count") {
  constexpr Dims d{1, 3, 224, 224};
  static_assert(d.rank() == 4 && d[2] == 224 && d.elements() == 150528);
  static_assert(Dims{}.elements() == 1 && Dims{}.empty());
  constexpr Dims max{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2};
  static_assert(max.rank() == 16);
  CHECK(Dims{65536, 65536, 2}.elements() == 8589934592ull);  // no silent 32-bit wrap
  const Dims huge{0xffffffffu, 0xffffffffu, 0xffffffffu};
  CHECK_THROWS_WITH_AS((void)huge.elements(),
                       doctest::Contains("overflows 64 bits (18446744065119617025 x 4294967295)"), Error);
  CHECK_THROWS_WITH_AS((Dims{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}),
                       doctest::Contains("rank 17 exceeds RKNN_MAX_DIMS (16)"), Error);
  CHECK_THROWS_WITH_AS((Dims{1, 0, 3}), doctest::Contains("dims[1] is 0"), Error);
  CHECK_THROWS_WITH_AS((void)d.at(4), doctest::Contains("index 4 is out of range for rank 4"), Error);

  rknn_tensor_attr attr{};
  d.to_abi(attr.n_dims, attr.dims);
  CHECK(attr.n_dims == 4);
  CHECK(attr.dims[3] == 224);
  CHECK(attr.dims[4] == 0);
  CHECK(Dims::from_abi(attr.n_dims, attr.dims) == d);
  attr.n_dims = 17;
  CHECK_THROWS_WITH_AS((void)Dims::from_abi(attr.n_dims, attr.dims), doctest::Contains("rank 17"), Error);
  attr.n_dims = 5;
  CHECK_THROWS_WITH_AS((void)Dims::from_abi(attr.n_dims, attr.dims), doctest::Contains("dims[4] is 0"), Error);
}

// docs/c-interface.md#dynamic-shapes: two inputs A and B; A takes [1,224] or [1,112], B takes [1,40] or [1,80]; the i-th
// shapes go together.
constexpr ShapeSet seed{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}, Dims{1, 80}}}};

// A class template taking the shape set itself (deduced from the placeholder) as its argument.
template <ShapeSet Shapes> struct TypedModel {
  static constexpr auto shapes = Shapes;
};

template <auto Shapes> struct Model {
  static constexpr std::size_t inputs = Shapes.num_inputs();
  static constexpr std::size_t largest = Shapes.max_shape_index();
};

TEST_CASE("shape set: the documented dynamic_input and its MaxShape") {
  static_assert(std::is_same_v<decltype(seed), const ShapeSet<2, 2>>);
  static_assert(seed.group_elements(0) == 264);  // 1x224 + 1x40, printed "1224+140=264" in the guide
  static_assert(seed.group_elements(1) == 192);  // 1x112 + 1x80
  static_assert(seed.max_shape_index() == 0);
  static_assert(seed.max_shape()[1] == Dims{1, 40});
  static_assert(Model<seed>::inputs == 2 && Model<seed>::largest == 0);
  static_assert(std::is_same_v<decltype(TypedModel<seed>::shapes), const ShapeSet<2, 2>>);
  static_assert(TypedModel<seed>::shapes == seed);
  static_assert(!std::is_same_v<
                TypedModel<seed>,
                TypedModel<ShapeSet<2, 2>::per_input({{Dims{1, 224}, Dims{1, 112}}, {Dims{1, 40}, Dims{1, 81}}})>>);
  static_assert(seed.find(std::array{Dims{1, 112}, Dims{1, 80}}) == 1u);
  static_assert(!seed.contains(std::array{Dims{1, 224}, Dims{1, 80}}));  // never mixed across groups
  static_assert(seed.max_elements(1) == 80);                             // B's largest buffer comes from group 1
  // Three image shapes of one input, N = 3 batches in the last one.
  constexpr ShapeSet images{{{Dims{1, 3, 224, 224}}, {Dims{1, 3, 192, 192}}, {Dims{3, 3, 160, 160}}}};
  static_assert(images.num_shapes() == 3 && images.max_shape_index() == 2);  // 3x3x160x160 > 1x3x224x224
  CHECK(images.shape(1, 0) == Dims{1, 3, 192, 192});
  CHECK_THROWS_WITH_AS((void)images.shape(3, 0), doctest::Contains("shape (3, 0) is outside 3 groups of 1 inputs"),
                       Error);
}

TEST_CASE("shape set: per-input order equals group order") {
  constexpr auto per_input = ShapeSet<2, 2>::per_input({{Dims{1, 224}, Dims{1, 112}}, {Dims{1, 40}, Dims{1, 80}}});
  static_assert(per_input == seed);
  CHECK_THROWS_WITH_AS(((void)ShapeSet<2, 2>::per_input({{Dims{1, 224}, Dims{1, 112}}, {Dims{1, 40}}})),
                       doctest::Contains("shape counts differ: input 1 lists 1 shapes, the set has 2"), Error);
}

TEST_CASE("shape set: validation at run time names the bad value") {
  CHECK_THROWS_WITH_AS((ShapeSet<2, 2>{{{Dims{1, 224}, Dims{1, 40}}, {Dims{1, 112}}}}),
                       doctest::Contains("group 1 gives 1 input shapes, the set has 2 inputs"), Error);
  CHECK_THROWS_WITH_AS((ShapeSet<1, 2>{{{Dims{1, 224}}, {Dims{1, 3, 112}}}}),
                       doctest::Contains("input 0 has rank 3 in group 1 and rank 2 in group 0"), Error);
  using Groups = std::vector<std::vector<Dims>>;
  CHECK_THROWS_WITH_AS(ShapeSet(Groups{{Dims{1}, Dims{2}}, {Dims{1}}}),
                       doctest::Contains("group 1 gives 1 input shapes, group 0 gives 2"), Error);
  CHECK_THROWS_WITH_AS(ShapeSet(Groups{}), doctest::Contains("at least one input"), Error);
  CHECK_THROWS_WITH_AS(ShapeSet(Groups(513, {Dims{1}})),
                       doctest::Contains("513 shapes exceed RKNN_MAX_DYNAMIC_SHAPE_NUM (512)"), Error);
  CHECK(ShapeSet(Groups(512, {Dims{1}})).num_shapes() == 512);
  // Two inputs of 2^63 elements each: their sum wraps to 0, which would make group 0 the smallest.
  const ShapeSet<> huge(
      Groups{{Dims{0x80000000u, 0x80000000u, 2}, Dims{0x80000000u, 0x80000000u, 2}}, {Dims{1, 1, 1}, Dims{1, 1, 1}}});
  CHECK_THROWS_WITH_AS((void)huge.max_shape_index(), doctest::Contains("the input sizes of group 0 overflow 64 bits"),
                       Error);
}

static rknn_input_range make_range(std::uint32_t index, const char* name, std::vector<Dims> shapes) {
  rknn_input_range r{};
  r.index = index;
  std::strcpy(r.name, name);
  r.fmt = RKNN_TENSOR_UNDEFINED;
  r.shape_number = static_cast<std::uint32_t>(shapes.size());
  r.n_dims = static_cast<std::uint32_t>(shapes[0].rank());
  for (std::size_t s = 0; s < shapes.size(); ++s)
    for (std::size_t k = 0; k < shapes[s].rank(); ++k) r.dyn_range[s][k] = shapes[s][k];
  return r;
}

TEST_CASE("shape set: built at run time from RKNN_QUERY_INPUT_DYNAMIC_RANGE") {
  std::vector<rknn_input_range> ranges{make_range(0, "A", {Dims{1, 224}, Dims{1, 112}}),
                                       make_range(1, "B", {Dims{1, 40}, Dims{1, 80}})};
  const auto set = ShapeSet<>::from_ranges(ranges);
  CHECK(set.num_inputs() == 2);
  CHECK(set.num_shapes() == 2);
  CHECK(set == seed);
  CHECK(set.max_shape_index() == 0);
  const ShapeSet<> widened = seed;
  CHECK(widened == set);
  CHECK(ShapeSet<2, 2>::from_ranges(ranges) == seed);
  CHECK_THROWS_WITH_AS(((void)ShapeSet<2, 3>::from_ranges(ranges)),
                       doctest::Contains("expected 2 inputs with 3 shapes, the model has 2 inputs with 2 shapes"),
                       Error);

  ranges[1].shape_number = 3;
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges), doctest::Contains("input 1 has 3 shapes, input 0 has 2"),
                       Error);
  ranges[1].shape_number = 600;
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges), doctest::Contains("input 1 reports 600 shapes"), Error);
  ranges[1].shape_number = 2;
  ranges[1].n_dims = 17;
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges),
                       doctest::Contains("input 1 reports rank 17, outside 1..RKNN_MAX_DIMS (16)"), Error);
  ranges[1].n_dims = 0;  // refused as a rank, not reported as a missing shape
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges), doctest::Contains("input 1 reports rank 0"), Error);
  ranges[1].n_dims = 2;
  ranges[1].dyn_range[1][1] = 0;
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges), doctest::Contains("dims[1] is 0"), Error);
  ranges[1].dyn_range[1][1] = 80;
  ranges[1].index = 5;
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges(ranges), doctest::Contains("range 1 is for input index 5"), Error);
  CHECK_THROWS_WITH_AS((void)ShapeSet<>::from_ranges({}), doctest::Contains("no rknn_input_range given"), Error);
}

TEST_CASE("shape set: framework order to the runtime's order, and the attributes for rknn_set_input_shapes") {
  static_assert(nchw_to_nhwc(Dims{1, 3, 224, 192}) == Dims{1, 224, 192, 3});
  static_assert(nhwc_to_nchw(nchw_to_nhwc(Dims{2, 3, 5, 7})) == Dims{2, 3, 5, 7});
  static_assert(nchw_to_nhwc(Dims{1, 224}) == Dims{1, 224});  // not 4-D: unchanged
  // The documented dynamic_input in ONNX order and the range the runtime reports for it.
  constexpr ShapeSet onnx{{{Dims{1, 3, 224, 224}}, {Dims{1, 3, 112, 224}}}};
  constexpr auto runtime_order = onnx.transform(nchw_to_nhwc);
  static_assert(runtime_order.shape(1, 0) == Dims{1, 112, 224, 3});
  const auto set = ShapeSet<>::from_ranges(std::vector{[] {
    rknn_input_range r{};
    std::strcpy(r.name, "data");
    r.shape_number = 2;
    r.n_dims = 4;
    const std::uint32_t shapes[2][4] = {{1, 224, 224, 3}, {1, 112, 224, 3}};
    for (int s = 0; s < 2; ++s)
      for (int k = 0; k < 4; ++k) r.dyn_range[s][k] = shapes[s][k];
    return r;
  }()});
  CHECK(set == runtime_order);
  CHECK(set.transform(nhwc_to_nchw) == onnx);

  std::vector<rknn_tensor_attr> attrs(2);
  seed.fill_input_attrs(1, attrs);
  CHECK(attrs[1].index == 1);
  CHECK(attrs[1].n_dims == 2);
  CHECK(attrs[1].dims[1] == 80);
  CHECK(attrs[1].fmt == RKNN_TENSOR_UNDEFINED);
  std::vector<rknn_tensor_attr> one(1);
  set.fill_input_attrs(0, one);
  CHECK(one[0].fmt == RKNN_TENSOR_NHWC);
  CHECK(one[0].dims[3] == 3);
  CHECK_THROWS_WITH_AS(seed.fill_input_attrs(0, one), doctest::Contains("1 attributes given for a set of 2 inputs"),
                       Error);
  CHECK_THROWS_WITH_AS(seed.fill_input_attrs(2, attrs), doctest::Contains("group 2 is outside the set's 2 groups"),
                       Error);
}
