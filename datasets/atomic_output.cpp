// Temporary names, fsync and rename: the POSIX recipe for output that is either whole or absent.
#include "datasets/atomic_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include "datasets/checksum.hpp"
#include "datasets/detail/temporary_names.hpp"
#include "graph/base/error.hpp"
#include "graph/base/log.hpp"

namespace halo::datasets {

namespace fs = std::filesystem;

namespace {

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Makes the entries of a directory (a file created or renamed in it) durable.
void fsync_directory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw IoError(dir, errno_text("cannot open directory to sync it"));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  // Some file systems cannot sync a directory; their entries are then as durable as they get.
  if (rc != 0 && err != EINVAL && err != EROFS) throw IoError(dir, std::string("cannot fsync: ") + std::strerror(err));
}

void fsync_file(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw IoError(file, errno_text("cannot open to sync it"));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL && err != EROFS) throw IoError(file, std::string("cannot fsync: ") + std::strerror(err));
}

std::string parent_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

bool exists_no_follow(const std::string& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// "out/ds/" and "out/ds" name the same destination; the temporary sibling needs the latter.
std::string without_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// Closes and unlinks the temporary file unless released.
class TemporaryFile {
 public:
  TemporaryFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  int close() { return ::close(std::exchange(fd_, -1)); }
  void release() { path_.clear(); }

 private:
  int fd_;
  std::string path_;
};

}  // namespace

void FileWriter::write(const void* data, std::size_t bytes) {
  crc32_ = crc32_concat(crc32_, crc32_of(data, bytes), bytes);
  const auto* p = static_cast<const char*>(data);
  std::size_t left = bytes;
  while (left > 0) {
    const ::ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(path_, errno_text("write failed"));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  bytes_ += bytes;
}

// Grants the writing functions below access to FileWriter's private constructor.
class FileWriterAccess {
 public:
  static FileWriter make(int fd, const std::string& path) { return FileWriter(fd, path); }
};

namespace {

WrittenFile write_through_temporary(const std::string& path, const std::function<void(FileWriter&)>& fill,
                                    bool sync_directory) {
  const std::string temporary = path + ".tmp" + detail::temporary_suffix();
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(path, errno_text(("cannot create temporary file " + temporary).c_str()));
  TemporaryFile guard(fd, temporary);
  FileWriter writer = FileWriterAccess::make(fd, path);
  fill(writer);
  if (::fsync(fd) != 0) throw IoError(path, errno_text("fsync failed"));
  if (guard.close() != 0) throw IoError(path, errno_text("close failed"));
  if (::rename(temporary.c_str(), path.c_str()) != 0)
    throw IoError(path, errno_text(("cannot rename " + temporary + " to it").c_str()));
  guard.release();
  if (sync_directory) fsync_directory(parent_of(path));
  return WrittenFile{path, writer.bytes_written(), writer.crc32()};
}

std::string normalised(const fs::path& path) { return path.lexically_normal().string(); }

}  // namespace

void recover_interrupted_output(const std::string& destination) {
  const std::string target = without_trailing_slashes(destination);
  const std::string base = fs::path(target).filename().string();
  std::vector<fs::path> writing;
  std::vector<fs::path> replaced;
  std::error_code ec;
  for (fs::directory_iterator it(parent_of(target), ec), end; !ec && it != end; it.increment(ec)) {
    const detail::TemporaryName t = detail::parse_temporary_name(it->path().filename().string(), base);
    if (!detail::is_abandoned(t)) continue;
    (t.kind == detail::TemporaryKind::writing ? writing : replaced).push_back(it->path());
  }
  for (const fs::path& p : writing) {
    fs::remove_all(p, ec);
    if (ec) log_warning("cannot remove " + p.string() + ", left by a process that ended while writing " + target + ": " + ec.message());
    else log_info("removed " + p.string() + ", left by a process that ended while writing " + target);
  }
  std::sort(replaced.begin(), replaced.end());
  for (const fs::path& p : replaced) {
    if (!exists_no_follow(target) && ::rename(p.c_str(), target.c_str()) == 0) {
      log_warning("restored " + target + " from " + p.string() + ": a process ended while it replaced it");
      continue;
    }
    fs::remove_all(p, ec);
    if (!ec) log_info("removed " + p.string() + ", the old copy of " + target + " left by a process that replaced it");
  }
}

void check_new_destination(const std::string& destination, bool force) {
  const std::string target = without_trailing_slashes(destination);
  if (target.empty()) throw InvalidArgument("the destination path is empty");
  recover_interrupted_output(target);
  if (!force && exists_no_follow(target)) throw IoError(target, "exists (use --force to replace it)");
  fs::path folder = fs::path(parent_of(target));
  std::error_code ec;
  while (!fs::exists(folder, ec) && folder.has_parent_path() && folder.parent_path() != folder) folder = folder.parent_path();
  if (!fs::is_directory(folder, ec)) throw IoError(target, folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0) throw IoError(target, "cannot write in " + folder.string());
}

WrittenFile write_file_atomically(const std::string& path, const std::function<void(FileWriter&)>& fill) {
  recover_interrupted_output(path);
  return write_through_temporary(path, fill, true);
}

WrittenFile write_file_atomically(const std::string& path, std::string_view bytes) {
  return write_file_atomically(path, [&](FileWriter& w) { w.write(bytes); });
}

AtomicDirectory::AtomicDirectory(std::string destination, bool force)
    : destination_(without_trailing_slashes(std::move(destination))), force_(force) {
  if (destination_.empty()) throw InvalidArgument("AtomicDirectory: the destination path is empty");
  recover_interrupted_output(destination_);
  if (!force_ && exists_no_follow(destination_))
    throw IoError(destination_, "exists (use --force to replace it)");
  std::error_code ec;
  fs::create_directories(parent_of(destination_), ec);
  if (ec) throw IoError(parent_of(destination_), "cannot create directory: " + ec.message());
  temporary_ = destination_ + ".tmp" + detail::temporary_suffix();
  if (!fs::create_directory(temporary_, ec) || ec)
    throw IoError(temporary_, "cannot create temporary directory: " + (ec ? ec.message() : "it exists"));
}

AtomicDirectory::~AtomicDirectory() {
  if (committed_) return;
  std::error_code ec;
  fs::remove_all(temporary_, ec);
}

WrittenFile AtomicDirectory::write_file(const std::string& relative, const std::function<void(FileWriter&)>& fill) {
  if (committed_) throw InvalidArgument("AtomicDirectory::write_file: " + destination_ + " is already committed");
  const fs::path file = fs::path(temporary_) / relative;
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  if (ec) throw IoError(file.parent_path().string(), "cannot create directory: " + ec.message());
  WrittenFile written = write_through_temporary(file.string(), fill, false);
  synced_files_.insert(normalised(file));
  return written;
}

void AtomicDirectory::commit() {
  if (committed_) throw InvalidArgument("AtomicDirectory::commit: " + destination_ + " is already committed");
  std::error_code ec;
  for (fs::recursive_directory_iterator it(temporary_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (ec) break;
    if (fs::is_regular_file(st) && synced_files_.count(normalised(it->path())) == 0) fsync_file(it->path().string());
    if (fs::is_directory(st)) fsync_directory(it->path().string());
  }
  if (ec) throw IoError(temporary_, "cannot list the directory to sync it: " + ec.message());
  fsync_directory(temporary_);

  std::string aside;
  if (exists_no_follow(destination_)) {
    if (!force_) throw IoError(destination_, "exists (use --force to replace it)");
    aside = destination_ + ".old" + detail::temporary_suffix();
    if (::rename(destination_.c_str(), aside.c_str()) != 0)
      throw IoError(destination_, errno_text("cannot move the old directory aside"));
  }
  // RENAME_NOREPLACE: rename(2) would silently replace an empty directory that another process
  // created at the destination since the check above.
  int rc = ::renameat2(AT_FDCWD, temporary_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_NOREPLACE);
  if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
    rc = ::rename(temporary_.c_str(), destination_.c_str());  // file system without RENAME_NOREPLACE
  }
  if (rc != 0) {
    const int err = errno;
    if (!aside.empty()) ::rename(aside.c_str(), destination_.c_str());
    if (err == EEXIST || err == ENOTEMPTY) throw IoError(destination_, "exists (use --force to replace it)");
    throw IoError(destination_, "cannot rename " + temporary_ + " to it: " + std::strerror(err));
  }
  committed_ = true;
  fsync_directory(parent_of(destination_));
  if (!aside.empty()) {
    fs::remove_all(aside, ec);
    if (ec) log_warning("AtomicDirectory: replaced " + destination_ + " but could not remove the old copy " + aside +
                        ": " + ec.message());
  }
}

}  // namespace halo::datasets
