// TensorBoard event files, written without TensorFlow or protobuf: TFRecord framing (length,
// masked CRC-32C of the length, the event, masked CRC-32C of the event) around `Event` messages
// (wall_time = 1, step = 2, file_version = 3, summary = 5 holding Summary.Value{tag = 1,
// simple_value = 2}) encoded by hand, the only fields scalars need. TensorBoard reads each folder
// of such files as one run.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace halo::tools {

// TFRecord's masked CRC: rotate right by 15, add 0xa282ead8.
std::uint32_t masked_crc32c(const void* data, std::size_t bytes);

// One TFRecord holding `payload`.
std::string tfrecord(const std::string& payload);

// An Event with a scalar summary value, and the first event of every file (file_version
// "brain.Event:2").
std::string scalar_event(double wall_time, std::int64_t step, const std::string& tag, float value);
std::string file_version_event(double wall_time);

class TensorboardWriter {
 public:
  // Creates `dir` (and its parents) and an event file in it, events.out.tfevents.<seconds>.<host>,
  // beginning with the file-version event. Throws IoError naming the folder or file when it
  // cannot be created.
  explicit TensorboardWriter(const std::string& dir);
  // Appends a scalar at `step`, stamped with the wall-clock time.
  void scalar(const std::string& tag, std::int64_t step, double value);
  // Pushes what was appended to the file (after every epoch, so a killed run keeps its curves).
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ofstream out_;
};

}  // namespace halo::tools
