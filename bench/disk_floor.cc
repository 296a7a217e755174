// Measures this machine's O_DIRECT read floors and the disk row store
// against them. Prints one JSON object.
//
//   build/bench/disk_floor [--file ./disk_floor.npy] [--mib 2048] [--seconds 2]
//                          [--batch 4096] [--io-depth 64]
//
// The file (a 2-D f32 .npy of 512-byte rows, random contents) is created
// once and reused while its size matches; keep it on the disk under test,
// not on tmpfs. Raw floors: random reads of 4 KiB and of 512 B (one row;
// refused where the file system's O_DIRECT alignment is larger) at queue
// depths 1, 8, 32, 64 on io_uring, and sequential 1 MiB reads at depth 8.
// Store: random 512-byte rows through RowStore::SubmitRead / Wait (two
// batches in flight) at --io-depth, with and without coalescing, for keys
// uniform over the file and keys clustered in an 8 MiB window per batch
// (the partition order's access shape).
#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "foresight/storage/npy.h"
#include "foresight/storage/row_store.h"

namespace {

using Clock = std::chrono::steady_clock;
using foresight::Status;
using foresight::storage::RowRequest;

constexpr int64_t kRowBytes = 512;
constexpr int64_t kRowWidth = kRowBytes / 4;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "disk_floor: %s\n", what.c_str());
  std::exit(1);
}

// Creates `path` as rows x 128 f32 of random bits unless it already exists
// with that shape.
void EnsureFile(const std::string& path, int64_t rows) {
  auto info = foresight::storage::ReadNpyHeader(path);
  if (info.ok() && info->shape == foresight::Shape{rows, kRowWidth}) return;
  std::fprintf(stderr, "disk_floor: writing %s (%lld MiB, once)\n", path.c_str(),
               static_cast<long long>(rows * kRowBytes >> 20));
  auto w = foresight::storage::NpyWriter::Create(path, foresight::DType::kF32, {kRowWidth});
  if (!w.ok()) Die(w.status().ToString());
  constexpr int64_t kChunkRows = 8192;
  std::vector<uint64_t> chunk(kChunkRows * kRowBytes / 8);
  std::mt19937_64 rng(1);
  for (int64_t done = 0; done < rows; done += kChunkRows) {
    for (uint64_t& x : chunk) x = rng();
    const int64_t n = std::min(kChunkRows, rows - done);
    Status s = (*w)->Append(chunk.data(), n);
    if (!s.ok()) Die(s.ToString());
  }
  Status s = (*w)->Finish();
  if (!s.ok()) Die(s.ToString());
}

struct Rate {
  bool ok = false;
  double ops_per_s = 0;
  double bytes_per_s = 0;
  std::string error;
};

// io_uring O_DIRECT reads of `size` bytes at depth `depth` for `seconds`:
// random `size`-aligned offsets, or sequential ones.
Rate RawReads(const std::string& path, uint64_t data_offset, uint64_t data_bytes, uint32_t size,
              int depth, bool sequential, double seconds) {
  Rate r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) {
    r.error = std::string("open O_DIRECT: ") + std::strerror(errno);
    return r;
  }
  io_uring ring;
  int e = io_uring_queue_init(depth, &ring, 0);
  if (e < 0) {
    ::close(fd);
    r.error = std::string("io_uring_queue_init: ") + std::strerror(-e);
    return r;
  }
  const size_t buf_align = 4096;
  char* pool = static_cast<char*>(std::aligned_alloc(buf_align, size_t(depth) * std::max<size_t>(size, buf_align)));
  const uint64_t first = (data_offset + size - 1) / size;        // first aligned slot in the data
  const uint64_t slots = (data_offset + data_bytes) / size - first;
  std::mt19937_64 rng(7);
  uint64_t next_seq = 0;
  auto next_offset = [&]() -> uint64_t {
    const uint64_t slot = sequential ? (next_seq++ % slots) : (rng() % slots);
    return (first + slot) * size;
  };
  auto queue = [&](int i) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    io_uring_prep_read(sqe, fd, pool + size_t(i) * std::max<size_t>(size, buf_align), size,
                       next_offset());
    io_uring_sqe_set_data64(sqe, i);
  };
  for (int i = 0; i < depth; ++i) queue(i);
  io_uring_submit(&ring);
  int in_flight = depth;
  int64_t done = 0;
  const auto t0 = Clock::now();
  double elapsed = 0;
  bool stop = false;
  while (in_flight > 0) {
    io_uring_cqe* cqe;
    e = io_uring_wait_cqe(&ring, &cqe);
    if (e == -EINTR) continue;
    if (e < 0) Die(std::string("io_uring_wait_cqe: ") + std::strerror(-e));
    const int res = cqe->res;
    const int i = static_cast<int>(io_uring_cqe_get_data64(cqe));
    io_uring_cqe_seen(&ring, cqe);
    --in_flight;
    if (res < 0 && r.error.empty()) r.error = std::string("read: ") + std::strerror(-res);
    if (!r.error.empty()) stop = true;
    if (stop) continue;  // reap the rest before the buffers go
    ++done;
    if ((done & 63) == 0 && (elapsed = Since(t0)) >= seconds) {
      stop = true;
      continue;
    }
    queue(i);
    io_uring_submit(&ring);
    ++in_flight;
  }
  io_uring_queue_exit(&ring);
  ::close(fd);
  std::free(pool);
  if (!r.error.empty()) return r;
  r.ok = true;
  r.ops_per_s = done / elapsed;
  r.bytes_per_s = r.ops_per_s * size;
  return r;
}

std::string RateJson(const Rate& r) {
  char buf[256];
  if (!r.ok) {
    std::snprintf(buf, sizeof(buf), "{\"error\": \"%s\"}", r.error.c_str());
  } else {
    std::snprintf(buf, sizeof(buf), "{\"iops\": %.0f, \"MBps\": %.1f}", r.ops_per_s,
                  r.bytes_per_s / 1e6);
  }
  return buf;
}

struct StoreRate {
  double rows_per_s = 0;
  double device_MBps = 0;
  double device_reads_per_row = 0;
  std::string backend;
};

StoreRate StoreReads(const std::string& path, int io_depth, int64_t coalesce, int batch,
                     bool clustered, int64_t rows, double seconds) {
  foresight::storage::RowStoreOptions o;
  o.kind = foresight::storage::RowStoreKind::kDisk;
  o.path = path;
  o.io_depth = io_depth;
  o.max_coalesce_bytes = coalesce;
  auto store = foresight::storage::OpenRowStore(o);
  if (!store.ok()) Die(store.status().ToString());
  auto& st = *store;
  constexpr int kInFlight = 2;
  std::vector<std::vector<char>> bufs(kInFlight, std::vector<char>(size_t(batch) * kRowBytes));
  std::vector<std::vector<RowRequest>> reqs(kInFlight, std::vector<RowRequest>(batch));
  std::mt19937_64 rng(11);
  const int64_t window = std::min<int64_t>(rows, (8 << 20) / kRowBytes);
  auto fill = [&](int b) {
    const int64_t base = clustered ? static_cast<int64_t>(rng() % (rows - window + 1)) : 0;
    const int64_t span = clustered ? window : rows;
    for (int i = 0; i < batch; ++i) {
      reqs[b][i] = {base + static_cast<int64_t>(rng() % span), bufs[b].data() + size_t(i) * kRowBytes};
    }
  };
  std::deque<std::pair<int, foresight::storage::IoTicket>> q;
  const auto t0 = Clock::now();
  for (int b = 0; b < kInFlight; ++b) {
    fill(b);
    auto t = st->SubmitRead(reqs[b], nullptr);
    if (!t.ok()) Die(t.status().ToString());
    q.push_back({b, *t});
  }
  int64_t done_rows = 0;
  double elapsed = 0;
  while (true) {
    auto [b, t] = q.front();
    q.pop_front();
    Status s = st->Wait(t);
    if (!s.ok()) Die(s.ToString());
    done_rows += batch;
    if ((elapsed = Since(t0)) >= seconds) break;
    fill(b);
    auto nt = st->SubmitRead(reqs[b], nullptr);
    if (!nt.ok()) Die(nt.status().ToString());
    q.push_back({b, *nt});
  }
  for (auto& [b, t] : q) st->Wait(t).IgnoreError();
  const auto stats = st->stats();
  StoreRate r;
  r.backend = st->backend();
  r.rows_per_s = done_rows / elapsed;
  r.device_MBps = stats.bytes_read / elapsed / 1e6;
  r.device_reads_per_row = double(stats.device_reads) / double(stats.read_requests);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = "./disk_floor.npy";
  int64_t mib = 2048;
  double seconds = 2.0;
  int batch = 4096;
  int io_depth = 64;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string f = argv[i];
    if (f == "--file") path = argv[i + 1];
    else if (f == "--mib") mib = std::atoll(argv[i + 1]);
    else if (f == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (f == "--batch") batch = std::atoi(argv[i + 1]);
    else if (f == "--io-depth") io_depth = std::atoi(argv[i + 1]);
    else Die("unknown flag " + f + " (flags: --file --mib --seconds --batch --io-depth)");
  }
  if (mib < 16 || batch < 1 || io_depth < 1) Die("need --mib >= 16, --batch >= 1, --io-depth >= 1");
  const int64_t rows = mib * (1 << 20) / kRowBytes;
  EnsureFile(path, rows);
  auto info = foresight::storage::ReadNpyHeader(path);
  if (!info.ok()) Die(info.status().ToString());

  std::string out = "{\"file\": \"" + path + "\", \"file_MiB\": " + std::to_string(mib) +
                    ", \"seconds_per_point\": " + std::to_string(seconds);
  double floor_4k_qd = 0;
  for (uint32_t size : {4096u, 512u}) {
    out += ", \"random_" + std::to_string(size) + "B\": {";
    bool first = true;
    for (int depth : {1, 8, 32, 64}) {
      const Rate r = RawReads(path, info->data_offset, info->data_bytes(), size, depth, false, seconds);
      if (size == 4096 && depth == io_depth && r.ok) floor_4k_qd = r.ops_per_s;
      out += (first ? "" : ", ") + std::string("\"qd") + std::to_string(depth) + "\": " + RateJson(r);
      first = false;
    }
    out += "}";
  }
  if (floor_4k_qd == 0) {
    const Rate r = RawReads(path, info->data_offset, info->data_bytes(), 4096, io_depth, false, seconds);
    floor_4k_qd = r.ops_per_s;
  }
  const Rate seq = RawReads(path, info->data_offset, info->data_bytes(), 1 << 20, 8, true, seconds);
  out += ", \"sequential_1MiB_qd8\": " + RateJson(seq);
  if (seq.ok) out += ", \"sequential_GBps\": " + std::to_string(seq.bytes_per_s / 1e9);

  char buf[512];
  for (bool clustered : {false, true}) {
    for (int64_t coalesce : {int64_t(256) << 10, int64_t(0)}) {
      const StoreRate s = StoreReads(path, io_depth, coalesce, batch, clustered, rows, seconds);
      std::snprintf(buf, sizeof(buf),
                    ", \"store_%s_%s\": {\"backend\": \"%s\", \"io_depth\": %d, \"batch\": %d, "
                    "\"rows_per_s\": %.0f, \"device_MBps\": %.1f, \"device_reads_per_row\": %.3f, "
                    "\"ratio_to_raw_4k_qd%d\": %.3f}",
                    clustered ? "clustered8MiB" : "uniform", coalesce ? "coalesce256K" : "nocoalesce",
                    s.backend.c_str(), io_depth, batch, s.rows_per_s, s.device_MBps,
                    s.device_reads_per_row, io_depth, s.rows_per_s / floor_4k_qd);
      out += buf;
    }
  }
  out += "}";
  std::printf("%s\n", out.c_str());
  return 0;
}
