#pragma once
// A matmul context of the host runtime (rknn_matmul_*, docs/matmul.md): C = A x B for one of the
// shapes given at creation, on the platform the host runtime stands in for. The geometry is
// core/matmul_layout.hpp's; this class adds the bound memory, the quantization parameters and
// the arithmetic, done on the CPU as a naive reference would (exact for integer results).

#include <rknnxx/abi/c_matmul_api.h>
#include <rknnxx/core/matmul_layout.hpp>
#include <rknnxx/core/platform.hpp>

#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "host_mem.hpp"

namespace rknnxx::host {

// The platform whose rules calls without a model (matmul) follow: RKNNXX_HOST_PLATFORM
// (docs/runtime-extensions.md), RK3588 when unset.
PlatformInfo host_platform();

class MatmulContext {
public:
  // Validates `info` and every shape against the platform (RKNN_ERR_PARAM_INVALID otherwise).
  MatmulContext(const PlatformInfo& platform, const rknn_matmul_info& info, std::vector<MatmulShape> shapes);

  [[nodiscard]] std::size_t shape_count() const noexcept { return geometries_.size(); }
  void io_attr(std::size_t shape, rknn_matmul_io_attr& out) const;

  void set_io_mem(std::shared_ptr<HostMem> mem, const rknn_matmul_tensor_attr& attr);
  void set_core_mask(rknn_core_mask mask);
  void set_quant_params(const rknn_quant_params& params);
  void get_quant_params(rknn_quant_params& params, float* scale) const;
  void set_dynamic_shape(const rknn_matmul_shape& shape);
  void run();

private:
  struct Quant {
    std::vector<float> scale{1.0f};
    std::vector<int32_t> zero_point{0};
  };
  enum Matrix { matrix_a, matrix_b, matrix_c };

  [[nodiscard]] Matrix matrix_named(const char* name, const char* call) const;
  // How many scales matrix `which` takes in the current shape; 0 when it takes none.
  [[nodiscard]] std::size_t scale_count(Matrix which) const;
  // The one scale that integer results of a per-channel or per-group B are in (docs/matmul.md).
  [[nodiscard]] float b_common_scale() const;

  PlatformInfo platform_;
  rknn_matmul_info info_;
  std::vector<MatmulShape> shapes_;
  std::vector<MatmulGeometry> geometries_;
  std::size_t current_ = 0;
  mutable std::mutex mutex_;  // one call at a time: run against set_io_mem in another thread
  std::shared_ptr<HostMem> mems_[3];
  Quant quant_[3];
};

// rknn_B_normal_layout_to_native_layout: B [K, N] to the native layout of `info`'s type.
void b_normal_to_native(const void* normal, void* native, int k, int n, const rknn_matmul_info& info);

}  // namespace rknnxx::host
