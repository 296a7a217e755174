#include "disk_space.h"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <vector>


namespace foresight::datasets::internal {

namespace {

constexpr size_t kSampleBytes = size_t{4} << 20;

int64_t CountLines(const char* p, size_t n) { return std::count(p, p + n, '\n'); }

}  // namespace

std::string FormatDiskBytes(int64_t bytes) {
  char buf[32];
  const double b = static_cast<double>(bytes);
  if (bytes >= 1000000000) std::snprintf(buf, sizeof(buf), "%.1f GB", b / 1e9);
  else if (bytes >= 1000000) std::snprintf(buf, sizeof(buf), "%.1f MB", b / 1e6);
  else std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(bytes));
  return buf;
}

StatusOr<int64_t> EstimateEdgeCount(const std::string& path, int pair_bytes) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoError("stat " + path, errno);
  const int64_t size = static_cast<int64_t>(st.st_size);
  if (pair_bytes > 0) return size / pair_bytes;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return ErrnoError("open " + path, errno);
  std::vector<char> in(kSampleBytes);
  const size_t got = std::fread(in.data(), 1, in.size(), f);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) return IoError("reading " + path + " to estimate its edges");
  if (got == 0) return int64_t{0};
  const auto* u = reinterpret_cast<const unsigned char*>(in.data());
  if (got >= 6 && u[0] == 0xFD && u[1] == '7' && u[2] == 'z' && u[3] == 'X' && u[4] == 'Z') {
    return Unimplemented(path + ": the edge count of an xz file is not estimated before reading it");
  }
  if (got < 2 || u[0] != 0x1f || u[1] != 0x8b) {
    // Plain text: lines per byte of the sample, times the file.
    const int64_t lines = std::max<int64_t>(1, CountLines(in.data(), got));
    return static_cast<int64_t>(static_cast<double>(size) * static_cast<double>(lines) / static_cast<double>(got));
  }
  // gzip: inflate the sample's compressed bytes, count the lines they hold.
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) return Internal("zlib inflateInit2 failed for " + path);
  std::vector<char> out(kSampleBytes);
  int64_t lines = 0;
  z.next_in = reinterpret_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(got);
  int rc = Z_OK;
  while (z.avail_in > 0 && rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    rc = inflate(&z, Z_NO_FLUSH);
    lines += CountLines(out.data(), out.size() - z.avail_out);
    if (rc == Z_BUF_ERROR) rc = Z_OK;  // output full: go on
  }
  const int64_t consumed = static_cast<int64_t>(got - z.avail_in);
  inflateEnd(&z);
  if (rc != Z_OK && rc != Z_STREAM_END) return DataLoss(path + ": corrupt gzip data in its first bytes");
  if (consumed == 0) return int64_t{0};
  if (rc == Z_STREAM_END && got < kSampleBytes) return lines;  // the whole file
  return static_cast<int64_t>(static_cast<double>(size) * static_cast<double>(lines) / static_cast<double>(consumed));
}

StatusOr<int64_t> FreeDiskBytes(const std::string& dir) {
  struct statvfs v;
  if (::statvfs(dir.c_str(), &v) != 0) return ErrnoError("statvfs " + dir, errno);
  return static_cast<int64_t>(v.f_bavail) * static_cast<int64_t>(v.f_frsize);
}

Status CheckDiskSpace(const std::vector<DiskNeed>& needs,
                      const std::function<StatusOr<int64_t>(const std::string&)>& free_bytes) {
  // Folders on one filesystem share its free space.
  std::map<uint64_t, std::vector<const DiskNeed*>> by_device;
  for (const DiskNeed& n : needs) {
    struct stat st;
    if (::stat(n.dir.c_str(), &st) != 0) return ErrnoError("stat " + n.dir + " (for " + n.what + ")", errno);
    by_device[static_cast<uint64_t>(st.st_dev)].push_back(&n);
  }
  for (const auto& [device, group] : by_device) {
    int64_t need = 0;
    std::string parts;
    for (const DiskNeed* n : group) {
      need += n->bytes;
      parts += (parts.empty() ? "" : " + ") + n->what + " " + FormatDiskBytes(n->bytes) + " in " + n->dir;
    }
    FS_ASSIGN_OR_RETURN(int64_t avail, free_bytes(group.front()->dir));
    if (need > avail) {
      return ResourceExhausted("not enough disk space: this run needs about " + FormatDiskBytes(need) + " (" +
                               parts + ") but the filesystem of " + group.front()->dir + " has " +
                               FormatDiskBytes(avail) + " free; free space there, or put --temp-dir (the "
                               "spilled runs) on another disk");
    }
  }
  return Status::OK();
}

}  // namespace foresight::datasets::internal
