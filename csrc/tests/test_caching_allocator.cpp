// The caching device allocator's pool logic (core/caching_allocator.h) on the host: a fake
// device backend hands out host memory up to a capacity and counts what it is asked; its events
// complete when the test says so (or when the allocator waits for them).
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/caching_allocator.h"
#include "tests/harness.h"

using namespace op;
using namespace op::caching;

namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

// What the fake device saw; shared between the backend (owned by the allocator) and the test.
struct FakeDevice {
  size_t capacity = size_t{1} << 30;
  std::mutex mutex;
  std::unordered_map<void*, size_t> live;  // segments not yet given back
  size_t live_bytes = 0;
  int allocs = 0, frees = 0, failed_allocs = 0, releases = 0;
  // Events: id -> (stream, completed). Ids count up from 1.
  std::unordered_map<int, std::pair<StreamId, bool>> events;
  int next_event = 1, events_recorded = 0, events_waited = 0;

  // Completes the events recorded on `stream` so far, as the end of its queued work would.
  void finish(StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& [id, event] : events)
      if (event.first == stream) event.second = true;
  }
};

class FakeBackend final : public DeviceMemoryBackend {
 public:
  explicit FakeBackend(std::shared_ptr<FakeDevice> device) : device_(std::move(device)) {}
  void* raw_alloc(size_t nbytes) override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    if (device_->live_bytes + nbytes > device_->capacity) {
      ++device_->failed_allocs;
      return nullptr;
    }
    void* p = std::malloc(nbytes);  // real memory: the threads' test writes into its blocks
    CHECK(p != nullptr);
    device_->live.emplace(p, nbytes);
    device_->live_bytes += nbytes;
    ++device_->allocs;
    return p;
  }
  void raw_free(void* ptr) noexcept override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    const auto found = device_->live.find(ptr);
    if (found == device_->live.end()) std::abort();  // freeing what the device never gave
    device_->live_bytes -= found->second;
    device_->live.erase(found);
    ++device_->frees;
    std::free(ptr);
  }
  void before_release() override { ++device_->releases; }

  void* record_event(const void* stream) override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    const int id = device_->next_event++;
    device_->events.emplace(id, std::make_pair(stream, false));
    ++device_->events_recorded;
    return reinterpret_cast<void*>(static_cast<intptr_t>(id));
  }
  bool event_done(void* event) override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    return device_->events.at(id(event)).second;
  }
  void wait_event(void* event) override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    device_->events.at(id(event)).second = true;  // the host waited until the work was done
    ++device_->events_waited;
  }
  void destroy_event(void* event) noexcept override {
    std::lock_guard<std::mutex> lock(device_->mutex);
    if (device_->events.erase(id(event)) != 1) std::abort();  // destroyed twice, or never made
  }

 private:
  static int id(void* event) { return static_cast<int>(reinterpret_cast<intptr_t>(event)); }

  std::shared_ptr<FakeDevice> device_;
};

struct Fixture {
  std::shared_ptr<FakeDevice> device = std::make_shared<FakeDevice>();
  std::unique_ptr<CachingAllocator> allocator =
      std::make_unique<CachingAllocator>(std::make_unique<FakeBackend>(device), "CUDA");

  explicit Fixture(size_t capacity = size_t{1} << 30) { device->capacity = capacity; }
  CachingAllocatorStats stats() const { return allocator->stats(); }
};

const StreamId kDefault = nullptr;
const StreamId kStream1 = reinterpret_cast<StreamId>(0x1000);
const StreamId kStream2 = reinterpret_cast<StreamId>(0x2000);

char* at(void* p) { return static_cast<char*>(p); }

}  // namespace

TEST(caching_sizes_round_to_512_and_pick_the_segment) {
  CHECK_EQ(round_size(0), size_t{512});
  CHECK_EQ(round_size(1), size_t{512});
  CHECK_EQ(round_size(512), size_t{512});
  CHECK_EQ(round_size(513), size_t{1024});
  CHECK(is_small(MiB));
  CHECK(!is_small(MiB + 512));
  CHECK_EQ(segment_size(512), 2 * MiB);
  CHECK_EQ(segment_size(MiB), 2 * MiB);
  CHECK_EQ(segment_size(MiB + 512), 20 * MiB);
  CHECK_EQ(segment_size(10 * MiB - 512), 20 * MiB);
  CHECK_EQ(segment_size(10 * MiB), 10 * MiB);
  CHECK_EQ(segment_size(11 * MiB), 12 * MiB);
  CHECK_EQ(format_bytes(512), "512 bytes");
  CHECK_EQ(format_bytes(3 * MiB / 2), "1.50 MiB");
  CHECK_EQ(format_bytes(size_t{2} << 30), "2.00 GiB");
}

TEST(caching_a_freed_block_is_reused_without_the_device) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);
  CHECK(a != nullptr);
  CHECK(f.allocator->free(a));
  void* b = f.allocator->allocate(1000, kDefault);
  CHECK_EQ(b, a);
  CHECK(f.allocator->free(b));
  CHECK_EQ(f.device->allocs, 1);
  CHECK_EQ(f.device->frees, 0);  // freeing a tensor never frees device memory
  CHECK_EQ(f.stats().device_allocs, size_t{1});
}

TEST(caching_zero_byte_allocations_get_distinct_blocks) {
  Fixture f;
  void* a = f.allocator->allocate(0, kDefault);
  void* b = f.allocator->allocate(0, kDefault);
  CHECK(a != nullptr && b != nullptr && a != b);
  CHECK_EQ(f.stats().allocated_bytes, size_t{1024});
  CHECK(f.allocator->free(a) && f.allocator->free(b));
}

TEST(caching_free_of_a_foreign_or_freed_pointer_is_refused) {
  Fixture f;
  int local = 0;
  CHECK(!f.allocator->free(&local));
  void* a = f.allocator->allocate(100, kDefault);
  CHECK(f.allocator->free(a));
  CHECK(!f.allocator->free(a));  // a double free changes nothing
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
}

TEST(caching_small_blocks_split_one_segment_and_merge_back) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);  // 1024 bytes at the segment's start
  void* b = f.allocator->allocate(1000, kDefault);
  void* c = f.allocator->allocate(1000, kDefault);
  CHECK_EQ(at(b), at(a) + 1024);
  CHECK_EQ(at(c), at(a) + 2048);
  CHECK_EQ(f.device->allocs, 1);
  CHECK_EQ(f.stats().reserved_bytes, 2 * MiB);
  CHECK_EQ(f.stats().allocated_bytes, size_t{3072});
  // Freed out of order, the three merge with the segment's free tail into one block.
  CHECK(f.allocator->free(a));
  CHECK(f.allocator->free(c));
  CHECK(f.allocator->free(b));
  void* whole = f.allocator->allocate(MiB, kDefault);
  CHECK_EQ(whole, a);
  void* rest = f.allocator->allocate(MiB, kDefault);  // the other half: the segment is whole again
  CHECK_EQ(at(rest), at(a) + MiB);
  CHECK_EQ(f.device->allocs, 1);
  CHECK(f.allocator->free(whole) && f.allocator->free(rest));
  f.allocator->empty_cache();
  CHECK_EQ(f.device->frees, 1);
  CHECK_EQ(f.stats().reserved_bytes, size_t{0});
}

TEST(caching_best_fit_picks_the_smallest_free_block) {
  Fixture f;
  void* big = f.allocator->allocate(8 * KiB, kDefault);
  void* gap1 = f.allocator->allocate(512, kDefault);
  void* small = f.allocator->allocate(2 * KiB, kDefault);
  void* gap2 = f.allocator->allocate(512, kDefault);
  CHECK(f.allocator->free(big));
  CHECK(f.allocator->free(small));
  CHECK_EQ(f.allocator->allocate(2 * KiB, kDefault), small);  // not the 8 KiB hole
  CHECK_EQ(f.allocator->allocate(4 * KiB, kDefault), big);    // split from the 8 KiB hole
  CHECK_EQ(at(f.allocator->allocate(4 * KiB, kDefault)), at(big) + 4 * KiB);
  CHECK_EQ(f.device->allocs, 1);
  (void)gap1;
  (void)gap2;
}

TEST(caching_small_remainders_split_down_to_512_bytes) {
  Fixture f;
  void* a = f.allocator->allocate(MiB, kDefault);
  void* b = f.allocator->allocate(MiB - 512, kDefault);  // leaves exactly 512 bytes: split
  CHECK_EQ(f.stats().allocated_bytes, 2 * MiB - 512);
  void* c = f.allocator->allocate(1, kDefault);
  CHECK_EQ(at(c), at(b) + MiB - 512);
  CHECK_EQ(f.device->allocs, 1);
  (void)a;
}

TEST(caching_large_requests_share_20_mib_segments_or_get_their_own) {
  Fixture f;
  void* own = f.allocator->allocate(11 * MiB, kDefault);  // >= 10 MiB: its own, rounded to 2 MiB
  CHECK_EQ(f.stats().reserved_bytes, 12 * MiB);
  void* a = f.allocator->allocate(2 * MiB, kDefault);  // the 1 MiB left of `own` was not split off
  CHECK_EQ(f.device->allocs, 2);
  CHECK_EQ(f.stats().reserved_bytes, 32 * MiB);
  void* b = f.allocator->allocate(3 * MiB, kDefault);  // from the same 20 MiB segment
  CHECK_EQ(at(b), at(a) + 2 * MiB);
  void* c = f.allocator->allocate(12 * MiB, kDefault);  // so is a big one while it fits (best fit)
  CHECK_EQ(at(c), at(a) + 5 * MiB);
  CHECK_EQ(f.device->allocs, 2);
  // A small request never comes from the large pool, even with room there.
  void* small = f.allocator->allocate(4 * KiB, kDefault);
  CHECK_EQ(f.device->allocs, 3);
  CHECK_EQ(f.stats().reserved_bytes, 34 * MiB);
  CHECK_EQ(f.stats().segments, size_t{3});
  // A large block is not split for a remainder of 1 MiB or less: 11.5 MiB takes all 12 MiB.
  CHECK(f.allocator->free(own));
  const size_t before = f.stats().allocated_bytes;
  void* again = f.allocator->allocate(11 * MiB + MiB / 2, kDefault);
  CHECK_EQ(again, own);
  CHECK_EQ(f.stats().allocated_bytes - before, 12 * MiB);
  CHECK_EQ(f.device->allocs, 3);
  (void)small;
  (void)c;
}

TEST(caching_pools_are_per_stream) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kStream1);
  CHECK(f.allocator->free(a));
  void* b = f.allocator->allocate(1000, kStream2);  // stream 1's cached block is not for it
  CHECK(b != a);
  CHECK_EQ(f.device->allocs, 2);
  void* c = f.allocator->allocate(1000, kStream1);
  CHECK_EQ(c, a);
  void* d = f.allocator->allocate(1000, kDefault);
  CHECK_EQ(f.device->allocs, 3);
  // A block goes back to the pool of the stream it was allocated on.
  CHECK(f.allocator->free(b));
  CHECK_EQ(f.allocator->allocate(1000, kStream2), b);
  CHECK_EQ(f.device->allocs, 3);
  (void)d;
}

TEST(caching_stats_track_allocated_reserved_and_peak) {
  Fixture f;
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
  CHECK_EQ(f.stats().reserved_bytes, size_t{0});
  void* a = f.allocator->allocate(1000, kDefault);  // 1024 rounded
  void* b = f.allocator->allocate(3 * MiB, kDefault);
  CHECK_EQ(f.stats().allocated_bytes, 3 * MiB + 1024);
  CHECK_EQ(f.stats().reserved_bytes, 22 * MiB);
  CHECK_EQ(f.stats().peak_allocated_bytes, 3 * MiB + 1024);
  CHECK(f.allocator->free(b));
  CHECK_EQ(f.stats().allocated_bytes, size_t{1024});
  CHECK_EQ(f.stats().reserved_bytes, 22 * MiB);  // cached, still held
  CHECK_EQ(f.stats().peak_allocated_bytes, 3 * MiB + 1024);
  f.allocator->reset_peak();
  CHECK_EQ(f.stats().peak_allocated_bytes, size_t{1024});
  void* c = f.allocator->allocate(2048, kDefault);
  CHECK_EQ(f.stats().peak_allocated_bytes, size_t{3072});
  CHECK(f.allocator->free(c) && f.allocator->free(a));
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
  CHECK_EQ(f.stats().device_allocs, size_t{2});
  CHECK_EQ(f.stats().device_frees, size_t{0});
}

TEST(caching_empty_cache_releases_only_fully_free_segments) {
  Fixture f;
  void* held = f.allocator->allocate(1000, kDefault);   // small segment: stays
  void* freed = f.allocator->allocate(1000, kStream1);  // another small segment
  void* large = f.allocator->allocate(4 * MiB, kDefault);
  void* large_held = f.allocator->allocate(4 * MiB, kDefault);  // same 20 MiB segment: stays
  CHECK(f.allocator->free(freed));
  CHECK(f.allocator->free(large));
  CHECK_EQ(f.stats().reserved_bytes, 24 * MiB);
  f.allocator->empty_cache();
  CHECK_EQ(f.device->frees, 1);
  CHECK_EQ(f.device->releases, 1);
  CHECK_EQ(f.stats().reserved_bytes, 22 * MiB);
  CHECK_EQ(f.stats().device_frees, size_t{1});
  // Nothing fully free: no release (and no device synchronization) at all.
  f.allocator->empty_cache();
  CHECK_EQ(f.device->releases, 1);
  CHECK(f.allocator->free(held) && f.allocator->free(large_held));
  f.allocator->empty_cache();
  CHECK_EQ(f.stats().reserved_bytes, size_t{0});
  CHECK_EQ(f.stats().segments, size_t{0});
  CHECK_EQ(f.device->live_bytes, size_t{0});
}

TEST(caching_out_of_memory_empties_the_cache_and_retries) {
  Fixture f(21 * MiB);
  void* cached = f.allocator->allocate(1000, kStream1);  // 2 MiB segment
  CHECK(f.allocator->free(cached));
  void* big = f.allocator->allocate(3 * MiB, kDefault);  // 20 MiB more does not fit beside it
  CHECK(big != nullptr);
  CHECK_EQ(f.device->failed_allocs, 1);
  CHECK_EQ(f.device->releases, 1);
  CHECK_EQ(f.device->frees, 1);
  CHECK_EQ(f.stats().reserved_bytes, 20 * MiB);
  CHECK_EQ(f.stats().allocated_bytes, 3 * MiB);
}

TEST(caching_out_of_memory_that_persists_raises_with_the_sizes) {
  Fixture f(21 * MiB);
  void* held = f.allocator->allocate(1000, kDefault);  // its 2 MiB segment stays in use
  void* cached = f.allocator->allocate(1000, kStream1);
  CHECK(f.allocator->free(cached));  // but this one is given back when memory runs out
  CHECK_THROWS(f.allocator->allocate(3 * MiB, kDefault),
               "CUDA out of memory: tried to allocate 3.00 MiB (a segment of 20.00 MiB); "
               "1.00 KiB allocated, 2.00 MiB reserved by the caching allocator");
  CHECK_EQ(f.device->frees, 1);
  CHECK_EQ(f.stats().reserved_bytes, 2 * MiB);  // nothing half-made stays behind
  CHECK_EQ(f.device->live_bytes, 2 * MiB);
  CHECK_EQ(f.stats().allocated_bytes, size_t{1024});
  CHECK_THROWS(f.allocator->allocate(size_t{2} << 30, kDefault), "tried to allocate 2.00 GiB; ");
  CHECK_THROWS(f.allocator->allocate(~size_t{0}, kDefault), "out of memory");
  // The allocator carries on: small requests still fit in the held segment.
  void* more = f.allocator->allocate(4 * KiB, kDefault);
  CHECK_EQ(at(more), at(held) + 1024);
  CHECK_EQ(f.device->allocs, 2);
}

TEST(caching_the_allocator_gives_every_segment_back_when_destroyed) {
  Fixture f;
  f.allocator->allocate(1000, kDefault);
  void* freed = f.allocator->allocate(3 * MiB, kStream1);
  f.allocator->allocate(1000, kStream2);
  CHECK(f.allocator->free(freed));
  CHECK_EQ(f.device->live.size(), size_t{3});
  f.allocator.reset();
  CHECK_EQ(f.device->live.size(), size_t{0});
  CHECK_EQ(f.device->frees, 3);
}

TEST(caching_threads_allocate_and_free_concurrently) {
  Fixture f;
  constexpr int kThreads = 4;
  constexpr int kRounds = 1500;
  std::atomic<int> overlaps{0};
  auto work = [&](int id) {
    std::mt19937 random(id);
    const StreamId stream = id % 2 ? kStream1 : kDefault;  // two threads share each stream's pool
    std::vector<std::pair<unsigned char*, size_t>> held;
    for (int round = 0; round < kRounds; ++round) {
      if (held.size() < 8 && random() % 3 != 0) {
        const size_t sizes[] = {1, 700, 4 * KiB, 300 * KiB, 3 * MiB, 12 * MiB};
        const size_t n = sizes[random() % (random() % 4 == 0 ? 6 : 4)];
        auto* p = static_cast<unsigned char*>(f.allocator->allocate(n, stream));
        std::memset(p, id + 1, n);
        held.emplace_back(p, n);
      } else if (!held.empty()) {
        const size_t i = random() % held.size();
        auto [p, n] = held[i];
        // Another thread writing into this block would show here.
        for (size_t k = 0; k < n; k += 97)
          if (p[k] != id + 1) ++overlaps;
        if (!f.allocator->free(p)) ++overlaps;
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    for (auto [p, n] : held) f.allocator->free(p);
  };
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id) threads.emplace_back(work, id);
  for (auto& thread : threads) thread.join();
  CHECK_EQ(overlaps.load(), 0);
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
  f.allocator->empty_cache();
  CHECK_EQ(f.stats().reserved_bytes, size_t{0});
  CHECK_EQ(f.device->live_bytes, size_t{0});
  CHECK_EQ(f.stats().device_allocs, f.stats().device_frees);
}

// ----- record_stream -----

TEST(caching_a_block_used_on_another_stream_waits_for_that_work_before_reuse) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->free(a));
  CHECK_EQ(f.device->events_recorded, 1);
  CHECK_EQ(f.stats().allocated_bytes, size_t{1024});  // pending: still counted as allocated
  CHECK(!f.allocator->free(a));                         // and freed once only
  void* b = f.allocator->allocate(1000, kDefault);      // stream 1 may still use a: not handed out
  CHECK(b != a);
  CHECK_EQ(f.device->events.size(), size_t{1});
  f.device->finish(kStream1);
  void* c = f.allocator->allocate(1000, kDefault);  // the event completed: a is back in the pool
  CHECK_EQ(c, a);
  CHECK_EQ(f.device->events.size(), size_t{0});  // destroyed once completed
  CHECK_EQ(f.device->events_waited, 0);          // allocating never waits
  CHECK_EQ(f.device->allocs, 1);
  CHECK(f.allocator->free(b) && f.allocator->free(c));
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
}

TEST(caching_a_block_recorded_on_several_streams_waits_for_each) {
  Fixture f;
  void* a = f.allocator->allocate(4 * MiB, kDefault);
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->record_stream(a, kStream2));
  CHECK(f.allocator->record_stream(a, kStream1));  // once per stream
  CHECK(f.allocator->free(a));
  CHECK_EQ(f.device->events_recorded, 2);
  f.device->finish(kStream2);
  void* b = f.allocator->allocate(4 * MiB, kDefault);
  CHECK(b != a);  // stream 1's work is still queued
  f.device->finish(kStream1);
  CHECK(f.allocator->free(b));
  void* c = f.allocator->allocate(4 * MiB, kDefault);
  CHECK(c == a || c == b);
  void* d = f.allocator->allocate(4 * MiB, kDefault);
  CHECK((d == a || d == b) && d != c);
  CHECK_EQ(f.stats().allocated_bytes, 8 * MiB);
  CHECK_EQ(f.device->allocs, 1);  // both from the one 20 MiB segment
  CHECK_EQ(f.device->events.size(), size_t{0});
  // A block allocated again starts without the streams its previous tensor was used on.
  CHECK(f.allocator->free(c));
  CHECK_EQ(f.device->events_recorded, 2);
  CHECK(f.allocator->free(d));
}

TEST(caching_recording_the_allocation_stream_is_a_no_op) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kStream1);
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->free(a));
  CHECK_EQ(f.device->events_recorded, 0);
  CHECK_EQ(f.allocator->allocate(1000, kStream1), a);  // reused at once
  int local = 0;
  CHECK(!f.allocator->record_stream(&local, kStream1));  // not a block of the allocator
  CHECK(!f.allocator->record_stream(at(a) + 512, kStream2));  // nor inside one
}

TEST(caching_empty_cache_waits_for_pending_blocks_and_gives_their_segments_back) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);
  void* b = f.allocator->allocate(3 * MiB, kDefault);
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->record_stream(b, kStream2));
  CHECK(f.allocator->free(a) && f.allocator->free(b));
  CHECK_EQ(f.stats().allocated_bytes, 3 * MiB + 1024);
  CHECK_EQ(f.stats().reserved_bytes, 22 * MiB);
  f.allocator->empty_cache();
  CHECK_EQ(f.device->events_waited, 2);
  CHECK_EQ(f.device->events.size(), size_t{0});
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
  CHECK_EQ(f.stats().reserved_bytes, size_t{0});
  CHECK_EQ(f.device->frees, 2);
  CHECK_EQ(f.device->live_bytes, size_t{0});
}

TEST(caching_out_of_memory_waits_for_pending_blocks_before_it_fails) {
  Fixture f(21 * MiB);
  void* a = f.allocator->allocate(1000, kDefault);  // 2 MiB segment
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->free(a));
  void* big = f.allocator->allocate(3 * MiB, kDefault);  // fits once a's segment is given back
  CHECK(big != nullptr);
  CHECK_EQ(f.device->events_waited, 1);
  CHECK_EQ(f.device->frees, 1);
  CHECK_EQ(f.stats().allocated_bytes, 3 * MiB);
  CHECK_EQ(f.stats().reserved_bytes, 20 * MiB);
}

TEST(caching_a_pending_block_stays_out_of_its_neighbours_merges) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);
  void* b = f.allocator->allocate(1000, kDefault);
  void* c = f.allocator->allocate(1000, kDefault);
  CHECK(f.allocator->record_stream(b, kStream1));
  CHECK(f.allocator->free(b));
  CHECK(f.allocator->free(a));
  CHECK(f.allocator->free(c));
  void* d = f.allocator->allocate(2048, kDefault);
  CHECK_EQ(d, c);  // a's 1 KiB is too small: the pending b lies between it and c's free space
  f.device->finish(kStream1);
  void* e = f.allocator->allocate(2048, kDefault);
  CHECK_EQ(e, a);  // b came back and merged with a
  CHECK(f.allocator->free(d) && f.allocator->free(e));
  CHECK_EQ(f.stats().allocated_bytes, size_t{0});
  f.allocator->empty_cache();
  CHECK_EQ(f.device->live_bytes, size_t{0});
}

TEST(caching_the_allocator_destroys_the_events_of_pending_blocks_when_destroyed) {
  Fixture f;
  void* a = f.allocator->allocate(1000, kDefault);
  void* b = f.allocator->allocate(1000, kDefault);  // b's segment head is a: not a head itself
  CHECK(f.allocator->record_stream(a, kStream1));
  CHECK(f.allocator->record_stream(b, kStream2));
  CHECK(f.allocator->free(a) && f.allocator->free(b));
  CHECK_EQ(f.device->events.size(), size_t{2});
  f.allocator.reset();
  CHECK_EQ(f.device->events.size(), size_t{0});
  CHECK_EQ(f.device->live.size(), size_t{0});
}
