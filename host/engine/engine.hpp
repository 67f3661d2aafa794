#pragma once
// The host engine: executes ONNX graphs on the CPU (float32 reference numerics).
//
//   auto model = rknnxx::host::onnx::read_model(bytes);        // or build a ModelProto by hand
//   rknnxx::host::Session session(model, {.threads = 4});
//   rknnxx::host::Tensor image(rknnxx::host::DataType::float32, {1, 3, 224, 224});
//   std::vector<rknnxx::host::Tensor> outputs = session.run(std::vector{std::move(image)});
//
// Pieces: Tensor (tensor.hpp), Graph (graph.hpp), Session and its memory plan (session.hpp),
// the operator registry for adding operators (op_registry.hpp), EngineError for every failure.

#include "engine_error.hpp"
#include "graph.hpp"
#include "session.hpp"
#include "tensor.hpp"
