// HostContext's rknn_query: one answer per command, from the model, the current shapes, the
// memory plan and the perf report. Nothing here changes what a run does.
#include "host_context.hpp"

#include "api_error.hpp"
#include "c_string.hpp"
#include "model_io.hpp"

#include <algorithm>
#include <rknnxx/core/layout.hpp>
#include <rknnxx/version.hpp>

#include <fmt/format.h>

namespace rknnxx::host {

namespace {

constexpr std::string_view mirrored_sdk = "2.3.2";

template <class Info> Info& info_as(void* info, uint32_t size, rknn_query_cmd cmd) {
  if (size < sizeof(Info))
    fail(RKNN_ERR_PARAM_INVALID, "query {}: info size {} is smaller than the {} bytes of its struct",
         static_cast<int>(cmd), size, sizeof(Info));
  return *static_cast<Info*>(info);
}

}  // namespace

rknn_tensor_attr HostContext::attr(bool input, uint32_t index, AttrKind kind, bool current) const {
  check_index(*model_, input, index);
  if (input) return model_->attr(true, index, (current ? shapes_ : model_->initial_shapes())[index], kind);
  const auto& shape = (current ? output_shapes_ : initial_output_shapes_).at(index);
  if (std::find(shape.begin(), shape.end(), int64_t{0}) == shape.end()) return model_->attr(false, index, shape, kind);
  // A run that decided an empty output (no detections): its dims with the 0, n_elems and sizes 0
  // (docs/c-interface.md#run-time-output-shapes); the rest as for one element where it is 0.
  std::vector<int64_t> one = shape;
  std::replace(one.begin(), one.end(), int64_t{0}, int64_t{1});
  rknn_tensor_attr a = model_->attr(false, index, one, kind);
  if (a.fmt == RKNN_TENSOR_NCHW || a.fmt == RKNN_TENSOR_UNDEFINED)
    for (uint32_t d = 0; d < a.n_dims; ++d) a.dims[d] = static_cast<uint32_t>(shape[d]);
  a.n_elems = 0;
  a.size = 0;
  a.size_with_stride = 0;
  return a;
}

void HostContext::answer_query(rknn_query_cmd cmd, void* info, uint32_t size) {
  const PlatformInfo& platform = model_->platform_info();
  if (cmd != RKNN_QUERY_MEM_SIZE) require_full_context("rknn_query");
  const auto command = static_cast<QueryCmd>(cmd);
  if (static_cast<uint32_t>(cmd) >= RKNN_QUERY_CMD_MAX)
    fail(RKNN_ERR_PARAM_INVALID, "query command {} is not a rknn_query_cmd", static_cast<int>(cmd));
  if (!platform.supports(command))
    fail(RKNN_ERR_PARAM_INVALID, "query command {} is not supported on {}", static_cast<int>(cmd), platform.name);

  auto tensor_query = [&](bool input, AttrKind kind, bool current) {
    auto& out = info_as<rknn_tensor_attr>(info, size, cmd);
    out = attr(input, out.index, kind, current);
  };
  switch (cmd) {
    case RKNN_QUERY_IN_OUT_NUM: {
      auto& out = info_as<rknn_input_output_num>(info, size, cmd);
      out.n_input = static_cast<uint32_t>(model_->inputs().size());
      out.n_output = static_cast<uint32_t>(model_->outputs().size());
      return;
    }
    case RKNN_QUERY_INPUT_ATTR: return tensor_query(true, AttrKind::normal, false);
    case RKNN_QUERY_OUTPUT_ATTR: return tensor_query(false, AttrKind::normal, false);
    case RKNN_QUERY_NATIVE_INPUT_ATTR: return tensor_query(true, AttrKind::native, false);
    case RKNN_QUERY_NATIVE_OUTPUT_ATTR: return tensor_query(false, AttrKind::native, false);
    case RKNN_QUERY_NATIVE_NHWC_INPUT_ATTR: return tensor_query(true, AttrKind::native_nhwc, false);
    case RKNN_QUERY_NATIVE_NHWC_OUTPUT_ATTR: return tensor_query(false, AttrKind::native_nhwc, false);
    case RKNN_QUERY_CURRENT_INPUT_ATTR: return tensor_query(true, AttrKind::normal, true);
    case RKNN_QUERY_CURRENT_OUTPUT_ATTR: return tensor_query(false, AttrKind::normal, true);
    case RKNN_QUERY_CURRENT_NATIVE_INPUT_ATTR: return tensor_query(true, AttrKind::native, true);
    case RKNN_QUERY_CURRENT_NATIVE_OUTPUT_ATTR: return tensor_query(false, AttrKind::native, true);
    case RKNN_QUERY_PERF_RUN: {
      info_as<rknn_perf_run>(info, size, cmd).run_duration = perf_.run_us();
      return;
    }
    case RKNN_QUERY_PERF_DETAIL: {
      auto& out = info_as<rknn_perf_detail>(info, size, cmd);
      if ((flags_ & RKNN_FLAG_COLLECT_PERF_MASK) == 0)
        fail(RKNN_ERR_PARAM_INVALID, "RKNN_QUERY_PERF_DETAIL needs RKNN_FLAG_COLLECT_PERF_MASK at rknn_init");
      if (!has_run_) fail(RKNN_ERR_PARAM_INVALID, "RKNN_QUERY_PERF_DETAIL before the first rknn_run");
      // The context's one buffer (NUL-terminated), valid until the next rknn_run or rknn_destroy:
      // repeated queries hand out the same text and keep no copies.
      out.perf_data = perf_.detail_text();
      out.data_len = perf_.detail_size();
      return;
    }
    case RKNN_QUERY_SDK_VERSION: {
      auto& out = info_as<rknn_sdk_version>(info, size, cmd);
      copy_c_string(out.api_version,
                    fmt::format("{} (rknnxx host runtime {}, mirrors the vendor C API {})", mirrored_sdk,
                                version_string, mirrored_sdk));
      copy_c_string(out.drv_version, fmt::format("rknnxx-host {} (CPU, no NPU driver)", version_string));
      return;
    }
    case RKNN_QUERY_MEM_SIZE: {
      auto& out = info_as<rknn_mem_size>(info, size, cmd);
      out = {};
      // What the engine keeps: float32 weights also for a float16 model, so twice the board's figure there;
      // a quantized model's weights one byte each (half a byte for w4a16, two for w16a16i_dfp), as on the board.
      out.total_weight_size = static_cast<uint32_t>(session_.board_weight_bytes());
      out.total_internal_size = static_cast<uint32_t>(internal_bytes());
      out.total_dma_allocated_size = uint64_t{out.total_weight_size} + out.total_internal_size;
      return;
    }
    case RKNN_QUERY_CUSTOM_STRING: {
      auto& out = info_as<rknn_custom_string>(info, size, cmd);
      copy_c_string(out.string, model_->file().custom_string.value_or(""));
      return;
    }
    case RKNN_QUERY_DEVICE_MEM_INFO: {
      auto& out = info_as<rknn_tensor_mem>(info, size, cmd);
      out = {};
      out.fd = -1;
      out.size = static_cast<uint32_t>(session_.board_weight_bytes());
      return;
    }
    case RKNN_QUERY_INPUT_DYNAMIC_RANGE: {
      auto& out = info_as<rknn_input_range>(info, size, cmd);
      check_index(*model_, true, out.index);
      if (!model_->dynamic()) {
        // As the board does (rknn_model_zoo#271): a warning, and MODEL_INVALID for a static model.
        log_warning("rknn_query: RKNN_QUERY_INPUT_DYNAMIC_RANGE on a static-shape model");
        throw ApiError(RKNN_ERR_MODEL_INVALID, "the model has no dynamic shape set");
      }
      const uint32_t index = out.index;
      const auto& set = model_->shape_set();
      const auto& first = set.front()[index];
      out.shape_number = static_cast<uint32_t>(set.size());
      out.fmt = first.size() == 4 ? RKNN_TENSOR_NHWC : RKNN_TENSOR_UNDEFINED;
      copy_c_string(out.name, model_->inputs()[index].name);
      out.n_dims = static_cast<uint32_t>(first.size());
      for (size_t s = 0; s < set.size(); ++s) {
        const auto& d = set[s][index];
        const std::vector<int64_t> shown = nchw_to_nhwc(d);
        for (size_t k = 0; k < shown.size() && k < RKNN_MAX_DIMS; ++k)
          out.dyn_range[s][k] = static_cast<uint32_t>(shown[k]);
      }
      return;
    }
    default: break;
  }
  fail(RKNN_ERR_PARAM_INVALID, "query command {} is not supported by the host runtime", static_cast<int>(cmd));
}

}  // namespace rknnxx::host
