// Einsum on float32 (and the integer types): any number of operands, explicit ("ij,jk->ik") or
// implicit output, repeated letters within a term (diagonals), and "..." for broadcast leading
// dimensions. Each output element sums the product of the operands over the letters that do
// not appear in the output; a letter of size 1 in one operand broadcasts.

#include "../op_registry.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <type_traits>

namespace rknnxx::host {
namespace {

struct EinsumPlan {
  std::vector<int64_t> output_shape;
  std::vector<int64_t> sum_dims;                  // sizes of the contracted letters
  std::vector<std::vector<int64_t>> out_strides;  // per operand, per output letter (0 when broadcast)
  std::vector<std::vector<int64_t>> sum_strides;  // per operand, per contracted letter
};

std::string trim_spaces(std::string s) {
  s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
  return s;
}

EinsumPlan plan_einsum(const OpContext& ctx) {
  const std::string equation = trim_spaces(ctx.attr_string("equation", ""));
  const auto arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.input_count()) {
    ctx.fail("equation '{}' has {} operands, the node {} inputs", equation, terms.size(), ctx.input_count());
  }
  // "..." becomes the letters '0', '1', ... for the broadcast dimensions, aligned from the right.
  std::size_t ellipsis_rank = 0;
  std::vector<std::string> expanded;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto rank = ctx.input(i).shape.size();
    std::string t = terms[i];
    const auto dots = t.find("...");
    const std::size_t letters = t.size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos ? letters != rank : letters > rank) {
      ctx.fail("term '{}' of equation '{}' does not fit input {} of shape {}", terms[i], equation, i,
               shape_string(ctx.input(i).shape));
    }
    if (dots != std::string::npos) {
      const std::size_t n = rank - letters;
      ellipsis_rank = std::max(ellipsis_rank, n);
      std::string fill;
      for (std::size_t j = 0; j < n; ++j) fill.push_back(static_cast<char>('0' + (10 - n + j)));
      t.replace(dots, 3, fill);
    }
    for (char c : t) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) {
        ctx.fail("equation '{}' has the character '{}'", equation, c);
      }
    }
    expanded.push_back(t);
  }
  if (ellipsis_rank > 10) {
    ctx.fail("equation '{}': '...' stands for more than 10 dimensions", equation);
  }
  std::string ellipsis;
  for (std::size_t j = 0; j < ellipsis_rank; ++j) ellipsis.push_back(static_cast<char>('0' + (10 - ellipsis_rank + j)));
  std::string output;
  if (arrow != std::string::npos) {
    output = equation.substr(arrow + 2);
    if (const auto dots = output.find("..."); dots != std::string::npos) {
      output.replace(dots, 3, ellipsis);
    }
  } else {
    std::map<char, int> counts;
    for (const auto& t : expanded) {
      for (char c : t) {
        if (std::isalpha(static_cast<unsigned char>(c))) ++counts[c];
      }
    }
    output = ellipsis;
    for (const auto& [c, n] : counts) {
      if (n == 1) output.push_back(c);
    }
  }
  std::map<char, int64_t> sizes;
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    for (std::size_t a = 0; a < expanded[i].size(); ++a) {
      const char c = expanded[i][a];
      const int64_t d = ctx.input(i).shape[a];
      auto [it, fresh] = sizes.emplace(c, d);
      if (!fresh && it->second != d) {
        if (it->second == 1) {
          it->second = d;
        } else if (d != 1) {
          ctx.fail("letter '{}' of equation '{}' has sizes {} and {}", c, equation, it->second, d);
        }
      }
    }
  }
  std::string contracted;
  for (const auto& [c, d] : sizes) {
    if (output.find(c) == std::string::npos) contracted.push_back(c);
  }
  EinsumPlan plan;
  for (char c : output) {
    if (!sizes.contains(c)) {
      ctx.fail("output letter '{}' of equation '{}' is in no operand", c, equation);
    }
    plan.output_shape.push_back(sizes[c]);
  }
  for (char c : contracted) plan.sum_dims.push_back(sizes[c]);
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    const auto& shape = ctx.input(i).shape;
    std::map<char, int64_t> stride;  // a repeated letter adds its strides: the diagonal
    int64_t s = 1;
    for (std::size_t a = shape.size(); a-- > 0;) {
      if (shape[a] != 1) stride[expanded[i][a]] += s;
      s *= shape[a];
    }
    std::vector<int64_t> os;
    std::vector<int64_t> ss;
    for (char c : output) os.push_back(stride[c]);
    for (char c : contracted) ss.push_back(stride[c]);
    plan.out_strides.push_back(std::move(os));
    plan.sum_strides.push_back(std::move(ss));
  }
  return plan;
}

PreparedOp prepare_einsum(OpContext& ctx) {
  if (ctx.input_count() == 0) {
    ctx.fail("expected at least one input");
  }
  const DataType dtype = ctx.input(0).dtype;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    ctx.expect_dtype(i, {DataType::float32, DataType::float64, DataType::int32, DataType::int64});
    ctx.expect_dtype(i, {dtype});
  }
  EinsumPlan plan = plan_einsum(ctx);
  PreparedOp op;
  op.outputs = {TensorInfo{dtype, plan.output_shape}};
  op.kernel = [plan = std::move(plan), dtype](KernelContext& k) {
    visit_dtype(dtype, [&]<class T>() {
      if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
        // Integers wrap on overflow (in unsigned arithmetic) instead of being undefined.
        using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<double>,
                                                std::make_unsigned<T>>::type;
        const std::size_t operands = plan.out_strides.size();
        std::vector<const T*> in;
        for (std::size_t i = 0; i < operands; ++i) in.push_back(k.input(i).data<T>());
        T* out = k.output(0).data<T>();
        const int64_t total = element_count(plan.output_shape);
        const int64_t inner = element_count(plan.sum_dims);
        k.pool.parallel_for(total, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)),
                            [&](int64_t begin, int64_t end) {
                              std::vector<int64_t> base(operands);
                              std::vector<int64_t> offset(operands);
                              std::vector<int64_t> index(plan.sum_dims.size());
                              for (int64_t o = begin; o < end; ++o) {
                                std::fill(base.begin(), base.end(), 0);
                                int64_t rest = o;
                                for (std::size_t a = plan.output_shape.size(); a-- > 0;) {
                                  const int64_t i = rest % plan.output_shape[a];
                                  rest /= plan.output_shape[a];
                                  for (std::size_t n = 0; n < operands; ++n) base[n] += i * plan.out_strides[n][a];
                                }
                                Acc sum{0};
                                std::fill(index.begin(), index.end(), 0);
                                offset = base;
                                for (int64_t s = 0; s < inner; ++s) {
                                  Acc product{1};
                                  for (std::size_t n = 0; n < operands; ++n)
                                    product *= static_cast<Acc>(in[n][offset[n]]);
                                  sum += product;
                                  // Next contracted index, odometer style.
                                  for (std::size_t a = index.size(); a-- > 0;) {
                                    for (std::size_t n = 0; n < operands; ++n) offset[n] += plan.sum_strides[n][a];
                                    if (++index[a] < plan.sum_dims[a]) break;
                                    for (std::size_t n = 0; n < operands; ++n) {
                                      offset[n] -= plan.sum_strides[n][a] * plan.sum_dims[a];
                                    }
                                    index[a] = 0;
                                  }
                                }
                                out[o] = static_cast<T>(sum);
                              }
                            });
      }
    });
  };
  return op;
}

const OpRegistrar einsum_op{"Einsum", prepare_einsum};

}  // namespace
}  // namespace rknnxx::host
