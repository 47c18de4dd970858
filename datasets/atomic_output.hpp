// Crash-safe output: single files written under a temporary name, flushed to disk and renamed
// into place, and whole directories built in a temporary sibling and renamed when complete, so
// a failure or a crash never leaves a half-written file or directory that looks whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace halo::datasets {

// What write_file_atomically wrote: the final path, its size and the CRC-32 of its bytes
// (computed from memory while writing, so the file is not read back).
struct WrittenFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint32_t crc32 = 0;
};

// Appends bytes to the temporary file behind write_file_atomically, keeping its size and CRC-32.
class FileWriter {
 public:
  // Writes all `bytes` bytes (retrying short writes); throws IoError naming the final path.
  void write(const void* data, std::size_t bytes);
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  std::uint64_t bytes_written() const { return bytes_; }
  std::uint32_t crc32() const { return crc32_; }

 private:
  friend class FileWriterAccess;
  FileWriter(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  int fd_;
  std::string path_;
  std::uint64_t bytes_ = 0;
  std::uint32_t crc32_ = 0;
};

// Cleans up after a process that was killed while it wrote `destination` (a file or a directory):
// removes every abandoned "DST.tmp-*" beside it and, when `destination` is missing but an abandoned
// "DST.old-*" is there (the copy a replacement had moved aside), renames that back with a warning.
// Abandoned: made on this host by a process that has ended; a live process's temporaries and
// those of other hosts are left alone. write_file_atomically and AtomicDirectory call it before
// they write; readers of output that is replaced in place (checkpoints) call it before reading.
void recover_interrupted_output(const std::string& destination);

// Refuses, before any work, a destination that writing would refuse later: an existing one
// without `force` (IoError "DST exists (use --force to replace it)") or one whose nearest
// existing folder cannot be written. Recovers interrupted output first.
void check_new_destination(const std::string& destination, bool force);

// Creates `path` with the bytes `fill` writes: they go to "path.tmp-<host>-<pid>-<random>" in the same
// directory, which is fsync'ed and renamed over `path` (replacing an existing file), then the
// directory is fsync'ed. If `fill` throws or any step fails, the temporary file is removed, the
// old `path` (if any) is untouched, and the exception propagates. The parent directory must
// exist. Cost: the writes plus one fsync.
WrittenFile write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill);
WrittenFile write_file_atomically(const std::string& path, std::string_view bytes);

// A directory built under a temporary name beside its destination and renamed into place by
// commit(). Typical use:
//   AtomicDirectory out(dst, force);                 // refuses an existing dst unless force
//   out.write_file("graph/indptr.npy", fill);        // or any other way of writing into out.path()
//   out.commit();                                     // now dst exists, complete
// Destroying it without commit() removes the temporary directory, so a failure leaves nothing.
class AtomicDirectory {
 public:
  // Throws IoError "DST exists (use --force to replace it)" when `destination` exists and
  // `force` is false, before creating anything. Creates missing parent directories of
  // `destination`, then the empty temporary directory "DST.tmp-<host>-<pid>-<random>".
  AtomicDirectory(std::string destination, bool force);
  ~AtomicDirectory();  // removes the temporary directory unless committed; never throws
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  // The temporary directory to write into (valid until commit()).
  const std::string& path() const { return temporary_; }
  const std::string& destination() const { return destination_; }
  bool committed() const { return committed_; }

  // write_file_atomically for `relative` (a '/'-separated path inside the directory, whose
  // folders are created as needed), except that the folder is fsync'ed once by commit() rather
  // than after every file. Returns the file's path inside the temporary directory.
  WrittenFile write_file(const std::string& relative, const std::function<void(FileWriter&)>& fill);

  // Fsyncs every directory inside the temporary directory and every file not written by
  // write_file (those are synced already), renames it to the destination and fsyncs the parent. With force, an existing destination is first renamed
  // aside and removed only once the new one is in place (and put back if the rename fails).
  // Without force, a destination that appeared meanwhile is refused (IoError), not replaced.
  void commit();

 private:
  std::string destination_;
  std::string temporary_;
  std::set<std::string> synced_files_;  // normalised paths of the files write_file wrote
  bool force_;
  bool committed_ = false;
};

}  // namespace halo::datasets
