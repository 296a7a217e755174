// .npy files from outside: the header (magic, version, header length, the
// dict text) and the size checks before any read. A header that parses must
// load and mmap to the same bytes.
#include <cstring>

#include "foresight/storage/npy.h"
#include "fuzz_util.h"

using namespace foresight;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = fuzz::ScratchFile("input.npy");
  fuzz::WriteScratch(path, std::string_view(reinterpret_cast<const char*>(data), size));
  StatusOr<storage::NpyInfo> info = storage::ReadNpyHeader(path);
  fuzz::Report("ReadNpyHeader", info.status());
  fuzz::CheckNotInternal(info.status(), "ReadNpyHeader");
  StatusOr<Tensor> loaded = storage::LoadNpy(path);
  StatusOr<Tensor> mapped = storage::MmapNpy(path);
  fuzz::CheckNotInternal(loaded.status(), "LoadNpy");
  fuzz::CheckNotInternal(mapped.status(), "MmapNpy");
  fuzz::Check(info.ok() == loaded.ok() && info.ok() == mapped.ok(),
              "ReadNpyHeader, LoadNpy and MmapNpy disagree on whether the file is valid");
  if (!info.ok()) return 0;
  fuzz::Check(info->data_offset + info->data_bytes() == size, "a valid header's data does not end the file");
  fuzz::Check(loaded->nbytes() == info->data_bytes() && mapped->nbytes() == info->data_bytes(),
              "loaded/mapped byte counts differ from the header's");
  if (info->data_bytes() > 0) {
    fuzz::Check(std::memcmp(loaded->raw_data(), data + info->data_offset, info->data_bytes()) == 0,
                "LoadNpy bytes differ from the file");
    fuzz::Check(std::memcmp(mapped->raw_data(), data + info->data_offset, info->data_bytes()) == 0,
                "MmapNpy bytes differ from the file");
  }
  return 0;
}
