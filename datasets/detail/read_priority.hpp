// Scheduling priorities inside a dataset read. A gzip stream inflates on one thread only, so
// the decoder of the read's largest file is its critical path; when other threads of the read
// (parsers, the decoders of smaller files, the CSR build) outnumber the cores, the OS would give
// that decoder only its share of them. So every thread of the read but that decoder runs at a
// lower priority (nice + 10): the decoder keeps a core of its own, and the others share the rest
// and whatever it leaves idle. A lowered thread cannot rise again without privileges, so only
// threads that end with the read are lowered: ReadBeside's threads and the OpenMP teams they
// start. A decoder thread inherits the priority of the thread that starts it, which a critical
// read thread still has when it opens its one file (its parse team lowers it afterwards).
#pragma once

namespace halo::datasets::detail {

enum class ReadRole {
  critical,    // the thread reads the largest file, and only that: its decoder keeps its priority
  background,  // the thread and everything it starts run lowered
};

// Marks the calling thread, a thread of the read's own, as playing `role` (ReadBeside calls this
// first thing); a background thread is lowered at once.
void enter_read_role(ReadRole role);

// Whether the calling thread is a read's own thread (marked by enter_read_role): its parse teams
// lower themselves (lower_thread_priority in each member).
bool in_read_thread();

// Lowers the calling thread's scheduling priority to 10 nice levels below the main thread's,
// unless it is that low already (Linux, where each thread has its own nice value, built with
// GCC, whose OpenMP runtime ends a read thread's workers with it; elsewhere it does nothing).
// Failing to is not an error.
void lower_thread_priority();

}  // namespace halo::datasets::detail
