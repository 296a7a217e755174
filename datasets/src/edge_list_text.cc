#include "foresight/datasets/edge_list_text.h"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cstdio>
#include <memory>
#include <vector>

#include "foresight/core/mapped_pages.h"
#include "foresight/core/progress.h"
#include "foresight/storage/dataset.h"

namespace foresight::datasets {

namespace {

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A plain or gzip output file.
class TextSink {
 public:
  ~TextSink() { Close(); }
  Status Open(const std::string& path, bool gzip) {
    path_ = path;
    if (gzip) {
      gz_ = gzopen(path.c_str(), "wb1");
      if (gz_ == nullptr) return IoError("cannot create " + path + " (gzip)");
    } else {
      file_ = std::fopen(path.c_str(), "wb");
      if (file_ == nullptr) return ErrnoError("cannot create " + path, errno);
    }
    return Status::OK();
  }
  Status Write(const char* p, size_t n) {
    if (n == 0) return Status::OK();
    if (gz_ != nullptr) {
      if (gzwrite(gz_, p, static_cast<unsigned>(n)) != static_cast<int>(n)) {
        int err = 0;
        const char* msg = gzerror(gz_, &err);
        return IoError("writing " + path_ + ": " + (err == Z_ERRNO ? std::string(std::strerror(errno)) : msg));
      }
    } else if (std::fwrite(p, 1, n, file_) != n) {
      return ErrnoError("writing " + path_, errno);
    }
    return Status::OK();
  }
  // Flushes and closes; the first failure is returned.
  Status Close() {
    Status s;
    if (gz_ != nullptr) {
      if (gzclose(gz_) != Z_OK) s = IoError("closing " + path_ + " (gzip): the disk may be full");
      gz_ = nullptr;
    }
    if (file_ != nullptr) {
      if (std::fclose(file_) != 0) s = ErrnoError("closing " + path_, errno);
      file_ = nullptr;
    }
    return s;
  }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
  FILE* file_ = nullptr;
};

template <typename IdxT>
Status WriteRows(const storage::Dataset& d, TextSink* sink, Progress* progress) {
  const int64_t n = d.num_nodes();
  const int64_t* indptr = d.indptr().data<int64_t>();
  const IdxT* indices = d.indices().data<IdxT>();
  constexpr size_t kBuffer = size_t{1} << 20;
  std::vector<char> buf(kBuffer + 64);
  size_t used = 0;
  int64_t released = 0;  // indices before this were given back
  constexpr int64_t kReleaseEvery = int64_t{1} << 22;
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t e = indptr[v]; e < indptr[v + 1]; ++e) {
      char* p = buf.data() + used;
      char* end = buf.data() + buf.size();
      p = std::to_chars(p, end, static_cast<int64_t>(indices[e])).ptr;
      *p++ = ' ';
      p = std::to_chars(p, end, v).ptr;
      *p++ = '\n';
      used = static_cast<size_t>(p - buf.data());
      if (used >= kBuffer) {
        FS_RETURN_IF_ERROR(sink->Write(buf.data(), used));
        used = 0;
      }
    }
    const int64_t scanned = indptr[v + 1];
    if (scanned - released >= kReleaseEvery) {
      // The scan never returns to these rows: drop them from the RSS.
      ReleaseMappedPages(indices + released, static_cast<size_t>(scanned - released) * sizeof(IdxT));
      ReleaseMappedPages(indptr, static_cast<size_t>(v) * sizeof(int64_t));
      progress->Advance(scanned - released);
      released = scanned;
    }
  }
  progress->Advance(d.num_edges() - released);
  return sink->Write(buf.data(), used);
}

}  // namespace

Status WriteEdgeListText(const std::string& dataset_dir, const std::string& path, bool progress,
                         EdgeListTextReport* report) {
  FS_ASSIGN_OR_RETURN(std::unique_ptr<storage::Dataset> d, storage::Dataset::Open(dataset_dir));
  FS_RETURN_IF_ERROR(CheckReleasableMapping(d->indptr(), dataset_dir + "/indptr.npy"));
  FS_RETURN_IF_ERROR(CheckReleasableMapping(d->indices(), dataset_dir + "/indices.npy"));
  const std::string part = path + ".part";
  Status s;
  {
    TextSink sink;
    s = sink.Open(part, EndsWith(path, ".gz"));
    ProgressOptions po;
    po.quiet = !progress;
    po.unit = "edges";
    Progress bar("edge list " + path, d->num_edges(), po);
    if (s.ok()) {
      s = d->indices().dtype() == DType::kI32 ? WriteRows<int32_t>(*d, &sink, &bar)
                                               : WriteRows<int64_t>(*d, &sink, &bar);
    }
    const Status closed = sink.Close();
    if (s.ok()) s = closed;
    if (s.ok()) bar.Finish("wrote " + path);
  }
  if (s.ok() && std::rename(part.c_str(), path.c_str()) != 0) s = ErrnoError("rename " + part + " to " + path, errno);
  if (!s.ok()) {
    std::remove(part.c_str());
    return s;
  }
  if (report != nullptr) {
    report->edges = d->num_edges();
    struct stat st;
    report->bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  }
  return Status::OK();
}

}  // namespace foresight::datasets
