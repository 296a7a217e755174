// The staging directories of DatasetWriter: "<out>.tmp-<pid>-<8 hex>" beside
// the output. Each holds a marker file, kStagingMarker, that
//  - names the directory it stages, and Dataset::Open refuses a directory
//    whose marker names it: a staging dir is never a dataset, even after a
//    kill that came once its manifest was written. Renaming it to the
//    output is the commit (atomic) and is also what makes it openable; the
//    marker is deleted after that, and one left behind by a kill in between
//    names another directory, so it is ignored;
//  - is locked (flock) by the writing process for its whole life. The
//    kernel drops the lock when the process dies, however it dies, so a
//    later run tells a stale directory (marker written, lock free) from one
//    being written, without trusting pids that the system reuses.
#pragma once

#include <string>

#include "file_util.h"

namespace foresight::storage::internal {

inline constexpr char kStagingMarker[] = ".foresight-staging.json";

// A fresh staging path for `out_dir` (a clean path):
// "<out_dir>.tmp-<pid>-<8 hex>".
std::string NewStagingPath(const std::string& out_dir);

// Writes `dir`'s marker saying it is the staging directory `staged_as` (a
// path whose last component names it) of `out_dir`, and keeps it locked
// through *lock. The contents are written only once the lock is held, so a
// marker with contents and no lock means its writer has died. An existing
// marker is overwritten; FailedPrecondition when another process holds its
// lock (another run is replacing the same output). Where the file system
// refuses locks, a warning says that later runs cannot remove the
// directory if this one dies.
Status WriteStagingMarker(const std::string& dir, const std::string& staged_as, const std::string& out_dir,
                          ScopedFd* lock);
// Rewrites the contents of the marker `path` held open (and locked) by `fd`.
Status RewriteStagingMarker(int fd, const std::string& path, const std::string& staged_as,
                            const std::string& out_dir);
// Deletes `dir`'s marker (after a commit); a failure is logged, not
// returned: the dataset is committed either way and the marker, naming
// another directory, is ignored.
void RemoveStagingMarker(const std::string& dir);

// Removes staging directory `dir`: its manifest.json first and its marker
// last, so that no moment of the removal (a kill may land in it) leaves a
// directory that opens as a dataset. `lock` (the open marker, when the
// caller holds it) is closed just before the marker goes: NFS keeps a
// deleted file that is still open as a ".nfs*" entry, which would keep the
// directory from being removed.
Status RemoveStagingDir(const std::string& dir, ScopedFd* lock = nullptr);

// Removes the staging directories that earlier runs writing `out_dir` left
// behind: siblings named "<base>.tmp-<pid>-<8 hex>" whose marker is
// unlocked, or, without a complete marker (a kill right after the mkdir),
// whose pid is not running. A directory in use, or written on another host,
// is kept. Also "<base>.old-<pid>-<8 hex>" directories, the old datasets
// that replaces before the staging markers moved aside and a kill left:
// removed when their pid is not running and the output is a dataset again,
// kept (with a warning saying how to restore it) while the output is
// missing. Each removal is logged (warning); failures are logged, never
// fatal.
void RemoveStaleStaging(const std::string& out_dir);

}  // namespace foresight::storage::internal
