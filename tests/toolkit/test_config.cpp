// The toolkit's config() rules (RKNN SDK V2.5.0: config parameters and dynamic shape), one case per rule.
#include <doctest/doctest.h>

#include <rknnxx/toolkit/config.hpp>

#include <string>
#include <vector>

using namespace rknnxx::toolkit;

namespace {

Config minimal(Platform p = Platform::rk3588) {
  Config c;
  c.target_platform = p;
  return c;
}

// The one problem about `key`, or a failed check listing what was found instead.
std::string problem(const std::vector<ConfigProblem>& problems, std::string_view key) {
  std::string all;
  for (const ConfigProblem& p : problems) {
    if (p.key == key) return p.message;
    all += p.key + ": " + p.message + "\n";
  }
  FAIL_CHECK("no problem about '" << std::string(key) << "'; found:\n" << all);
  return {};
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

ModelInput input(std::string name, Shape shape) { return {std::move(name), std::move(shape), -1}; }

}  // namespace

TEST_CASE("defaults are the toolkit's") {
  Config c;
  CHECK_FALSE(c.mean_values);
  CHECK_FALSE(c.std_values);
  CHECK(c.quant_img_RGB2BGR.empty());
  CHECK_FALSE(c.rgb2bgr_for(0));
  CHECK(c.effective_quantized_dtype() == QuantizedDtype::w8a8);
  CHECK(c.effective_quantized_algorithm() == QuantizedAlgorithm::normal);
  CHECK(c.effective_quantized_method() == QuantizedMethod::channel());
  CHECK(c.float_dtype == FloatDtype::float16);
  CHECK(c.optimization_level == 3);
  CHECK_FALSE(c.target_platform);
  CHECK_FALSE(c.custom_string);
  CHECK_FALSE(c.remove_weight);
  CHECK_FALSE(c.compress_weight);
  CHECK_FALSE(c.single_core_mode);
  CHECK_FALSE(c.model_pruning);
  CHECK(c.op_target.empty());
  CHECK_FALSE(c.dynamic_input);
  CHECK_FALSE(c.quantize_weight);
  CHECK_FALSE(c.remove_reshape);
  CHECK_FALSE(c.sparse_infer);
  CHECK_FALSE(c.enable_flash_attention);
  CHECK(c.auto_hybrid_cos_thresh == 0.98);
  CHECK_FALSE(c.auto_hybrid_euc_thresh);
  CHECK(c.memory_plan_strategy == MemoryPlanStrategy::BestFit);
  CHECK(c.compute_order == ComputeOrder::WidthFirst);
  CHECK(Config::keys.size() == 24);
}

TEST_CASE("target_platform is required and takes exactly the documented chips") {
  Config c;
  std::string m = problem(c.check(), "target_platform");
  CHECK(contains(m, "config: target_platform is required"));
  CHECK(contains(m, "rv1103, rv1103b, rv1106, rv1106b, rv1126b, rk2118, rk3562, rk3566, rk3568, rk3576, rk3588"));
  CHECK_THROWS_AS(c.validate(), ConfigError);
  try {
    c.validate();
  } catch (const ConfigError& e) {
    CHECK(e.key() == "target_platform");
  }
  // One public error type: a config error is an rknnxx::Error with the key, whose what() is the message alone.
  try {
    c.validate();
    FAIL("expected an rknnxx::Error");
  } catch (const rknnxx::Error& e) {
    CHECK(e.errc() == rknnxx::Errc::param_invalid);
    CHECK(e.call() == "config");
    CHECK(std::string_view(e.what()).starts_with("config: target_platform is required"));
    CHECK(std::string_view(e.what()) == e.message());
  }

  for (std::string_view name : {"rv1103", "rv1103b", "rv1106", "rv1106b", "rv1126b", "rk2118", "rk3562", "rk3566",
                                "rk3568", "rk3576", "rk3588"}) {
    auto p = parse_name<Platform>(name);
    REQUIRE(p);
    CHECK(spelling(*p) == name);
    CHECK(minimal(*p).check().empty());
  }
  std::size_t i = 0;
  for (Platform p : all_values<Platform>())
    CHECK(spelling(p) ==
          std::array{"rv1103", "rv1103b", "rv1106", "rv1106b", "rv1126b", "rk2118", "rk3562", "rk3566", "rk3568",
                     "rk3576", "rk3588"}[i++]);
  CHECK(i == 11);
  CHECK(parse_name<Platform>("RK3588") == Platform::rk3588);
  CHECK_FALSE(parse_name<Platform>("rk3588s"));
  CHECK_FALSE(parse_name<Platform>("rk3399pro"));
  CHECK_FALSE(parse_name<Platform>(""));
}

TEST_CASE("mean_values and std_values: one non-empty list of finite values per input; stds are not 0") {
  Config c = minimal();
  c.mean_values = {{103.94, 116.78, 123.68}};
  c.std_values = {{58.82, 58.82, 58.82}};
  CHECK(c.check().empty());

  c.mean_values = std::vector<std::vector<double>>{};
  CHECK(contains(problem(c.check(), "mean_values"), "config: mean_values is an empty list"));
  c.mean_values = std::vector<std::vector<double>>(1);
  CHECK(contains(problem(c.check(), "mean_values"), "config: mean_values[0] is empty"));
  c.mean_values = {{1.0, std::nan(""), 3.0}};
  CHECK(contains(problem(c.check(), "mean_values"), "config: mean_values[0][1] is nan; values must be finite"));
  c.mean_values = {{1, 2, 3}};
  c.std_values = {{1, 0, 1}};
  CHECK(contains(problem(c.check(), "std_values"), "config: std_values[0][1] is 0"));
  c.std_values = {{1, 1}};
  CHECK(problem(c.check(), "std_values") ==
        "config: std_values[0] has 2 values but mean_values[0] has 3; both give one value per channel");
  c.std_values = {{1, 1, 1}, {2}};
  CHECK(problem(c.check(), "std_values") ==
        "config: std_values has 2 lists but mean_values has 1; both give one list per input");
}

TEST_CASE("per-input lists against the model: one list per input, one value per channel") {
  const std::vector<ModelInput> inputs{input("image", {1, 3, 224, 224}), input("mask", {1, 1, 224, 224})};
  Config c = minimal();
  c.mean_values = {{0, 0, 0}, {0}};
  c.std_values = {{255, 255, 255}, {1}};
  CHECK(c.check_against(inputs).empty());
  CHECK_NOTHROW(c.validate_against(inputs));

  c.std_values = {{255, 255, 255}, {1, 1, 1}};
  c.mean_values.reset();
  CHECK(problem(c.check_against(inputs), "std_values") ==
        "config: std_values[1] has 3 values, input 1 ('mask') has 1 channel");
  c.std_values = {{255, 255, 255}};
  CHECK(problem(c.check_against(inputs), "std_values") ==
        "config: std_values has 1 list, the model has 2 inputs ('image', 'mask')");

  // The example of the brief: a 3-channel second input given one std value.
  const std::vector<ModelInput> two_rgb{input("a", {1, 3, 8, 8}), input("b", {1, 3, 8, 8})};
  c.std_values = {{1, 1, 1}, {1}};
  try {
    c.validate_against(two_rgb);
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "std_values");
    CHECK(std::string(e.what()) == "config: std_values[1] has 1 value, input 1 ('b') has 3 channels");
  }

  // Channels given explicitly win over the axis-1 convention (e.g. an NHWC model).
  const std::vector<ModelInput> nhwc{{"x", {1, 224, 224, 3}, 3}};
  c.std_values = {{1, 1, 1}};
  CHECK(c.check_against(nhwc).empty());
  // Rank 1: axis 0; rank 2: axis 1.
  c.std_values = {{1, 1, 1, 1}};
  CHECK(c.check_against(std::vector{input("v", {4})}).empty());
  CHECK(c.check_against(std::vector{input("v", {2, 4})}).empty());
}

TEST_CASE("per-input lists agree with each other on the number of inputs") {
  Config c = minimal();
  c.mean_values = {{0, 0, 0}};
  c.quant_img_RGB2BGR = {true, false};
  CHECK(problem(c.check(), "quant_img_RGB2BGR") ==
        "config: quant_img_RGB2BGR has 2 values but mean_values has 1 list; each gives one entry per model input");
  c.quant_img_RGB2BGR.clear();
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}, {1, 40}}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "config: dynamic_input has 2 shapes per group but mean_values"));
}

TEST_CASE("quant_img_RGB2BGR: one value for all inputs or one per input; True needs 3 channels") {
  const std::vector<ModelInput> inputs{input("rgb", {1, 3, 224, 224}), input("gray", {1, 1, 224, 224})};
  Config c = minimal();
  c.quant_img_RGB2BGR = {true, false};
  CHECK(c.check_against(inputs).empty());
  CHECK(c.rgb2bgr_for(0));
  CHECK_FALSE(c.rgb2bgr_for(1));
  c.quant_img_RGB2BGR = {true};
  CHECK(c.rgb2bgr_for(1));
  CHECK(problem(c.check_against(inputs), "quant_img_RGB2BGR") ==
        "config: quant_img_RGB2BGR is True but input 1 ('gray') has 1 channel; RGB2BGR swaps 3 channels");
  c.quant_img_RGB2BGR = {false, false, true};
  CHECK(problem(c.check_against(inputs), "quant_img_RGB2BGR") ==
        "config: quant_img_RGB2BGR has 3 values, the model has 2 inputs ('rgb', 'gray')");
}

TEST_CASE("quantized_dtype is limited by platform as documented") {
  struct Case {
    QuantizedDtype dtype;
    std::vector<Platform> allowed;
  };
  const std::vector<Case> cases{
      {QuantizedDtype::w4a16, {Platform::rk3576, Platform::rv1126b}},
      {QuantizedDtype::w8a16, {Platform::rk3562}},
      {QuantizedDtype::w16a16i_dfp, {Platform::rv1103, Platform::rv1106}},
  };
  for (const Case& k : cases)
    for (Platform p : all_values<Platform>()) {
      const std::string_view name = spelling(p);
      Config c = minimal(p);
      c.quantized_dtype = k.dtype;
      const bool allowed = std::find(k.allowed.begin(), k.allowed.end(), p) != k.allowed.end();
      CAPTURE(name);
      CAPTURE(spelling(k.dtype));
      if (allowed) {
        CHECK(c.check().empty());
      } else {
        CHECK(contains(problem(c.check(), "quantized_dtype"),
                       fmt::format("config: quantized_dtype '{}' is supported only on", spelling(k.dtype))));
      }
    }
  Config c = minimal(Platform::rk3588);
  c.quantized_dtype = QuantizedDtype::w4a16;
  CHECK(problem(c.check(), "quantized_dtype") ==
        "config: quantized_dtype 'w4a16' is supported only on rk3576 and rv1126b, not on rk3588");
  // w8a8 everywhere but RK2118; the default (unset) is not held against RK2118.
  for (Platform p : all_values<Platform>()) {
    const std::string_view name = spelling(p);
    Config w8a8 = minimal(p);
    w8a8.quantized_dtype = QuantizedDtype::w8a8;
    CAPTURE(name);
    CHECK(w8a8.check().empty() == (p != Platform::rk2118));
  }
  c = minimal(Platform::rk2118);
  CHECK(c.check().empty());
  c.quantized_dtype = QuantizedDtype::w8a8;
  CHECK(problem(c.check(), "quantized_dtype") == "config: quantized_dtype 'w8a8' is not supported on rk2118");
}

TEST_CASE("quantized_algorithm: gdq only with w4a16 or w8a16") {
  for (auto a : {QuantizedAlgorithm::normal, QuantizedAlgorithm::mmse, QuantizedAlgorithm::kl_divergence}) {
    Config c = minimal();
    c.quantized_algorithm = a;
    CHECK(c.check().empty());
  }
  Config c = minimal(Platform::rk3576);
  c.quantized_algorithm = QuantizedAlgorithm::gdq;
  CHECK(problem(c.check(), "quantized_algorithm") ==
        "config: quantized_algorithm 'gdq' is valid only with quantized_dtype w4a16 or w8a16, not w8a8");
  c.quantized_dtype = QuantizedDtype::w4a16;
  CHECK(c.check().empty());
  c = minimal(Platform::rk3562);
  c.quantized_algorithm = QuantizedAlgorithm::gdq;
  c.quantized_dtype = QuantizedDtype::w8a16;
  CHECK(c.check().empty());
  CHECK(parse_name<QuantizedAlgorithm>("kl_divergence") == QuantizedAlgorithm::kl_divergence);
  CHECK_FALSE(parse_name<QuantizedAlgorithm>("KL"));
}

TEST_CASE("quantized_method: layer, channel, group{SIZE} with SIZE a multiple of 32 in 32..256, w4a16 only") {
  CHECK(QuantizedMethod::parse("layer") == QuantizedMethod::layer());
  CHECK(QuantizedMethod::parse("channel") == QuantizedMethod::channel());
  CHECK(QuantizedMethod::parse("group128") == QuantizedMethod::group(128));
  CHECK_FALSE(QuantizedMethod::parse("group"));
  CHECK_FALSE(QuantizedMethod::parse("group-32"));
  CHECK_FALSE(QuantizedMethod::parse("groupx"));
  CHECK_FALSE(QuantizedMethod::parse("group12345678"));
  CHECK_FALSE(QuantizedMethod::parse("Channel"));
  CHECK(QuantizedMethod::group(64).name() == "group64");

  Config c = minimal(Platform::rk3576);
  c.quantized_dtype = QuantizedDtype::w4a16;
  for (std::uint32_t size = 0; size <= 300; ++size) {
    c.quantized_method = QuantizedMethod::group(size);
    const bool valid = size >= 32 && size <= 256 && size % 32 == 0;
    CAPTURE(size);
    CHECK(c.check().empty() == valid);
  }
  c.quantized_method = QuantizedMethod::group(48);
  CHECK(contains(problem(c.check(), "quantized_method"),
                 "config: quantized_method 'group48': SIZE must be a multiple of 32 from 32 to 256"));
  c = minimal(Platform::rk3576);
  c.quantized_method = QuantizedMethod::group(32);
  CHECK(problem(c.check(), "quantized_method") ==
        "config: quantized_method 'group32' is valid only with quantized_dtype w4a16, not w8a8");
  c.quantized_method = QuantizedMethod::layer();
  CHECK(c.check().empty());
}

TEST_CASE("float_dtype, memory_plan_strategy, compute_order and op_target names") {
  CHECK(parse_name<FloatDtype>("float16") == FloatDtype::float16);
  CHECK_FALSE(parse_name<FloatDtype>("float32"));
  for (std::string_view s : {"BestFit", "GreedyBySize", "GreedyByLifetime", "SlowPeakGrowth"})
    CHECK(spelling(*parse_name<MemoryPlanStrategy>(s)) == s);
  CHECK_FALSE(parse_name<MemoryPlanStrategy>("bestfit"));
  CHECK(parse_name<ComputeOrder>("DepthFirst") == ComputeOrder::DepthFirst);
  CHECK(parse_name<OpTarget>("auto") == OpTarget::automatic);
  CHECK(valid_names<OpTarget>() == "cpu, npu, gpu, auto");
  Config c = minimal();
  c.op_target = {{"Add", OpTarget::cpu}, {"conv1_out", OpTarget::npu}};
  CHECK(c.check().empty());
  c.op_target[""] = OpTarget::gpu;
  CHECK(contains(problem(c.check(), "op_target"), "empty name"));
}

TEST_CASE("optimization_level is 0..3") {
  Config c = minimal();
  for (int level = -2; level <= 5; ++level) {
    c.optimization_level = level;
    CHECK(c.check().empty() == (level >= 0 && level <= 3));
  }
  c.optimization_level = 4;
  CHECK(problem(c.check(), "optimization_level") == "config: optimization_level is 4; expected 0, 1, 2 or 3");
}

TEST_CASE("custom_string fits rknn_custom_string (1024 bytes with the NUL)") {
  Config c = minimal();
  c.custom_string = std::string(1023, 'x');
  CHECK(c.check().empty());
  c.custom_string = std::string(1024, 'x');
  CHECK(problem(c.check(), "custom_string") ==
        "config: custom_string is 1024 bytes; the runtime's rknn_custom_string holds at most 1023 bytes and the "
        "terminating NUL");
  c.custom_string = std::string("ab\0cd", 5);
  CHECK(contains(problem(c.check(), "custom_string"), "NUL byte at offset 2"));
  c.custom_string = "";
  CHECK(c.check().empty());
}

TEST_CASE("single_core_mode only on RK3588/RK3576, sparse_infer only on RK3576/RV1126B") {
  for (Platform p : all_values<Platform>()) {
    const std::string_view name = spelling(p);
    CAPTURE(name);
    Config c = minimal(p);
    c.single_core_mode = true;
    CHECK(c.check().empty() == (p == Platform::rk3588 || p == Platform::rk3576));
    c = minimal(p);
    c.sparse_infer = true;
    CHECK(c.check().empty() == (p == Platform::rk3576 || p == Platform::rv1126b));
  }
  Config c = minimal(Platform::rk3566);
  c.single_core_mode = true;
  CHECK(problem(c.check(), "single_core_mode") ==
        "config: single_core_mode is valid only on rk3588 and rk3576, not on rk3566");
  c = minimal(Platform::rk3588);
  c.sparse_infer = true;
  CHECK(problem(c.check(), "sparse_infer") ==
        "config: sparse_infer is valid only on rk3576 and rv1126b, not on rk3588");
}

TEST_CASE("hybrid quantization thresholds") {
  Config c = minimal();
  c.auto_hybrid_cos_thresh = 1.5;
  CHECK(contains(problem(c.check(), "auto_hybrid_cos_thresh"), "is 1.5"));
  c.auto_hybrid_cos_thresh = 0.99;
  c.auto_hybrid_euc_thresh = -1;
  CHECK(contains(problem(c.check(), "auto_hybrid_euc_thresh"), "is -1"));
  c.auto_hybrid_euc_thresh = 0.5;
  CHECK(c.check().empty());
}

TEST_CASE("dynamic_input: groups of one shape per input, same count and ranks, positive dims, at most 512") {
  Config c = minimal();
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 3, 192, 192}}, {{1, 3, 160, 160}}};
  CHECK(c.check().empty());

  c.dynamic_input = DynamicInput{};
  CHECK(contains(problem(c.check(), "dynamic_input"), "config: dynamic_input is an empty list"));
  c.dynamic_input = DynamicInput{{}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "config: dynamic_input[0] is empty"));
  c.dynamic_input = DynamicInput{{{1, 224}, {1, 40}}, {{1, 112}}};
  CHECK(problem(c.check(), "dynamic_input") ==
        "config: dynamic_input[1] has 1 shape, dynamic_input[0] has 2; every group gives one shape per model input");
  c.dynamic_input = DynamicInput{{{1, 224}, {1, 40}}, {{1, 112}, {1, 80, 1}}};
  CHECK(
      problem(c.check(), "dynamic_input") ==
      "config: dynamic_input[1][1] is [1, 80, 1] (rank 3), dynamic_input[0][1] is [1, 40] (rank 2); an input keeps its "
      "rank in every group");
  c.dynamic_input = DynamicInput{{{1, 3, 0, 224}}};
  CHECK(problem(c.check(), "dynamic_input") ==
        "config: dynamic_input[0][0] is [1, 3, 0, 224]: dimension 2 is 0; dimensions must be positive and fit 32 bits");
  c.dynamic_input = DynamicInput{{{1, -1}}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "dimension 1 is -1"));
  c.dynamic_input = DynamicInput{{{1, 4294967296}}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "dimension 1 is 4294967296"));
  c.dynamic_input = DynamicInput{{Shape{}}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "has rank 0; expected 1 to 16"));
  c.dynamic_input = DynamicInput{{Shape(17, 1)}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "has rank 17; expected 1 to 16"));
  c.dynamic_input = DynamicInput{{Shape(16, 4294967295)}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "more than 2^64 elements"));

  DynamicInput many;
  for (int g = 0; g < 512; ++g) many.push_back({{1, g + 1}});
  c.dynamic_input = many;
  CHECK(c.check().empty());
  many.push_back({{1, 513}});
  c.dynamic_input = many;
  CHECK(problem(c.check(), "dynamic_input") ==
        "config: dynamic_input has 513 groups; the runtime supports at most 512 (RKNN_MAX_DYNAMIC_SHAPE_NUM)");
}

TEST_CASE("dynamic_input is supported on RK3562/RK3566/RK3568/RK3576/RK3588/RV1126B only") {
  for (Platform p : all_values<Platform>()) {
    const std::string_view name = spelling(p);
    CAPTURE(name);
    Config c = minimal(p);
    c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}};
    const bool supported = p == Platform::rk3562 || p == Platform::rk3566 || p == Platform::rk3568 ||
        p == Platform::rk3576 || p == Platform::rk3588 || p == Platform::rv1126b;
    CHECK(c.check().empty() == supported);
  }
  Config c = minimal(Platform::rv1106);
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}};
  CHECK(contains(problem(c.check(), "dynamic_input"), "config: dynamic_input is not supported on rv1106"));
}

TEST_CASE("MaxShape is the group with the largest sum of input element counts (docs/c-interface.md's example)") {
  // A: [1,224] and [1,112]; B: [1,40] and [1,80]. Group 0 sums 1x224 + 1x40 = 264 (the guide's
  // "1224+140=264"), group 1 1x112 + 1x80 = 192: MaxShape is dynamic_input[0] = [[1,224],[1,40]].
  const DynamicInput seed{{{1, 224}, {1, 40}}, {{1, 112}, {1, 80}}};
  CHECK(max_shape_index(seed) == 0);
  Config c = minimal();
  c.dynamic_input = seed;
  CHECK(c.max_shape_group() == 0);
  CHECK(element_count({1, 224}) == 224);

  // Not the largest single input, not the first: the largest sum.
  CHECK(max_shape_index({{{1, 100}, {1, 10}}, {{1, 60}, {1, 60}}, {{1, 90}, {1, 1}}}) == 1);
  CHECK(max_shape_index({{{1, 3, 160, 160}}, {{1, 3, 224, 224}}, {{1, 3, 192, 192}}}) == 1);
  // A tie keeps the first group.
  CHECK(max_shape_index({{{2, 3}}, {{3, 2}}, {{6}}}) == 0);
  CHECK_FALSE(max_shape_index({}));
  CHECK_FALSE(minimal().max_shape_group());
}

TEST_CASE("dynamic_input against the model: shape count, ranks, fixed axes, and dynamic inputs need it") {
  const std::vector<ModelInput> inputs{input("data", {1, 3, -1, -1})};
  Config c = minimal();
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 3, 192, 192}}};
  CHECK(c.check_against(inputs).empty());

  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 4, 192, 192}}};
  CHECK(
      problem(c.check_against(inputs), "dynamic_input") ==
      "config: dynamic_input[1][0] is [1, 4, 192, 192], input 0 ('data') is [1, 3, -1, -1] with 3 at axis 1; only its "
      "dynamic axes may change");
  c.dynamic_input = DynamicInput{{{1, 3, 224}}};
  CHECK(problem(c.check_against(inputs), "dynamic_input") ==
        "config: dynamic_input[0][0] is [1, 3, 224] (rank 3), input 0 ('data') is [1, 3, -1, -1] (rank 4)");
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}, {1, 10}}};
  CHECK(problem(c.check_against(inputs), "dynamic_input") ==
        "config: dynamic_input[0] has 2 shapes, the model has 1 input ('data')");

  // A static model may be expanded to other shapes (SDK guide 4.1.3.3).
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 3, 160, 160}}};
  CHECK(c.check_against(std::vector{input("data", {1, 3, 224, 224})}).empty());

  c.dynamic_input.reset();
  CHECK(problem(c.check_against(inputs), "dynamic_input") ==
        "config: input 0 ('data') has dynamic dimensions [1, 3, -1, -1]; set dynamic_input to the shapes to support");
}

TEST_CASE("channels of a dynamic channel axis come from dynamic_input") {
  const std::vector<ModelInput> inputs{input("x", {1, -1, -1, -1})};
  Config c = minimal();
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 3, 160, 160}}};
  c.mean_values = {{0, 0, 0}};
  CHECK(c.check_against(inputs).empty());
  c.mean_values = std::vector<std::vector<double>>{{0.0}};
  CHECK(problem(c.check_against(inputs), "mean_values") ==
        "config: mean_values[0] has 1 value, input 0 ('x') has 3 channels");
  c.dynamic_input = DynamicInput{{{1, 3, 224, 224}}, {{1, 1, 160, 160}}};
  CHECK(problem(c.check_against(inputs), "mean_values") ==
        "config: mean_values[0] is per channel but dynamic_input gives input 0 ('x') 3 channels in group 0 and 1 in "
        "group 1");
}

TEST_CASE("check() reports every problem, validate() the first") {
  Config c;
  c.optimization_level = 9;
  c.custom_string = std::string(2000, 'a');
  auto problems = c.check();
  REQUIRE(problems.size() == 3);
  CHECK(problems[0].key == "optimization_level");
  CHECK(problems[1].key == "target_platform");
  CHECK(problems[2].key == "custom_string");
  try {
    c.validate();
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "optimization_level");
  }
}
