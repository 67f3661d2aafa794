#pragma once
// The one exception type of the host engine. Messages name the node, the operator and
// the tensor involved, and say what was expected and what was given.

#include <stdexcept>

namespace rknnxx::host {

class EngineError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// An EngineError whose message already starts with the node it is about (OpContext::fail, the
// planner); the planner names the node in any other error it sees while preparing one.
class NodeError : public EngineError {
public:
  using EngineError::EngineError;
};

}  // namespace rknnxx::host
