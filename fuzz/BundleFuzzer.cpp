// The bundle parser (tpu::parseBundle, what tpusim and tpu-objdump read):
// any bytes either parse or are rejected with tpu::Error; a bundle it accepts
// serializes to bytes that parse back to the same bundle.
#include "FuzzHarness.h"

#include "tpu/isa/Bundle.h"
#include "tpu/isa/LittleEndian.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  // Nearly every mutation breaks the checksum; correct it so that the fuzzer
  // reaches the sections behind it (the unit tests cover the check itself).
  if (bytes.size() >= tpu::kBundleCrcCoverageStart)
    tpu::writeLittleEndian(bytes.data() + tpu::kBundleCrcOffset, 4,
                           tpu::crc32(bytes.data() + tpu::kBundleCrcCoverageStart,
                                      bytes.size() - tpu::kBundleCrcCoverageStart));
  tpu::fuzz::rejectOnlyWithError([&] {
    std::vector<uint8_t> serialized = tpu::serializeBundle(tpu::parseBundle(bytes));
    tpu::fuzz::expect(tpu::serializeBundle(tpu::parseBundle(serialized)) == serialized,
                      "serializeBundle(parseBundle(serialized)) == serialized");
  });
  return 0;
}
