#include "core/caching_allocator.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <vector>

#include "core/error.h"

namespace op {

namespace caching {

size_t round_size(size_t nbytes) {
  if (nbytes == 0) return kMinBlock;  // a block of its own: every allocation has a unique address
  return (nbytes + kMinBlock - 1) / kMinBlock * kMinBlock;
}

bool is_small(size_t rounded) { return rounded <= kSmallRequest; }

size_t segment_size(size_t rounded) {
  if (is_small(rounded)) return kSmallSegment;
  if (rounded < kMinOwnSegment) return kLargeSegment;
  return (rounded + kOwnSegmentRound - 1) / kOwnSegmentRound * kOwnSegmentRound;
}

std::string format_bytes(size_t nbytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (nbytes < 1024) return str(nbytes, nbytes == 1 ? " byte" : " bytes");
  double value = static_cast<double>(nbytes) / 1024;
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.2f %s", value, kUnits[unit]);
  return text;
}

}  // namespace caching

using namespace caching;

// A run of bytes inside a segment. The blocks of one segment form a list by address; the head
// (prev == nullptr) starts at the address the backend returned. No two neighbours are both free.
struct CachingAllocator::Block {
  char* ptr;
  size_t size;
  StreamId stream;
  bool small;
  bool in_use = false;  // also while pending: its neighbours must not merge into it
  Block* prev = nullptr;
  Block* next = nullptr;
  std::vector<StreamId> uses;  // other streams whose work uses it (record_stream)
  std::vector<void*> events;   // while pending: one per stream of `uses`, recorded at the free

  bool whole_segment() const { return prev == nullptr && next == nullptr; }
};

// Ordered by stream, then size, then address: the blocks of one stream are a contiguous,
// size-ordered range, so lower_bound finds the best fit.
bool CachingAllocator::BySize::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return std::less<StreamId>()(a->stream, b->stream);
  if (a->size != b->size) return a->size < b->size;
  return std::less<char*>()(a->ptr, b->ptr);
}

CachingAllocator::CachingAllocator(std::unique_ptr<DeviceMemoryBackend> backend, std::string device)
    : backend_(std::move(backend)), device_(std::move(device)) {
  OP_CHECK(backend_ != nullptr, "CachingAllocator: no device memory backend");
}

CachingAllocator::~CachingAllocator() {
  std::vector<Block*> heads;
  for (Pool* pool : {&small_pool_, &large_pool_})
    for (Block* block : *pool)
      if (block->prev == nullptr) heads.push_back(block);
  for (const auto& [ptr, block] : in_use_)
    if (block->prev == nullptr) heads.push_back(block);
  for (Block* block : pending_) {
    for (void* event : block->events) backend_->destroy_event(event);
    if (block->prev == nullptr) heads.push_back(block);
  }
  for (Block* head : heads) {
    backend_->raw_free(head->ptr);
    for (Block* block = head; block != nullptr;) {
      Block* next = block->next;
      delete block;
      block = next;
    }
  }
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Beyond any device, and rounding it up would overflow.
  if (nbytes > std::numeric_limits<size_t>::max() / 2) fail_out_of_memory(nbytes, nbytes);
  const size_t rounded = round_size(nbytes);
  const bool small = is_small(rounded);
  if (!pending_.empty()) collect_pending(/*wait=*/false);
  Block* block = find_free(pool_for(small), stream, rounded);
  if (block == nullptr) block = new_segment(small, stream, rounded, nbytes);
  block = split(block, rounded);
  block->in_use = true;
  in_use_.emplace(block->ptr, block);
  stats_.allocated_bytes += block->size;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  return block->ptr;
}

bool CachingAllocator::free(void* ptr) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = in_use_.find(ptr);
  if (found == in_use_.end()) return false;
  Block* block = found->second;
  if (block->uses.empty()) {
    in_use_.erase(found);
    release_block(block);
    return true;
  }
  // Work queued on the recorded streams may still read or write the block: it waits for an
  // event on each of them, recorded now, after that work.
  std::vector<void*> events;
  try {
    for (StreamId stream : block->uses) events.push_back(backend_->record_event(stream));
  } catch (...) {
    // Nothing could tell when that work is done: the block stays in use for good (a device
    // that cannot record an event is broken anyway).
    for (void* event : events) backend_->destroy_event(event);
    return true;
  }
  in_use_.erase(found);
  block->events = std::move(events);
  pending_.push_back(block);
  return true;
}

bool CachingAllocator::record_stream(void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto found = in_use_.find(ptr);
  if (found == in_use_.end()) return false;
  Block* block = found->second;
  // The allocation's own stream orders the block's next user after its work already.
  if (stream != block->stream && std::find(block->uses.begin(), block->uses.end(), stream) == block->uses.end())
    block->uses.push_back(stream);
  return true;
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_free_segments();
}

CachingAllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

// Takes the smallest free block of `stream` with at least `rounded` bytes out of `pool`.
CachingAllocator::Block* CachingAllocator::find_free(Pool& pool, StreamId stream, size_t rounded) {
  Block key{nullptr, rounded, stream, false};
  const auto found = pool.lower_bound(&key);
  if (found == pool.end() || (*found)->stream != stream) return nullptr;
  Block* block = *found;
  pool.erase(found);
  return block;
}

CachingAllocator::Block* CachingAllocator::new_segment(bool small, StreamId stream, size_t rounded, size_t requested) {
  const size_t size = segment_size(rounded);
  auto block = std::make_unique<Block>(Block{nullptr, size, stream, small});  // before the device memory: no leak
  void* ptr = try_raw_alloc(size);
  if (ptr == nullptr) {
    // Cached segments of other sizes and streams may be what stands in the way.
    release_free_segments();
    ptr = try_raw_alloc(size);
  }
  if (ptr == nullptr) fail_out_of_memory(requested, size);
  block->ptr = static_cast<char*>(ptr);
  stats_.reserved_bytes += size;
  ++stats_.segments;
  return block.release();
}

void* CachingAllocator::try_raw_alloc(size_t nbytes) {
  void* ptr = backend_->raw_alloc(nbytes);
  if (ptr != nullptr) ++stats_.device_allocs;
  return ptr;
}

// A block no tensor or stream uses any more: back into its pool.
void CachingAllocator::release_block(Block* block) {
  block->in_use = false;
  block->uses.clear();
  stats_.allocated_bytes -= block->size;
  merge_into_pool(block);
}

// Returns the pending blocks whose events have all completed to their pools; with `wait`, waits
// for every event first, so that none stays pending. Each event is destroyed once it has
// completed, so a throwing backend leaves the rest as they were.
void CachingAllocator::collect_pending(bool wait) {
  for (size_t i = 0; i < pending_.size();) {
    Block* block = pending_[i];
    while (!block->events.empty()) {
      void* event = block->events.back();
      if (wait)
        backend_->wait_event(event);
      else if (!backend_->event_done(event))
        break;
      backend_->destroy_event(event);
      block->events.pop_back();
    }
    if (!block->events.empty()) {
      ++i;
      continue;
    }
    pending_[i] = pending_.back();
    pending_.pop_back();
    release_block(block);
  }
}

// Cuts `block` (not in any pool) down to `rounded` bytes when the rest is worth keeping; the
// rest goes to the pool as a free block. Returns the block to hand out.
CachingAllocator::Block* CachingAllocator::split(Block* block, size_t rounded) {
  const size_t rest = block->size - rounded;
  // A large block's small remainder would only ever serve small requests from the large pool.
  const bool worth_it = block->small ? rest >= kMinBlock : rest > kSmallRequest;
  if (!worth_it) return block;
  Block* remainder = new Block{block->ptr + rounded, rest, block->stream, block->small};
  remainder->prev = block;
  remainder->next = block->next;
  if (block->next != nullptr) block->next->prev = remainder;
  block->next = remainder;
  block->size = rounded;
  pool_for(block->small).insert(remainder);
  return block;
}

// Puts a block that was just freed back into its pool, merged with its free neighbours.
void CachingAllocator::merge_into_pool(Block* block) {
  Pool& pool = pool_for(block->small);
  if (Block* prev = block->prev; prev != nullptr && !prev->in_use) {
    pool.erase(prev);  // before its size (the key) changes
    prev->size += block->size;
    prev->next = block->next;
    if (block->next != nullptr) block->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->in_use) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (next->next != nullptr) next->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

void CachingAllocator::release_free_segments() {
  collect_pending(/*wait=*/true);  // their segments may be free but for them
  std::vector<Block*> free_segments;
  for (Pool* pool : {&small_pool_, &large_pool_})
    for (Block* block : *pool)
      if (block->whole_segment()) free_segments.push_back(block);
  if (free_segments.empty()) return;  // no device synchronization for nothing
  backend_->before_release();
  for (Block* block : free_segments) {
    pool_for(block->small).erase(block);
    backend_->raw_free(block->ptr);
    ++stats_.device_frees;
    stats_.reserved_bytes -= block->size;
    --stats_.segments;
    delete block;
  }
}

void CachingAllocator::fail_out_of_memory(size_t requested, size_t segment) const {
  std::string message = str(device_, " out of memory: tried to allocate ", format_bytes(requested));
  if (segment != round_size(requested) && segment != requested)
    message += str(" (a segment of ", format_bytes(segment), ")");
  fail(str(message, "; ", format_bytes(stats_.allocated_bytes), " allocated, ", format_bytes(stats_.reserved_bytes),
           " reserved by the caching allocator"));
}

}  // namespace op
