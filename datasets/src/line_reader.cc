// Plain / gzip (zlib) / xz (liblzma) byte sources, picked by magic bytes,
// and the line splitter on top of them.
#include "foresight/datasets/line_reader.h"

#include <fcntl.h>
#include <lzma.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace foresight::datasets {
namespace {

constexpr size_t kInBuffer = size_t{1} << 18;
constexpr size_t kLineBuffer = size_t{1} << 20;
constexpr size_t kFirstLineBuffer = size_t{64} << 10;

// Reads raw bytes from an fd, retrying EINTR.
StatusOr<size_t> ReadFd(int fd, char* buf, size_t n, const std::string& path) {
  while (true) {
    const ssize_t r = read(fd, buf, n);
    if (r >= 0) return static_cast<size_t>(r);
    if (errno != EINTR) return ErrnoError("read(" + path + ")", errno);
  }
}

class FdHolder {
 public:
  explicit FdHolder(int fd) : fd_(fd) {}
  ~FdHolder() { if (fd_ >= 0) close(fd_); }
  int fd() const { return fd_; }
 private:
  int fd_;
};

class PlainReader : public ByteReader {
 public:
  PlainReader(std::string path, int fd, std::string prefix)
      : ByteReader(std::move(path), Compression::kNone), fd_(fd), prefix_(std::move(prefix)) {}
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (prefix_pos_ < prefix_.size()) {
      const size_t k = std::min(n, prefix_.size() - prefix_pos_);
      memcpy(buf, prefix_.data() + prefix_pos_, k);
      prefix_pos_ += k;
      return k;
    }
    return ReadFd(fd_.fd(), buf, n, path_);
  }
 private:
  FdHolder fd_;
  std::string prefix_;  // the magic bytes already read
  size_t prefix_pos_ = 0;
};

class GzipReader : public ByteReader {
 public:
  GzipReader(std::string path, int fd, std::string prefix)
      : ByteReader(std::move(path), Compression::kGzip), fd_(fd), in_(kInBuffer) {
    memcpy(in_.data(), prefix.data(), prefix.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(prefix.size());
  }
  ~GzipReader() override { if (init_) inflateEnd(&zs_); }
  Status Init() {
    // 15 + 16: gzip wrapper only. Concatenated members are handled in Read.
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) return Internal("inflateInit2 failed for " + path_);
    init_ = true;
    return Status::OK();
  }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (done_) return size_t{0};
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !in_eof_) {
        FS_ASSIGN_OR_RETURN(size_t got, ReadFd(fd_.fd(), in_.data(), in_.size(), path_));
        if (got == 0) in_eof_ = true;
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(got);
      }
      if (zs_.avail_in == 0 && in_eof_) {
        if (!member_done_) {
          return DataLoss(path_ + ": truncated (unexpected end of gzip stream)");
        }
        done_ = true;
        break;
      }
      if (member_done_) {
        // Another gzip member follows (gzip files may be concatenated).
        if (inflateReset(&zs_) != Z_OK) return Internal("inflateReset failed for " + path_);
        member_done_ = false;
      }
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else if (rc == Z_BUF_ERROR) {
        continue;  // needs more input; loop refills or reports truncation
      } else if (rc != Z_OK) {
        return DataLoss(path_ + ": corrupt gzip data (" + (zs_.msg ? zs_.msg : "inflate error " + std::to_string(rc)) + ")");
      }
    }
    return static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - buf);
  }
 private:
  FdHolder fd_;
  std::vector<char> in_;
  z_stream zs_{};
  bool init_ = false;
  bool in_eof_ = false;
  bool member_done_ = false;
  bool done_ = false;
};

class XzReader : public ByteReader {
 public:
  XzReader(std::string path, int fd, std::string prefix)
      : ByteReader(std::move(path), Compression::kXz), fd_(fd), in_(kInBuffer) {
    memcpy(in_.data(), prefix.data(), prefix.size());
    xs_.next_in = reinterpret_cast<const uint8_t*>(in_.data());
    xs_.avail_in = prefix.size();
  }
  ~XzReader() override { lzma_end(&xs_); }
  Status Init() {
    const lzma_ret rc = lzma_stream_decoder(&xs_, UINT64_MAX, LZMA_CONCATENATED);
    if (rc != LZMA_OK) return Internal("lzma_stream_decoder failed for " + path_);
    return Status::OK();
  }
  StatusOr<size_t> Read(char* buf, size_t n) override {
    if (done_) return size_t{0};
    xs_.next_out = reinterpret_cast<uint8_t*>(buf);
    xs_.avail_out = n;
    while (xs_.avail_out > 0) {
      lzma_action action = LZMA_RUN;
      if (xs_.avail_in == 0 && !in_eof_) {
        FS_ASSIGN_OR_RETURN(size_t got, ReadFd(fd_.fd(), in_.data(), in_.size(), path_));
        if (got == 0) in_eof_ = true;
        xs_.next_in = reinterpret_cast<const uint8_t*>(in_.data());
        xs_.avail_in = got;
      }
      if (in_eof_) action = LZMA_FINISH;
      const lzma_ret rc = lzma_code(&xs_, action);
      if (rc == LZMA_STREAM_END) {
        done_ = true;
        break;
      }
      if (rc == LZMA_OK) continue;
      if (rc == LZMA_BUF_ERROR) return DataLoss(path_ + ": truncated (unexpected end of xz stream)");
      if (rc == LZMA_DATA_ERROR && in_eof_ && xs_.avail_in == 0) {
        return DataLoss(path_ + ": truncated (unexpected end of xz stream)");
      }
      if (rc == LZMA_MEM_ERROR) return ResourceExhausted(path_ + ": out of memory decoding xz");
      return DataLoss(path_ + ": corrupt xz data (lzma error " + std::to_string(static_cast<int>(rc)) + ")");
    }
    return static_cast<size_t>(reinterpret_cast<char*>(xs_.next_out) - buf);
  }
 private:
  FdHolder fd_;
  std::vector<char> in_;
  lzma_stream xs_ = LZMA_STREAM_INIT;
  bool in_eof_ = false;
  bool done_ = false;
};

}  // namespace

const char* CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone: return "none";
    case Compression::kGzip: return "gzip";
    case Compression::kXz: return "xz";
  }
  return "?";
}

StatusOr<std::unique_ptr<ByteReader>> ByteReader::Open(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound(path + ": no such file");
    return ErrnoError("open(" + path + ")", err);
  }
  // Read up to 6 magic bytes; they are replayed to the chosen decoder.
  std::string magic(6, '\0');
  size_t have = 0;
  while (have < magic.size()) {
    auto r = ReadFd(fd, magic.data() + have, magic.size() - have, path);
    if (!r.ok()) {
      close(fd);
      return r.status();
    }
    if (*r == 0) break;
    have += *r;
  }
  magic.resize(have);
  static const char kXzMagic[6] = {'\xFD', '7', 'z', 'X', 'Z', '\0'};
  if (have >= 2 && magic[0] == '\x1f' && magic[1] == '\x8b') {
    auto r = std::make_unique<GzipReader>(path, fd, magic);
    FS_RETURN_IF_ERROR(r->Init());
    return std::unique_ptr<ByteReader>(std::move(r));
  }
  if (have == 6 && memcmp(magic.data(), kXzMagic, 6) == 0) {
    auto r = std::make_unique<XzReader>(path, fd, magic);
    FS_RETURN_IF_ERROR(r->Init());
    return std::unique_ptr<ByteReader>(std::move(r));
  }
  return std::unique_ptr<ByteReader>(std::make_unique<PlainReader>(path, fd, magic));
}

LineReader::LineReader(std::unique_ptr<ByteReader> bytes) : bytes_(std::move(bytes)) {}

StatusOr<std::unique_ptr<LineReader>> LineReader::Open(const std::string& path) {
  FS_ASSIGN_OR_RETURN(auto bytes, ByteReader::Open(path));
  return std::unique_ptr<LineReader>(new LineReader(std::move(bytes)));
}

bool LineReader::Fill() {
  // The buffer grows to kLineBuffer only while reads fill it: zeroing 1 MiB
  // for each small file was most of the time of a small preprocess.
  if (buf_.size() < kLineBuffer && end_ == buf_.size()) {
    buf_.resize(std::min(kLineBuffer, std::max(kFirstLineBuffer, 2 * buf_.size())));
  }
  begin_ = 0;
  end_ = 0;
  while (end_ == 0) {
    auto r = bytes_->Read(buf_.data(), buf_.size());
    if (!r.ok()) {
      status_ = r.status();
      return false;
    }
    if (*r == 0) {
      eof_ = true;
      return false;
    }
    end_ = *r;
  }
  return true;
}

bool LineReader::Next(std::string_view* line) {
  if (!status_.ok()) return false;
  carry_.clear();
  bool carrying = false;
  while (true) {
    if (begin_ == end_) {
      if (eof_ || !Fill()) {
        if (!status_.ok()) return false;
        if (!carrying) return false;  // clean end of file
        break;                        // last line without '\n'
      }
    }
    const char* start = buf_.data() + begin_;
    const void* nl = memchr(start, '\n', end_ - begin_);
    if (nl != nullptr) {
      const size_t len = static_cast<const char*>(nl) - start;
      begin_ += len + 1;
      if (!carrying) {
        *line = std::string_view(start, len);
        if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
        ++line_number_;
        return true;
      }
      carry_.append(start, len);
      break;
    }
    carry_.append(start, end_ - begin_);
    carrying = true;
    begin_ = end_;
  }
  *line = carry_;
  if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
  ++line_number_;
  return true;
}

std::string LineReader::Where() const { return path() + ":" + std::to_string(line_number_) + ": "; }

Status LineReader::Error(const std::string& reason) const { return InvalidArgument(Where() + reason); }

}  // namespace foresight::datasets
