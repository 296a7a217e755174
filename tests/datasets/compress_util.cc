#include "compress_util.h"

#include <lzma.h>
#include <zlib.h>

#include <stdexcept>
#include <vector>

namespace foresight::datasets::testutil {

std::string Gzip(const std::string& data) {
  z_stream zs{};
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflateInit2");
  std::vector<char> out(deflateBound(&zs, data.size()) + 64);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  const size_t n = zs.total_out;
  deflateEnd(&zs);
  return std::string(out.data(), n);
}

std::string Xz(const std::string& data) {
  std::vector<uint8_t> out(lzma_stream_buffer_bound(data.size()));
  size_t pos = 0;
  if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, nullptr, reinterpret_cast<const uint8_t*>(data.data()),
                              data.size(), out.data(), &pos, out.size()) != LZMA_OK) {
    throw std::runtime_error("lzma_easy_buffer_encode");
  }
  return std::string(reinterpret_cast<char*>(out.data()), pos);
}

}  // namespace foresight::datasets::testutil
