// A caching allocator for device memory: segments taken from the device stay cached in pools
// and are carved into blocks for tensors, so a tensor's allocation and free cost a few set
// operations, never a device malloc or a device free (cudaFree synchronizes the whole device).
// Host-only and device-agnostic: the device is a DeviceMemoryBackend, so the pool logic is
// built (and unit-tested with a fake backend) without CUDA.
//
// Policy (caching_allocator.cpp):
// - sizes are rounded up to 512 bytes; a zero-byte request gets a 512-byte block of its own;
// - requests up to 1 MiB come from the small pool, carved from 2 MiB segments; larger ones from
//   the large pool: under 10 MiB from 20 MiB segments, from 10 MiB on a segment of their own
//   size rounded up to 2 MiB;
// - the free block chosen is the smallest that fits (best fit); it is split when the rest is
//   at least 512 bytes (small pool) or more than 1 MiB (large pool);
// - a freed block merges with its free neighbours of the same segment and stays cached;
// - pools are per stream: a block serves only requests of the stream it was allocated on, so
//   work queued on that stream and the block's next user are ordered by the stream itself;
// - a block used on other streams too (record_stream) is not reused when freed until the work
//   queued on each of them up to the free has finished: an event is recorded on each, and the
//   block waits in a pending list (still counted as allocated) until every event has completed.
//   Each allocation looks at the pending blocks without waiting; giving segments back waits;
// - when the device is out of memory every fully free segment goes back to the device and the
//   request is tried once more before it fails with op::Error.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace op {

// Raw device memory: what the caching allocator asks of a device.
class DeviceMemoryBackend {
 public:
  virtual ~DeviceMemoryBackend() = default;
  // `nbytes` of device memory, or nullptr when the device is out of memory; other failures
  // (no device, a broken driver) throw op::Error.
  virtual void* raw_alloc(size_t nbytes) = 0;
  // Gives a segment back. Must not throw: it runs at process exit too.
  virtual void raw_free(void* ptr) noexcept = 0;
  // Called once before segments are given back: queued work may still use their memory (the
  // CUDA backend synchronizes the device). May throw; nothing is freed then.
  virtual void before_release() {}

  // Events for record_stream (a cudaEvent_t each in the CUDA backend), as opaque handles.
  // A new event marking the work queued on `stream` so far; never nullptr. May throw.
  virtual void* record_event(const void* stream) = 0;
  // True when the work the event marks has finished; never waits. May throw.
  virtual bool event_done(void* event) = 0;
  // Waits until the work the event marks has finished. May throw.
  virtual void wait_event(void* event) = 0;
  // Must not throw: it runs at process exit too.
  virtual void destroy_event(void* event) noexcept = 0;
};

// The queue a block is allocated for: an opaque handle (a cudaStream_t; nullptr is the
// default stream). Compared, and given to the backend's record_event.
using StreamId = const void*;

struct CachingAllocatorStats {
  size_t allocated_bytes = 0;       // in use by tensors (rounded sizes)
  size_t reserved_bytes = 0;        // held from the device: every segment, used or cached
  size_t peak_allocated_bytes = 0;  // highest allocated_bytes since the last reset_peak()
  size_t device_allocs = 0;         // successful raw_alloc calls
  size_t device_frees = 0;          // raw_free calls
  size_t segments = 0;              // segments held now
};

namespace caching {

constexpr size_t kMinBlock = 512;                      // rounding granularity and smallest block
constexpr size_t kSmallRequest = size_t{1} << 20;      // up to this: the small pool
constexpr size_t kSmallSegment = size_t{2} << 20;      // the small pool's segments
constexpr size_t kLargeSegment = size_t{20} << 20;     // ... the large pool's, for requests under:
constexpr size_t kMinOwnSegment = size_t{10} << 20;    // from here a request gets its own segment,
constexpr size_t kOwnSegmentRound = size_t{2} << 20;   // rounded up to this

// The size a request of `nbytes` takes from a pool.
size_t round_size(size_t nbytes);
bool is_small(size_t rounded);
// The size of the segment a new block of `rounded` bytes is carved from.
size_t segment_size(size_t rounded);
// "2.00 GiB", "512 bytes": for error messages.
std::string format_bytes(size_t nbytes);

}  // namespace caching

class CachingAllocator {
 public:
  // `device` names the device in error messages ("CUDA").
  CachingAllocator(std::unique_ptr<DeviceMemoryBackend> backend, std::string device);
  ~CachingAllocator();  // gives every segment back, in use or not
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `nbytes` for work on `stream`; never nullptr. Throws op::Error
  // "<device> out of memory: tried to allocate ..." when the device has no room even after
  // the cache is emptied.
  void* allocate(size_t nbytes, StreamId stream);
  // Returns the block at `ptr` to its stream's pool, or, when record_stream marked it, records an
  // event on each marked stream and keeps it pending. False (and nothing done) when `ptr` is not
  // a block in use: a deleter must not throw.
  bool free(void* ptr) noexcept;
  // Marks the block at `ptr` as used by work queued on `stream` too: when it is freed it is not
  // reused before that work (queued up to the free) has finished. Its own stream needs no mark.
  // False (and nothing done) when `ptr` is not a block in use.
  bool record_stream(void* ptr, StreamId stream);
  // Gives every fully free segment back to the device.
  void empty_cache();

  CachingAllocatorStats stats() const;
  // Starts the peak over from what is allocated now.
  void reset_peak();

 private:
  struct Block;
  struct BySize {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BySize>;

  Pool& pool_for(bool small) { return small ? small_pool_ : large_pool_; }
  Block* find_free(Pool& pool, StreamId stream, size_t rounded);
  void release_block(Block* block);
  void collect_pending(bool wait);
  Block* new_segment(bool small, StreamId stream, size_t rounded, size_t requested);
  void* try_raw_alloc(size_t nbytes);
  Block* split(Block* block, size_t rounded);
  void merge_into_pool(Block* block);
  void release_free_segments();
  [[noreturn]] void fail_out_of_memory(size_t requested, size_t segment) const;

  const std::unique_ptr<DeviceMemoryBackend> backend_;
  const std::string device_;
  mutable std::mutex mutex_;
  Pool small_pool_;
  Pool large_pool_;
  std::unordered_map<const void*, Block*> in_use_;
  std::vector<Block*> pending_;  // freed, waiting for the events of the streams they were used on
  CachingAllocatorStats stats_;
};

}  // namespace op
