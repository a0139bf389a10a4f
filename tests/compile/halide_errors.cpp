// HalideErrors: captures halide_error() messages of the AOT-compiled models'
// Halide runtime (only for binaries that link one).
#include "model_data.h"

namespace batchconv::testing {

namespace {
void capture(void*, const char* msg) { HalideErrors::text() += msg; }
}  // namespace

std::string& HalideErrors::text() {
  static std::string s;
  return s;
}
HalideErrors::HalideErrors() {
  text().clear();
  halide_set_error_handler(capture);
}
HalideErrors::~HalideErrors() { halide_set_error_handler(nullptr); }

}  // namespace batchconv::testing
