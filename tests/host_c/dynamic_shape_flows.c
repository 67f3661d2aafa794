/*
 * The two dynamic-shape flows (docs/c-interface.md#dynamic-shapes), written in C against the runtime's documented C
 * interface only: the general API (rknn_inputs_set / rknn_outputs_get) and zero-copy
 * (rknn_create_mem / rknn_set_io_mem with the w_stride row copy). It never includes
 * anything of rknnxx's C++ and links against librknnxx_host.so as it would against the
 * vendor's librknnrt.so.
 *
 *   dynamic_shape_flows MODEL.hrknn
 *
 * For every shape of the model's shape set it runs both flows on the same synthetic
 * image, checks that they agree, and prints the top class. Exit code 0 when all agree.
 */
#include <rknnxx/abi/c_api.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OUTPUTS 8

#define CHECK(call)                                                                                                    \
  do {                                                                                                                 \
    int ret_ = (call);                                                                                                 \
    if (ret_ < 0) {                                                                                                    \
      fprintf(stderr, "%s failed: %d (line %d)\n", #call, ret_, __LINE__);                                             \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

static void dump_attr(const char* what, const rknn_tensor_attr* a) {
  printf("  %s index=%u name=%s n_dims=%u dims=[", what, a->index, a->name, a->n_dims);
  for (uint32_t i = 0; i < a->n_dims; ++i) printf("%s%u", i ? ", " : "", a->dims[i]);
  printf("] n_elems=%u size=%u w_stride=%u size_with_stride=%u fmt=%s type=%s\n", a->n_elems, a->size, a->w_stride,
         a->size_with_stride, get_format_string(a->fmt), get_type_string(a->type));
}

/* A deterministic RGB image, NHWC uint8, dense rows. */
static unsigned char* make_image(uint32_t h, uint32_t w, uint32_t c) {
  unsigned char* img = malloc((size_t)h * w * c);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      for (uint32_t k = 0; k < c; ++k)
        img[((size_t)y * w + x) * c + k] = (unsigned char)((x * 7 + y * 3 + k * 50) % 256);
  return img;
}

static int top1(const float* v, uint32_t n) {
  int best = 0;
  for (uint32_t i = 1; i < n; ++i)
    if (v[i] > v[best]) best = (int)i;
  return best;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.hrknn\n", argv[0]);
    return 2;
  }
  rknn_context ctx = 0;
  CHECK(rknn_init(&ctx, argv[1], 0, 0, NULL));

  rknn_sdk_version version;
  CHECK(rknn_query(ctx, RKNN_QUERY_SDK_VERSION, &version, sizeof version));
  printf("sdk api: %s\nsdk drv: %s\n", version.api_version, version.drv_version);

  rknn_input_output_num io_num;
  CHECK(rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof io_num));
  if (io_num.n_input != 1 || io_num.n_output < 1 || io_num.n_output > MAX_OUTPUTS) {
    fprintf(stderr, "expected a one-input model with 1 to %d outputs\n", MAX_OUTPUTS);
    return 1;
  }
  const uint32_t n_out = io_num.n_output;
  rknn_tensor_attr input_attr, output_attrs[MAX_OUTPUTS];
  memset(&input_attr, 0, sizeof input_attr);
  memset(output_attrs, 0, sizeof output_attrs);
  CHECK(rknn_query(ctx, RKNN_QUERY_INPUT_ATTR, &input_attr, sizeof input_attr));
  dump_attr("input", &input_attr);
  for (uint32_t o = 0; o < n_out; ++o) {
    output_attrs[o].index = o;
    CHECK(rknn_query(ctx, RKNN_QUERY_OUTPUT_ATTR, &output_attrs[o], sizeof output_attrs[o]));
    dump_attr("output", &output_attrs[o]);
  }

  rknn_input_range range;
  memset(&range, 0, sizeof range);
  CHECK(rknn_query(ctx, RKNN_QUERY_INPUT_DYNAMIC_RANGE, &range, sizeof range));
  printf("dynamic range: index=%u name=%s shape_number=%u fmt=%s\n", range.index, range.name, range.shape_number,
         get_format_string(range.fmt));
  if (range.shape_number < 2) {
    fprintf(stderr, "expected a dynamic-shape model\n");
    return 1;
  }

  /* Zero-copy: the largest memory, from the attrs reported before any shape is set. */
  input_attr.type = RKNN_TENSOR_UINT8;
  input_attr.fmt = RKNN_TENSOR_NHWC;
  rknn_tensor_mem* input_mem = rknn_create_mem(ctx, input_attr.size_with_stride);
  rknn_tensor_mem* output_mems[MAX_OUTPUTS];
  for (uint32_t o = 0; o < n_out; ++o) {
    output_mems[o] = rknn_create_mem(ctx, output_attrs[o].n_elems * sizeof(float));
    if (!output_mems[o]) {
      fprintf(stderr, "rknn_create_mem failed for output %u\n", o);
      return 1;
    }
  }
  if (!input_mem) {
    fprintf(stderr, "rknn_create_mem failed for the input\n");
    return 1;
  }

  int failures = 0;
  for (uint32_t s = 0; s < range.shape_number; ++s) {
    rknn_tensor_attr shape_attr = input_attr;
    shape_attr.n_dims = range.n_dims;
    for (uint32_t d = 0; d < range.n_dims; ++d) shape_attr.dims[d] = range.dyn_range[s][d];
    shape_attr.fmt = RKNN_TENSOR_NHWC;
    CHECK(rknn_set_input_shapes(ctx, 1, &shape_attr));

    rknn_tensor_attr cur_in, cur_out[MAX_OUTPUTS];
    memset(&cur_in, 0, sizeof cur_in);
    memset(cur_out, 0, sizeof cur_out);
    CHECK(rknn_query(ctx, RKNN_QUERY_CURRENT_INPUT_ATTR, &cur_in, sizeof cur_in));
    printf("shape %u:\n", s);
    dump_attr("current input", &cur_in);
    for (uint32_t o = 0; o < n_out; ++o) {
      cur_out[o].index = o;
      CHECK(rknn_query(ctx, RKNN_QUERY_CURRENT_OUTPUT_ATTR, &cur_out[o], sizeof cur_out[o]));
      dump_attr("current output", &cur_out[o]);
    }
    const uint32_t height = cur_in.dims[1], width = cur_in.dims[2], channel = cur_in.dims[3];
    unsigned char* image = make_image(height, width, channel);

    /* Zero-copy, with the demos' w_stride row copy. */
    const uint32_t stride = cur_in.w_stride;
    if (width == stride) {
      memcpy(input_mem->virt_addr, image, (size_t)height * width * channel);
    } else {
      const unsigned char* src = image;
      unsigned char* dst = input_mem->virt_addr;
      for (uint32_t b = 0; b < cur_in.dims[0]; ++b)
        for (uint32_t h = 0; h < height; ++h) {
          memcpy(dst, src, (size_t)width * channel);
          src += (size_t)width * channel;
          dst += (size_t)stride * channel;
        }
    }
    cur_in.type = RKNN_TENSOR_UINT8;
    CHECK(rknn_set_io_mem(ctx, input_mem, &cur_in));
    for (uint32_t o = 0; o < n_out; ++o) {
      cur_out[o].type = RKNN_TENSOR_FLOAT32; /* want float32 results in the logical layout */
      CHECK(rknn_set_io_mem(ctx, output_mems[o], &cur_out[o]));
    }
    CHECK(rknn_run(ctx, NULL));
    float* zero_copy[MAX_OUTPUTS]; /* kept aside: the general flow's run writes the bound memory too */
    for (uint32_t o = 0; o < n_out; ++o) {
      zero_copy[o] = malloc(cur_out[o].n_elems * sizeof(float));
      memcpy(zero_copy[o], output_mems[o]->virt_addr, cur_out[o].n_elems * sizeof(float));
    }

    /* General API. */
    rknn_input in;
    memset(&in, 0, sizeof in);
    in.index = 0;
    in.type = RKNN_TENSOR_UINT8;
    in.fmt = RKNN_TENSOR_NHWC;
    in.buf = image;
    in.size = height * width * channel;
    CHECK(rknn_inputs_set(ctx, 1, &in));
    CHECK(rknn_run(ctx, NULL));
    rknn_output outs[MAX_OUTPUTS];
    memset(outs, 0, sizeof outs);
    for (uint32_t o = 0; o < n_out; ++o) {
      outs[o].index = o;
      outs[o].want_float = 1;
    }
    CHECK(rknn_outputs_get(ctx, n_out, outs, NULL));
    float* general[MAX_OUTPUTS];
    for (uint32_t o = 0; o < n_out; ++o) {
      general[o] = malloc(cur_out[o].n_elems * sizeof(float));
      memcpy(general[o], outs[o].buf, cur_out[o].n_elems * sizeof(float));
    }
    CHECK(rknn_outputs_release(ctx, n_out, outs));

    float worst = 0;
    for (uint32_t o = 0; o < n_out; ++o)
      for (uint32_t i = 0; i < cur_out[o].n_elems; ++i) worst = fmaxf(worst, fabsf(general[o][i] - zero_copy[o][i]));
    rknn_perf_run perf;
    CHECK(rknn_query(ctx, RKNN_QUERY_PERF_RUN, &perf, sizeof perf));
    const float* logits = zero_copy[0];
    printf(
        "  top1 general=%d zero-copy=%d, max |difference| %g over %u outputs, run %lld us, w_stride %u for width %u\n",
        top1(general[0], cur_out[0].n_elems), top1(logits, cur_out[0].n_elems), worst, n_out,
        (long long)perf.run_duration, stride, width);
    if (worst != 0.0f) {
      fprintf(stderr, "shape %u: the general and zero-copy flows disagree\n", s);
      ++failures;
    }
    for (uint32_t o = 0; o < n_out; ++o) {
      free(general[o]);
      free(zero_copy[o]);
    }
    free(image);
  }

  /* A shape outside the set is refused with the vendor's code. */
  rknn_tensor_attr bad = input_attr;
  bad.dims[1] = 17;
  bad.dims[2] = 19;
  if (rknn_set_input_shapes(ctx, 1, &bad) != RKNN_ERR_FAIL) {
    fprintf(stderr, "a shape outside the set was not refused with RKNN_ERR_FAIL\n");
    ++failures;
  }

  CHECK(rknn_destroy_mem(ctx, input_mem));
  for (uint32_t o = 0; o < n_out; ++o) CHECK(rknn_destroy_mem(ctx, output_mems[o]));
  CHECK(rknn_destroy(ctx));
  if (rknn_query(ctx, RKNN_QUERY_IN_OUT_NUM, &io_num, sizeof io_num) != RKNN_ERR_CTX_INVALID) {
    fprintf(stderr, "a destroyed context was not refused with RKNN_ERR_CTX_INVALID\n");
    ++failures;
  }
  printf("dynamic_shape_flows: %d passed, %d failed\n", (int)range.shape_number + 2 - failures, failures);
  return failures == 0 ? 0 : 1;
}
