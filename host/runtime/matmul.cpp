// The matmul API of the host runtime (docs/matmul.md): the rknn_matmul_* functions and
// rknn_B_normal_layout_to_native_layout, exported with C linkage as c_api.cpp's are.

#include "matmul.hpp"

#include <rknnxx/core/bfloat16.hpp>
#include <rknnxx/core/float16.hpp>
#include <rknnxx/core/int4.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string_view>

#include "api_error.hpp"
#include "registry.hpp"

namespace rknnxx::host {

namespace {

constexpr const char* matrix_names[3] = {"A", "B", "C"};

bool is_integer(TensorType t) noexcept {
  return t == TensorType::int4 || t == TensorType::int8 || t == TensorType::int16 || t == TensorType::int32;
}

bool per_channel(int quant_type) noexcept {
  return quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_SYM || quant_type == RKNN_QUANT_TYPE_PER_CHANNEL_ASYM;
}
bool per_group(int quant_type) noexcept {
  return quant_type == RKNN_QUANT_TYPE_PER_GROUP_SYM || quant_type == RKNN_QUANT_TYPE_PER_GROUP_ASYM;
}
bool symmetric(int quant_type) noexcept { return quant_type % 2 == 0; }

// Element `index` (in elements) of a matrix of type `t` stored in `bytes`.
double read_real(std::span<const std::byte> bytes, TensorType t, std::uint64_t index) {
  switch (t) {
    case TensorType::float16: {
      std::uint16_t bits;
      std::memcpy(&bits, bytes.data() + index * 2, 2);
      return Float16::from_bits(bits).to_double();
    }
    case TensorType::int8: return static_cast<double>(static_cast<std::int8_t>(bytes[index]));
    case TensorType::int4: {
      const auto byte = static_cast<std::uint8_t>(bytes[index / 2]);
      return Int4::from_nibble(index % 2 == 0 ? byte : static_cast<std::uint8_t>(byte >> 4)).value();
    }
    default: fail(RKNN_ERR_FAIL, "internal: matmul input type {} has no reader", name_of(t));
  }
}

void write_nibble(std::span<std::byte> bytes, std::uint64_t index, std::uint8_t nibble) {
  auto& byte = bytes[index / 2];
  const auto old = static_cast<std::uint8_t>(byte);
  byte = static_cast<std::byte>(index % 2 == 0 ? (old & 0xF0u) | (nibble & 0x0Fu) : (old & 0x0Fu) | (nibble << 4));
}

// Copies element `from` of `source` to element `to` of `target`, both of type `t`.
void copy_element(std::span<const std::byte> source, std::uint64_t from, std::span<std::byte> target, std::uint64_t to,
                  TensorType t) {
  if (t == TensorType::int4) {
    const auto byte = static_cast<std::uint8_t>(source[from / 2]);
    write_nibble(target, to, static_cast<std::uint8_t>(from % 2 == 0 ? byte & 0x0Fu : byte >> 4));
    return;
  }
  const std::size_t width = bits_of(t) / 8;
  std::memcpy(target.data() + to * width, source.data() + from * width, width);
}

template <class T> void store(std::span<std::byte> bytes, std::uint64_t index, T value) {
  std::memcpy(bytes.data() + index * sizeof(T), &value, sizeof(T));
}

template <class T> T saturate(std::int64_t value) {
  return static_cast<T>(std::clamp<std::int64_t>(value, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

// The bytes of `mem` that hold a matrix of `size` bytes: refused when the memory is too small.
std::span<std::byte> matrix_bytes(HostMem& mem, std::uint32_t size, const char* name) {
  auto view = mem.cpu_view();
  if (view.size() < size)
    fail(RKNN_ERR_PARAM_INVALID, "the memory bound to {} has {} bytes, the current shape needs {}", name, view.size(),
         size);
  return view.first(size);
}

// a x b elements for a working copy: refused, not truncated, where size_t is 32 bits.
std::size_t element_count(std::uint32_t a, std::uint32_t b, std::string_view what) {
  const std::uint64_t count = detail::checked_mul(a, b, what);
  if (count > std::numeric_limits<std::size_t>::max() / sizeof(float))
    fail(RKNN_ERR_MALLOC_FAIL, "{} is {} elements, more than this process can address", what, count);
  return static_cast<std::size_t>(count);
}

}  // namespace

PlatformInfo host_platform() {
  const char* name = std::getenv("RKNNXX_HOST_PLATFORM");
  if (name == nullptr || *name == '\0') return platform_info(Platform::rk3588);
  const auto platform = platform_from_name(name);
  if (!platform) fail(RKNN_ERR_FAIL, "RKNNXX_HOST_PLATFORM={} is not a known platform (e.g. RK3588, RK3566)", name);
  return platform_info(*platform);
}

MatmulContext::MatmulContext(const PlatformInfo& platform, const rknn_matmul_info& info,
                             std::vector<MatmulShape> shapes)
    : platform_(platform), info_(info), shapes_(std::move(shapes)) {
  if (!platform_.supports(Function::matmul_create)) fail(RKNN_ERR_FAIL, "{} has no matmul API", platform_.name);
  if (info.AC_quant_type != 0)
    fail(RKNN_ERR_PARAM_INVALID, "AC_quant_type is {}: A and C are quantized per layer only (0)", info.AC_quant_type);
  if (info.B_quant_type < 0 || info.B_quant_type > 5)
    fail(RKNN_ERR_PARAM_INVALID, "B_quant_type {} is not a rknn_matmul_quant_type (0..5)", info.B_quant_type);
  geometries_.reserve(shapes_.size());
  for (const MatmulShape& shape : shapes_) {
    geometries_.push_back(matmul_geometry(platform_, info.type, shape, static_cast<MatmulLayout>(info.B_layout),
                                          static_cast<MatmulLayout>(info.AC_layout)));
    const MatmulGeometry& g = geometries_.back();
    if (info.B_quant_type != RKNN_QUANT_TYPE_PER_LAYER_SYM && !is_integer(g.b.type))
      fail(RKNN_ERR_PARAM_INVALID, "B_quant_type {} needs an integer B; B is {}", info.B_quant_type, name_of(g.b.type));
    if (per_group(info.B_quant_type) &&
        (info.group_size <= 0 || shape.k % static_cast<std::uint32_t>(info.group_size) != 0))
      fail(RKNN_ERR_PARAM_INVALID, "per-group B needs group_size > 0 dividing K (group_size={}, K={})", info.group_size,
           shape.k);
    // Only a transposed B may change K and N between shapes: a normal or native B is one
    // constant matrix for every shape (docs/matmul.md).
    const MatmulShape& first = shapes_.front();
    if (info.B_layout != RKNN_MM_LAYOUT_TP_NORM && (shape.k != first.k || shape.n != first.n))
      fail(RKNN_ERR_PARAM_INVALID,
           "shape (M={}, K={}, N={}) changes K or N from the first shape (K={}, N={}): only B_layout 2 "
           "(transposed) allows that",
           shape.m, shape.k, shape.n, first.k, first.n);
  }
  for (std::size_t i = 0; i < shapes_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (shapes_[i] == shapes_[j])
        fail(RKNN_ERR_PARAM_INVALID, "shape {} (M={}, K={}, N={}) is listed twice", i, shapes_[i].m, shapes_[i].k,
             shapes_[i].n);
}

void MatmulContext::io_attr(std::size_t shape, rknn_matmul_io_attr& out) const {
  const MatmulGeometry& g = geometries_.at(shape);
  const MatmulMatrix* matrices[3] = {&g.a, &g.b, &g.c};
  rknn_matmul_tensor_attr* attrs[3] = {&out.A, &out.B, &out.C};
  for (int i = 0; i < 3; ++i) {
    rknn_matmul_tensor_attr& attr = *attrs[i];
    std::memset(&attr, 0, sizeof attr);
    std::snprintf(attr.name, sizeof attr.name, "%s", matrix_names[i]);
    attr.n_dims = matrices[i]->n_dims;
    std::copy_n(matrices[i]->dims.begin(), matrices[i]->n_dims, attr.dims);
    attr.size = matrices[i]->size;
    attr.type = static_cast<rknn_tensor_type>(matrices[i]->type);
  }
}

MatmulContext::Matrix MatmulContext::matrix_named(const char* name, const char* call) const {
  const std::string_view text(name, strnlen(name, RKNN_MAX_NAME_LEN));
  for (int i = 0; i < 3; ++i)
    if (text == matrix_names[i]) return static_cast<Matrix>(i);
  fail(RKNN_ERR_PARAM_INVALID, "{} name \"{}\" is none of the io_attr names \"A\", \"B\", \"C\"", call, text);
}

void MatmulContext::set_io_mem(std::shared_ptr<HostMem> mem, const rknn_matmul_tensor_attr& attr) {
  std::lock_guard lock(mutex_);
  const Matrix which = matrix_named(attr.name, "attr");
  const MatmulGeometry& g = geometries_[current_];
  const std::uint32_t size = which == matrix_a ? g.a.size : which == matrix_b ? g.b.size : g.c.size;
  (void)matrix_bytes(*mem, size, matrix_names[which]);
  mems_[which] = std::move(mem);
}

void MatmulContext::set_core_mask(rknn_core_mask mask) {
  if (!platform_.supports(Function::matmul_set_core_mask))
    fail(RKNN_ERR_FAIL, "{} has a single NPU core: core masks are for RK3588 and RK3576", platform_.name);
  const auto core_mask = static_cast<CoreMask>(mask);
  if (!is_valid(core_mask) || !platform_.valid_core_mask(core_mask))
    fail(RKNN_ERR_PARAM_INVALID, "core mask {:#x} is not a core mask of {} ({} cores)", static_cast<unsigned>(mask),
         platform_.name, platform_.npu_cores);
  // One CPU does the work whatever cores are named: the mask is checked, as a board does.
}

std::size_t MatmulContext::scale_count(Matrix which) const {
  const MatmulGeometry& g = geometries_[current_];
  switch (which) {
    case matrix_a: return is_integer(g.a.type) ? 1 : 0;
    case matrix_c: return g.c.type == TensorType::int8 ? 1 : 0;
    case matrix_b: break;
  }
  if (!is_integer(g.b.type)) return 0;
  const MatmulShape& shape = shapes_[current_];
  if (per_channel(info_.B_quant_type)) return shape.n;
  if (per_group(info_.B_quant_type))
    return static_cast<std::size_t>(shape.n) * (shape.k / static_cast<std::uint32_t>(info_.group_size));
  return 1;
}

void MatmulContext::set_quant_params(const rknn_quant_params& params) {
  std::lock_guard lock(mutex_);
  const Matrix which = matrix_named(params.name, "params");
  const std::size_t expected = scale_count(which);
  const MatmulGeometry& g = geometries_[current_];
  const TensorType type = which == matrix_a ? g.a.type : which == matrix_b ? g.b.type : g.c.type;
  if (expected == 0)
    fail(RKNN_ERR_PARAM_INVALID, "{} is {} in {}: it takes no quantization parameters", matrix_names[which],
         name_of(type), get_matmul_type_string(info_.type));
  if (params.scale == nullptr || params.scale_len < 0 || static_cast<std::size_t>(params.scale_len) != expected)
    fail(RKNN_ERR_PARAM_INVALID, "{} takes {} scale(s) here; params has scale_len {}{}", matrix_names[which], expected,
         params.scale_len, params.scale == nullptr ? " and scale NULL" : "");
  const bool zero_points = params.zp != nullptr && params.zp_len != 0;
  if (zero_points && static_cast<std::size_t>(params.zp_len) != expected)
    fail(RKNN_ERR_PARAM_INVALID, "{} takes {} zero point(s) or none; params has zp_len {}", matrix_names[which],
         expected, params.zp_len);
  const int quant_type = which == matrix_b ? int{info_.B_quant_type} : int{RKNN_QUANT_TYPE_PER_LAYER_ASYM};
  const int32_t lowest = type == TensorType::int4 ? Int4::min : -128;
  const int32_t highest = type == TensorType::int4 ? Int4::max : 127;
  Quant quant;
  quant.scale.assign(params.scale, params.scale + expected);
  quant.zero_point.assign(expected, 0);
  for (std::size_t i = 0; i < expected; ++i) {
    if (!std::isfinite(quant.scale[i]) || quant.scale[i] <= 0.0f)
      fail(RKNN_ERR_PARAM_INVALID, "{} scale[{}] is {}: scales must be finite and positive", matrix_names[which], i,
           quant.scale[i]);
    if (!zero_points) continue;
    quant.zero_point[i] = params.zp[i];
    if (quant.zero_point[i] != 0 && symmetric(quant_type))
      fail(RKNN_ERR_PARAM_INVALID, "B's B_quant_type {} is symmetric: zp[{}] is {}, must be 0", quant_type, i,
           quant.zero_point[i]);
    if (quant.zero_point[i] < lowest || quant.zero_point[i] > highest)
      fail(RKNN_ERR_PARAM_INVALID, "{} zp[{}] is {}, outside {}'s range [{}, {}]", matrix_names[which], i,
           quant.zero_point[i], name_of(type), lowest, highest);
  }
  quant_[which] = std::move(quant);
}

float MatmulContext::b_common_scale() const {
  return *std::max_element(quant_[matrix_b].scale.begin(), quant_[matrix_b].scale.end());
}

void MatmulContext::get_quant_params(rknn_quant_params& params, float* scale) const {
  std::lock_guard lock(mutex_);
  const Matrix which = matrix_named(params.name, "params");
  const Quant& quant = quant_[which];
  if (params.scale != nullptr) {
    if (params.scale_len < 0 || static_cast<std::size_t>(params.scale_len) < quant.scale.size())
      fail(RKNN_ERR_PARAM_INVALID, "params.scale has room for {} scale(s), {} has {}", params.scale_len,
           matrix_names[which], quant.scale.size());
    std::copy(quant.scale.begin(), quant.scale.end(), params.scale);
  }
  if (params.zp != nullptr) {
    if (params.zp_len < 0 || static_cast<std::size_t>(params.zp_len) < quant.zero_point.size())
      fail(RKNN_ERR_PARAM_INVALID, "params.zp has room for {} zero point(s), {} has {}", params.zp_len,
           matrix_names[which], quant.zero_point.size());
    std::copy(quant.zero_point.begin(), quant.zero_point.end(), params.zp);
  }
  params.scale_len = static_cast<int32_t>(quant.scale.size());
  params.zp_len = static_cast<int32_t>(quant.zero_point.size());
  if (scale != nullptr) *scale = which == matrix_b ? b_common_scale() : quant.scale.front();
}

void MatmulContext::set_dynamic_shape(const rknn_matmul_shape& shape) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    const MatmulShape& s = shapes_[i];
    if (static_cast<int64_t>(s.m) == shape.M && static_cast<int64_t>(s.k) == shape.K &&
        static_cast<int64_t>(s.n) == shape.N) {
      current_ = i;
      return;
    }
  }
  fail(RKNN_ERR_PARAM_INVALID, "shape (M={}, K={}, N={}) is not one of the {} shapes given at creation", shape.M,
       shape.K, shape.N, shapes_.size());
}

void MatmulContext::run() {
  std::lock_guard lock(mutex_);
  const MatmulGeometry& g = geometries_[current_];
  const MatmulShape& shape = shapes_[current_];
  for (int i = 0; i < 3; ++i)
    if (!mems_[i])
      fail(RKNN_ERR_PARAM_INVALID, "no memory is bound to {}: call rknn_matmul_set_io_mem first", matrix_names[i]);
  for (int i = 0; i < 3; ++i)
    if (quant_[i].scale.size() != std::max<std::size_t>(scale_count(static_cast<Matrix>(i)), 1))
      fail(RKNN_ERR_PARAM_INVALID,
           "{}'s {} quantization scale(s) are for another shape: set them again for M={}, K={}, N={}", matrix_names[i],
           quant_[i].scale.size(), shape.m, shape.k, shape.n);
  const std::span<const std::byte> a_bytes = matrix_bytes(*mems_[matrix_a], g.a.size, "A");
  const std::span<const std::byte> b_bytes = matrix_bytes(*mems_[matrix_b], g.b.size, "B");
  const std::span<std::byte> c_bytes = matrix_bytes(*mems_[matrix_c], g.c.size, "C");
  const std::uint32_t m_count = shape.m, k_count = shape.k, n_count = shape.n;

  // Dequantization of B: which scale and zero point element (k, n) uses.
  const std::uint32_t groups_per_row =
      per_group(info_.B_quant_type) ? k_count / static_cast<std::uint32_t>(info_.group_size) : 1;
  const auto b_param = [&](std::uint32_t k, std::uint32_t n) -> std::size_t {
    if (per_channel(info_.B_quant_type)) return n;
    if (per_group(info_.B_quant_type))
      return static_cast<std::size_t>(n) * groups_per_row + k / static_cast<std::uint32_t>(info_.group_size);
    return 0;
  };
  const Quant& qa = quant_[matrix_a];
  const Quant& qb = quant_[matrix_b];
  const Quant& qc = quant_[matrix_c];
  const bool a_int = is_integer(g.a.type), b_int = is_integer(g.b.type);

  // A and B as numbers, zero points removed: A [M, K] and B transposed, [N, K], so that both
  // walk K contiguously. float holds every value exactly (float16, and integers within +-255).
  std::vector<float> a(element_count(m_count, k_count, "M x K"));
  for (std::uint32_t m = 0; m < m_count; ++m)
    for (std::uint32_t k = 0; k < k_count; ++k)
      a[static_cast<std::size_t>(m) * k_count + k] =
          static_cast<float>(read_real(a_bytes, g.a.type, g.a.offset(m, k)) - (a_int ? qa.zero_point[0] : 0));
  std::vector<float> b(element_count(k_count, n_count, "K x N"));
  for (std::uint32_t k = 0; k < k_count; ++k)
    for (std::uint32_t n = 0; n < n_count; ++n)
      b[static_cast<std::size_t>(n) * k_count + k] = static_cast<float>(read_real(b_bytes, g.b.type, g.b.offset(k, n)) -
                                                                        (b_int ? qb.zero_point[b_param(k, n)] : 0));

  const bool integer_result = g.c.type == TensorType::int32 || g.c.type == TensorType::int16;
  if (integer_result && qb.scale.size() > 1) {
    // Integer results carry one scale: B's channels are brought to the largest of its scales
    // first (rknn_matmul_get_quant_params reports it; docs/matmul.md).
    const double common = b_common_scale();
    for (std::uint32_t k = 0; k < k_count; ++k)
      for (std::uint32_t n = 0; n < n_count; ++n) {
        float& value = b[static_cast<std::size_t>(n) * k_count + k];
        value = static_cast<float>(std::nearbyint(value * double{qb.scale[b_param(k, n)]} / common));
      }
  }

  for (std::uint32_t m = 0; m < m_count; ++m)
    for (std::uint32_t n = 0; n < n_count; ++n) {
      const float* a_row = &a[static_cast<std::size_t>(m) * k_count];
      const float* b_col = &b[static_cast<std::size_t>(n) * k_count];
      const std::uint64_t out = g.c.offset(m, n);
      if (integer_result) {
        std::int64_t sum = 0;  // exact: |a|, |b| <= 255 and K < 2^32
        for (std::uint32_t k = 0; k < k_count; ++k)
          sum += static_cast<std::int64_t>(a_row[k]) * static_cast<std::int64_t>(b_col[k]);
        if (g.c.type == TensorType::int32) store(c_bytes, out, saturate<std::int32_t>(sum));
        else store(c_bytes, out, saturate<std::int16_t>(sum));
        continue;
      }
      // Real result: each integer B term with its own scale, summed in double, rounded once.
      double real = 0;
      for (std::uint32_t k = 0; k < k_count; ++k) {
        const double b_value = b_col[k];
        real += a_row[k] * (b_int ? b_value * qb.scale[b_param(k, n)] : b_value);
      }
      if (a_int) real *= qa.scale[0];
      switch (g.c.type) {
        case TensorType::float32: store(c_bytes, out, static_cast<float>(real)); break;
        case TensorType::float16: store(c_bytes, out, Float16(real).bits()); break;
        case TensorType::bfloat16: store(c_bytes, out, BFloat16(real).bits()); break;
        case TensorType::int8: {
          const double q = std::nearbyint(real / qc.scale[0]) + qc.zero_point[0];
          store(c_bytes, out, static_cast<std::int8_t>(std::clamp(q, -128.0, 127.0)));
          break;
        }
        default: fail(RKNN_ERR_FAIL, "internal: matmul result type {} has no writer", name_of(g.c.type));
      }
    }
}

void b_normal_to_native(const void* normal, void* native, int k, int n, const rknn_matmul_info& info) {
  if (k <= 0 || n <= 0) fail(RKNN_ERR_PARAM_INVALID, "K={} and N={} must be positive", k, n);
  const MatmulShape shape{1, static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n)};
  const MatmulGeometry native_g =
      matmul_geometry(host_platform(), info.type, shape, MatmulLayout::native, MatmulLayout::normal);
  const MatmulGeometry normal_g =
      matmul_geometry(host_platform(), info.type, shape, MatmulLayout::normal, MatmulLayout::normal);
  const std::span<const std::byte> source(static_cast<const std::byte*>(normal), normal_g.b.size);
  const std::span<std::byte> target(static_cast<std::byte*>(native), native_g.b.size);
  for (std::uint32_t row = 0; row < shape.k; ++row)
    for (std::uint32_t col = 0; col < shape.n; ++col)
      copy_element(source, normal_g.b.offset(row, col), target, native_g.b.offset(row, col), native_g.b.type);
}

}  // namespace rknnxx::host

using namespace rknnxx::host;

namespace {

rknnxx::MatmulShape shape_of(int m, int k, int n, const char* what) {
  if (m <= 0 || k <= 0 || n <= 0)
    fail(RKNN_ERR_PARAM_INVALID, "{}: M, K and N must be positive (M={}, K={}, N={})", what, m, k, n);
  return {static_cast<std::uint32_t>(m), static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(n)};
}

// Bounds the shape list of rknn_matmul_create_dynamic_shape (each shape costs a geometry).
constexpr int max_dynamic_shapes = 1024;

}  // namespace

extern "C" {

int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
  return guarded("rknn_matmul_create", [&] {
    require(ctx, "ctx");
    require(info, "info");
    require(io_attr, "io_attr");
    *ctx = 0;
    auto context = std::make_shared<MatmulContext>(host_platform(), *info,
                                                   std::vector{shape_of(info->M, info->K, info->N, "info")});
    context->io_attr(0, *io_attr);
    *ctx = registry().add_matmul(std::move(context));
  });
}

int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                     rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
  return guarded("rknn_matmul_create_dynamic_shape", [&] {
    require(ctx, "ctx");
    require(info, "info");
    require(dynamic_shapes, "dynamic_shapes");
    require(io_attrs, "io_attrs");
    *ctx = 0;
    if (shape_num <= 0 || shape_num > max_dynamic_shapes)
      fail(RKNN_ERR_PARAM_INVALID, "shape_num {} is outside 1..{}", shape_num, max_dynamic_shapes);
    std::vector<rknnxx::MatmulShape> shapes;
    for (int i = 0; i < shape_num; ++i)
      shapes.push_back(shape_of(dynamic_shapes[i].M, dynamic_shapes[i].K, dynamic_shapes[i].N, "dynamic_shapes[i]"));
    auto context = std::make_shared<MatmulContext>(host_platform(), *info, std::move(shapes));
    for (int i = 0; i < shape_num; ++i) context->io_attr(static_cast<std::size_t>(i), io_attrs[i]);
    *ctx = registry().add_matmul(std::move(context));
  });
}

int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr) {
  return guarded("rknn_matmul_set_io_mem", [&] {
    auto context = registry().matmul(ctx);
    context->set_io_mem(registry().mem(ctx, require(mem, "mem")), *require(attr, "attr"));
  });
}

int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask) {
  return guarded("rknn_matmul_set_core_mask", [&] { registry().matmul(context)->set_core_mask(core_mask); });
}

int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params* params) {
  return guarded("rknn_matmul_set_quant_params",
                 [&] { registry().matmul(context)->set_quant_params(*require(params, "params")); });
}

int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
  return guarded("rknn_matmul_get_quant_params",
                 [&] { registry().matmul(ctx)->get_quant_params(*require(params, "params"), scale); });
}

int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
  return guarded("rknn_matmul_set_dynamic_shape",
                 [&] { registry().matmul(ctx)->set_dynamic_shape(*require(shape, "shape")); });
}

int rknn_matmul_run(rknn_matmul_ctx ctx) {
  return guarded("rknn_matmul_run", [&] { registry().matmul(ctx)->run(); });
}

int rknn_matmul_destroy(rknn_matmul_ctx ctx) {
  return guarded("rknn_matmul_destroy", [&] { registry().remove_matmul(ctx); });
}

int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N, rknn_matmul_info* info) {
  return guarded("rknn_B_normal_layout_to_native_layout", [&] {
    b_normal_to_native(require(B_input, "B_input"), require(B_output, "B_output"), K, N, *require(info, "info"));
  });
}

}  // extern "C"
