// Per-epoch TensorBoard scalars of halo-train's runs.
#include "tools/halo_train/curves.hpp"

#include <filesystem>
#include <system_error>
#include <utility>

#include "graph/base/error.hpp"

namespace halo::tools {

TrainingCurves::TrainingCurves(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw IoError(dir_, "cannot create the --tensorboard folder: " + ec.message());
}

void TrainingCurves::add(int run, const train::EpochRecord& r) {
  if (run != run_) {
    writer_ = std::make_unique<TensorboardWriter>(dir_ + "/run-" + std::to_string(run));
    run_ = run;
  }
  TensorboardWriter& w = *writer_;
  w.scalar("loss/train", r.epoch, r.loss);
  if (r.evaluated) {
    w.scalar("loss/valid", r.epoch, r.valid_loss);
    w.scalar("accuracy/train", r.epoch, r.train_acc);
    w.scalar("accuracy/valid", r.epoch, r.valid_acc);
    w.scalar("accuracy/test", r.epoch, r.test_acc);
  }
  w.scalar("time/epoch_s", r.epoch, r.time_s);
  w.scalar("time/halo_s", r.epoch, r.halo_s);
  w.scalar("time/all_reduce_s", r.epoch, r.all_reduce_s);
  w.scalar("traffic/bytes_sent", r.epoch, static_cast<double>(r.bytes_sent));
  w.flush();
}

}  // namespace halo::tools
