// libFuzzer target: BATCHCONV_FUZZ_ENTRY names the entry (entries.h).
#include "entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  batchconv::fuzz::BATCHCONV_FUZZ_ENTRY(data, size);
  return 0;
}
