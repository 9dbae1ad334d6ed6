// Runs `fn` and returns the InputError it throws; a test failure if it throws none.
#pragma once

#include <gtest/gtest.h>

#include "core/input_error.h"

namespace fleetsim::testing {

template <typename Fn>
InputError CatchInputError(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("", 0, "", "(no error)");
}

inline bool Mentions(const InputError& e, const std::string& text) {
  return std::string(e.what()).find(text) != std::string::npos;
}

}  // namespace fleetsim::testing
