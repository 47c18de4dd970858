// Rank 0 of a two-rank world whose rank 1 is played by the test, for checking a started halo
// exchange in one process: a started all-to-all-v fills the receive buffer with NaN (a transfer
// under way may leave anything there), and finish() checks that the send buffer still holds what
// it held at the start, keeps rank 0's message to rank 1 and delivers rank 1's scripted message.
// Buffers live on the device given (host or GPU); the copies run in halo's stream order.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/tensor.hpp"
#include "train/dist/communicator.hpp"

namespace halo::test {

class ScriptedPeer : public train::dist::Communicator {
 public:
  explicit ScriptedPeer(kernels::Device device = kernels::Device::cpu()) : device_(device) {}

  int rank() const override { return 0; }
  int size() const override { return 2; }
  kernels::Device device() const override { return device_; }
  void all_reduce(void*, std::int64_t, train::dist::DataType) override { FAIL("unexpected all_reduce"); }
  void broadcast(void*, std::int64_t, train::dist::DataType, int) override { FAIL("unexpected broadcast"); }
  void barrier() override {}
  void all_to_all_v(const void* send, const std::vector<std::int64_t>& send_counts, void* recv,
                    const std::vector<std::int64_t>& recv_counts, train::dist::DataType type) override {
    start_all_to_all_v(send, send_counts, recv, recv_counts, type)->finish();
  }

  std::unique_ptr<train::dist::PendingAllToAll> start_all_to_all_v(const void* send,
                                                                   const std::vector<std::int64_t>& send_counts,
                                                                   void* recv,
                                                                   const std::vector<std::int64_t>& recv_counts,
                                                                   train::dist::DataType type) override {
    REQUIRE(type == train::dist::DataType::float32);
    REQUIRE(send_counts.size() == 2);
    REQUIRE(recv_counts.size() == 2);
    REQUIRE(send_counts[0] == recv_counts[0]);
    REQUIRE(recv_counts[1] == static_cast<std::int64_t>(from_peer.size()));
    ++started;
    return std::make_unique<Pending>(*this, static_cast<const float*>(send), send_counts,
                                     static_cast<float*>(recv), recv_counts);
  }

  // What rank 1 sends in the next exchange (as many floats as rank 0 expects from it).
  std::vector<float> from_peer;
  // Rank 0's message to rank 1 in the last exchange finished.
  std::vector<float> to_peer;
  // Cleared when an exchange's send buffer changed between its start and its finish.
  bool send_unchanged = true;
  int started = 0;
  int finished = 0;

 private:
  class Pending : public train::dist::PendingAllToAll {
   public:
    Pending(ScriptedPeer& peer, const float* send, std::vector<std::int64_t> send_counts, float* recv,
            std::vector<std::int64_t> recv_counts)
        : peer_(peer), send_(send), recv_(recv), send_counts_(std::move(send_counts)),
          recv_counts_(std::move(recv_counts)) {
      sent_at_start_ = read(send_, total(send_counts_));
      write(recv_, std::vector<float>(static_cast<std::size_t>(total(recv_counts_)), std::nanf("")));
    }
    void finish() override {
      const std::vector<float> sent = read(send_, total(send_counts_));
      if (sent != sent_at_start_) peer_.send_unchanged = false;
      // Rank 0's messages: to itself first (count 0 in an exchange of halo rows), then to rank 1.
      std::vector<float> received(sent.begin(), sent.begin() + send_counts_[0]);
      peer_.to_peer.assign(sent.begin() + send_counts_[0], sent.end());
      received.insert(received.end(), peer_.from_peer.begin(), peer_.from_peer.end());
      write(recv_, received);
      ++peer_.finished;
    }

   private:
    static std::int64_t total(const std::vector<std::int64_t>& counts) { return counts[0] + counts[1]; }
    std::vector<float> read(const float* data, std::int64_t n) const {
      if (n == 0) return {};
      kernels::Tensor host = kernels::Tensor::empty(1, n);
      kernels::copy(kernels::ConstTensorView{data, 1, n, n, peer_.device_}, host.view());
      return host.to_vector();
    }
    void write(float* data, const std::vector<float>& values) const {
      const auto n = static_cast<std::int64_t>(values.size());
      if (n == 0) return;
      const kernels::Tensor host = kernels::Tensor::from_vector(1, n, values);
      kernels::copy(host.view(), kernels::TensorView{data, 1, n, n, peer_.device_});
    }

    ScriptedPeer& peer_;
    const float* send_;
    float* recv_;
    std::vector<std::int64_t> send_counts_;
    std::vector<std::int64_t> recv_counts_;
    std::vector<float> sent_at_start_;
  };

  kernels::Device device_;
};

}  // namespace halo::test
