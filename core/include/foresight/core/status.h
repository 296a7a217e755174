// Status and StatusOr: how every fallible call in foresight reports failure.
// A Status carries a code and a message that names the file, row or call and
// what was expected; success is cheap (no allocation).
#pragma once

#include <cassert>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace foresight {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,   // the caller's input is wrong (bad flag, bad shape)
  kNotFound,          // a file, key or dataset does not exist
  kAlreadyExists,
  kOutOfRange,        // an id or index beyond its bound
  kDataLoss,          // a file is truncated or corrupted
  kIoError,           // a system call failed; the message carries errno text
  kResourceExhausted, // out of memory, disk full, budget exceeded
  kUnimplemented,     // a combination (device, dtype) that is not supported
  kFailedPrecondition,
  kInternal,          // a broken invariant inside foresight
  kCancelled,
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  const std::string& message() const;
  // "InvalidArgument: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>" (for adding the
  // file or stage that a lower-level error happened in).
  Status WithContext(const std::string& context) const;

  void IgnoreError() const {}

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const State> state_;
};

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status AlreadyExists(std::string message);
Status OutOfRange(std::string message);
Status DataLoss(std::string message);
Status IoError(std::string message);
Status ResourceExhausted(std::string message);
Status Unimplemented(std::string message);
Status FailedPrecondition(std::string message);
Status Internal(std::string message);
Status Cancelled(std::string message);
// An I/O error for `what` (a call and a path) with strerror(errnum) appended.
Status ErrnoError(const std::string& what, int errnum);

// StatusOr<T>: either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit
    assert(!status_.ok() && "StatusOr built from an OK Status");
    if (status_.ok()) status_ = Internal("StatusOr constructed from OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }

  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace foresight

#define FS_CONCAT_INNER_(a, b) a##b
#define FS_CONCAT_(a, b) FS_CONCAT_INNER_(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define FS_RETURN_IF_ERROR(expr)                          \
  do {                                                    \
    ::foresight::Status fs_status_ = (expr);              \
    if (!fs_status_.ok()) return fs_status_;              \
  } while (0)

// FS_ASSIGN_OR_RETURN(auto x, Foo()); declares/assigns from a StatusOr.
#define FS_ASSIGN_OR_RETURN(lhs, expr) \
  FS_ASSIGN_OR_RETURN_IMPL_(FS_CONCAT_(fs_statusor_, __LINE__), lhs, expr)
#define FS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
