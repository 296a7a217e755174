// A host-tensor Communicator over a device one (NCCL), for tests: every
// collective's host data goes to the device communicator's GPU, the device
// communicator runs on it, and the result comes back. So the host suite
// (communicator_test.cc) runs unchanged on the NCCL backend. Argument
// mistakes reach the device communicator as they are (a null pointer stays
// null, a short counts vector stays short), so its checks answer them.
#pragma once

#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "foresight/core/communicator.h"

namespace foresight::testing {

class DeviceMirrorCommunicator : public Communicator {
 public:
  explicit DeviceMirrorCommunicator(Communicator* device) : d_(device) {}

  int rank() const override { return d_->rank(); }
  int size() const override { return d_->size(); }
  const char* backend() const override { return d_->backend(); }

  Status StartAllReduceSum(void* data, int64_t n, SumType type, Pending* pending) override {
    Staged s;
    s.host = data;
    void* on_device = nullptr;
    if (data != nullptr && n > 0) {
      const int64_t bytes = n * (type == SumType::kF32 ? 4 : 8);
      FS_ASSIGN_OR_RETURN(s.device, Tensor::FromBlob(data, {bytes}, DType::kU8).To(d_->tensor_device()));
      on_device = s.device.raw_data();
    }
    FS_RETURN_IF_ERROR(d_->StartAllReduceSum(on_device, n, type, &s.pending));
    const int64_t id = next_++;
    staged_.emplace(id, std::move(s));
    *pending = Pending(id);
    return Status::OK();
  }

  Status Wait(Pending* pending) override {
    auto it = pending->valid() ? staged_.find(pending->id()) : staged_.end();
    if (it == staged_.end()) {
      Pending none;  // the device communicator's own refusal
      return d_->Wait(&none);
    }
    Staged s = std::move(it->second);
    staged_.erase(it);
    *pending = Pending();
    FS_RETURN_IF_ERROR(d_->Wait(&s.pending));
    if (s.device.defined()) {
      FS_ASSIGN_OR_RETURN(Tensor back, s.device.To(Device::Cpu()));
      std::memcpy(s.host, back.raw_data(), back.nbytes());
    }
    return Status::OK();
  }

  Status Progress() override { return d_->Progress(); }

  Status AllGather(const Tensor& send, Tensor* out) override {
    FS_ASSIGN_OR_RETURN(Tensor on_device, send.To(d_->tensor_device()));
    Tensor gathered;
    FS_RETURN_IF_ERROR(d_->AllGather(on_device, &gathered));
    FS_ASSIGN_OR_RETURN(*out, gathered.To(Device::Cpu()));
    return Status::OK();
  }

  Status AllToAllV(const Tensor& send, const std::vector<int64_t>& send_counts, Tensor* out,
                   std::vector<int64_t>* recv_counts) override {
    FS_ASSIGN_OR_RETURN(Tensor on_device, send.To(d_->tensor_device()));
    Tensor received;
    FS_RETURN_IF_ERROR(d_->AllToAllV(on_device, send_counts, &received, recv_counts));
    FS_ASSIGN_OR_RETURN(*out, received.To(Device::Cpu()));
    return Status::OK();
  }

  Status Broadcast(Tensor* data, int root) override {
    FS_ASSIGN_OR_RETURN(Tensor on_device, data->To(d_->tensor_device()));
    FS_RETURN_IF_ERROR(d_->Broadcast(&on_device, root));
    return data->CopyFrom(on_device);
  }

  Status Barrier() override { return d_->Barrier(); }

  [[noreturn]] void Abort(const std::string& message, int code) override {
    d_->Abort(message, code);
    std::_Exit(code);  // Abort does not return
  }

 private:
  struct Staged {
    void* host = nullptr;
    Tensor device;  // undefined for a null or empty span
    Pending pending;
  };
  Communicator* d_;
  std::unordered_map<int64_t, Staged> staged_;
  int64_t next_ = 0;
};

}  // namespace foresight::testing
