// TfIdfVectorizer (opset 9) on integer input ([C] or [N, C], int32 or int64; string input is
// refused with the other string tensors): counts, in each row, the n-grams of the pool
// (pool_int64s; ngram_counts[k] is where the (k + 1)-grams start, ngram_indexes the output column
// of each n-gram in pool order) whose length is within [min_gram_length, max_gram_length].
// An n-gram's items are `distance` apart, distance 1 to max_skip_count + 1; unigrams are counted
// once per position (not once per distance), as ONNX Runtime and the ONNX reference do. mode TF
// gives the counts, IDF the weight (1 without weights) of each n-gram seen, TFIDF count x weight;
// weights[i] is the weight of output column i, as both read it (the operator's text says "of the
// i-th n-gram in pool", the same when ngram_indexes is 0, 1, 2, ...).
// Output float32, [max(ngram_indexes) + 1] or [N, that]. Rows never share an n-gram.

#include "../op_registry.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace rknnxx::host {
namespace {

enum class TfIdfMode { tf, idf, tfidf };

struct TfIdfPlan {
  TfIdfMode mode = TfIdfMode::tf;
  int64_t min_n = 1, max_n = 1, max_distance = 1;
  int64_t rows = 1, columns = 0, outputs = 0;
  // ngrams[n - 1]: the pool's n-grams (items) to their output column.
  std::vector<std::map<std::vector<int64_t>, int64_t>> ngrams;
  std::vector<float> weights;  // per output column; empty means 1
};

template <class T> void tfidf_row(const TfIdfPlan& p, const T* x, float* y) {
  std::vector<int64_t> counts(static_cast<std::size_t>(p.outputs), 0);
  std::vector<int64_t> items;
  for (int64_t start = 0; start < p.columns; ++start) {
    for (int64_t distance = 1; distance <= p.max_distance; ++distance) {
      items.clear();
      for (int64_t n = 1; n <= p.max_n; ++n) {
        const int64_t at = start + (n - 1) * distance;
        if (at >= p.columns) {
          break;
        }
        items.push_back(static_cast<int64_t>(x[at]));
        if (n < p.min_n || (n == 1 && distance > 1)) {
          continue;  // too short, or a unigram already counted at distance 1
        }
        const auto& pool = p.ngrams[static_cast<std::size_t>(n - 1)];
        if (const auto found = pool.find(items); found != pool.end()) {
          ++counts[static_cast<std::size_t>(found->second)];
        }
      }
    }
  }
  for (int64_t i = 0; i < p.outputs; ++i) {
    const auto count = static_cast<float>(counts[static_cast<std::size_t>(i)]);
    const float weight = p.weights.empty() ? 1.0f : p.weights[static_cast<std::size_t>(i)];
    switch (p.mode) {
      case TfIdfMode::tf: y[i] = count; break;
      case TfIdfMode::idf: y[i] = count > 0.0f ? weight : 0.0f; break;
      case TfIdfMode::tfidf: y[i] = count * weight; break;
    }
  }
}

PreparedOp prepare_tfidf_vectorizer(OpContext& ctx) {
  ctx.expect_inputs(1, 1);
  ctx.expect_dtype(0, {DataType::int32, DataType::int64});
  const auto& shape = ctx.input(0).shape;
  if (shape.size() > 2) {
    ctx.fail("input '{}' has shape {}, expected [C] or [N, C]", ctx.input_name(0), shape_string(shape));
  }
  if (ctx.attribute("pool_strings") != nullptr) {
    ctx.fail("attribute 'pool_strings' (string n-grams) is not supported: the host engine has no string tensors");
  }
  TfIdfPlan p;
  const std::string mode = ctx.attr_string("mode", "");
  if (mode == "TF") {
    p.mode = TfIdfMode::tf;
  } else if (mode == "IDF") {
    p.mode = TfIdfMode::idf;
  } else if (mode == "TFIDF") {
    p.mode = TfIdfMode::tfidf;
  } else {
    ctx.fail("attribute 'mode' is '{}', expected TF, IDF or TFIDF", mode);
  }
  p.min_n = ctx.attr_int("min_gram_length", 0);
  p.max_n = ctx.attr_int("max_gram_length", 0);
  const int64_t max_skip = ctx.attr_int("max_skip_count", 0);
  const std::vector<int64_t> counts = ctx.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes");
  const std::vector<int64_t> pool = ctx.attr_ints("pool_int64s");
  p.weights = ctx.attr_floats("weights");
  if (p.min_n < 1 || p.max_n < p.min_n || p.max_n > static_cast<int64_t>(counts.size())) {
    ctx.fail("min_gram_length {} and max_gram_length {} must satisfy 1 <= min <= max <= {} (the ngram_counts)", p.min_n,
             p.max_n, counts.size());
  }
  if (max_skip < 0 || max_skip > int64_t{1} << 20) {
    ctx.fail("attribute 'max_skip_count' is {}, expected 0 to {}", max_skip, int64_t{1} << 20);
  }
  p.max_distance = max_skip + 1;
  // The n-grams of each length, in pool order, numbered as ngram_indexes numbers them.
  p.ngrams.resize(counts.size());
  std::size_t ngram = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const int64_t begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
    const auto n = static_cast<int64_t>(k + 1);
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
      ctx.fail("ngram_counts {} do not split the {} pool items into groups of 1, 2, ... items", shape_string(counts),
               pool.size());
    }
    for (int64_t i = begin; i < end; i += n, ++ngram) {
      if (ngram >= indexes.size()) {
        ctx.fail("ngram_indexes has {} values, fewer than the pool's n-grams", indexes.size());
      }
      if (indexes[ngram] < 0 || indexes[ngram] >= int64_t{1} << 24) {
        ctx.fail("ngram_indexes value {} is outside 0 to {}", indexes[ngram], int64_t{1} << 24);
      }
      p.ngrams[k].emplace(std::vector<int64_t>(pool.begin() + i, pool.begin() + i + n), indexes[ngram]);
    }
  }
  if (ngram != indexes.size()) {
    ctx.fail("ngram_indexes has {} values, the pool holds {} n-grams", indexes.size(), ngram);
  }
  p.outputs = indexes.empty() ? 0 : *std::max_element(indexes.begin(), indexes.end()) + 1;
  if (!p.weights.empty() && static_cast<int64_t>(p.weights.size()) < p.outputs) {
    ctx.fail("attribute 'weights' has {} values, expected one per output column ({})", p.weights.size(), p.outputs);
  }
  p.rows = shape.size() == 2 ? shape[0] : 1;
  p.columns = shape.empty() ? 1 : shape.back();
  PreparedOp op;
  op.outputs = {
      TensorInfo{DataType::float32,
                 shape.size() == 2 ? std::vector<int64_t>{p.rows, p.outputs} : std::vector<int64_t>{p.outputs}}};
  (void)element_count(op.outputs[0].shape);
  const DataType dtype = ctx.input(0).dtype;
  op.kernel = [p = std::move(p), dtype](KernelContext& k) {
    float* y = k.output(0).data<float>();
    k.pool.parallel_for(p.rows, 1, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        if (dtype == DataType::int32) {
          tfidf_row(p, k.input(0).data<int32_t>() + r * p.columns, y + r * p.outputs);
        } else {
          tfidf_row(p, k.input(0).data<int64_t>() + r * p.columns, y + r * p.outputs);
        }
      }
    });
  };
  return op;
}

const OpRegistrar tfidf_vectorizer_op{"TfIdfVectorizer", prepare_tfidf_vectorizer};

}  // namespace
}  // namespace rknnxx::host
