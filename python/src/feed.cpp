// The feed of streampipe.torch.Loader (issue 25): a stream whose batches are submitted and whose
// events are taken by two threads of its own, which never take the GIL, so that no Python thread
// but the training thread's runs per batch. A training loop is bound by that thread's host time,
// and every GIL hand-over to another Python thread (the old feeder and event threads took it
// several times a batch, between the step's torch calls) lengthened it (bench/PERF.md).
//
// What Python gives: the inputs, as spans of records cut into batches here (a whole array: no
// Python per batch at all) or one batch at a time (push, from a thread iterating a DataLoader),
// the consumer streams (lanes), and output blocks back to the pool (FeedBlocks.give) once their
// consumer is done with them. What it takes: each batch in order, once its output may be read on
// its lane (HANDED_OFF) or, on HOST, once it is DONE (take). Nothing here decides what is safe
// to reuse: a block is written again only after Python gave it back (streampipe._torch_feed).
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "binding.h"

namespace sp_py {
namespace {

struct span {               // records to submit, cut into batches of `batch` records
    const char *ptr = nullptr;
    size_t records = 0;
    size_t record_bytes = 0;
    size_t batch = 0;       // 0: the span is one batch, however many records (0 included)
    bool drop_last = false; // a last batch shorter than `batch` is not submitted
};

struct batch_state {
    void *out = nullptr;
    size_t records = 0;
    int status = SP_OK;
    uint64_t cause = 0;
    std::string message;
    bool ready = false; // may be taken: handed off (CUDA), or done
    bool done = false;
};

// The output blocks of a Loader's feeds, kept across its epochs (an epoch's stream is closed
// at its end, its blocks are not: allocating and freeing them per epoch cost a cudaMalloc each
// and a device-wide wait in the next epoch's first step). A block is handed out again only
// after give(); every block is freed with the pool, which each lease holds (through its feed).
class block_pool {
public:
    explicit block_pool(const context &ctx) : ctx_(ctx.handle) {}
    ~block_pool()
    {
        for (auto &b : owned_)
            sp_device_free(ctx_->ctx, b.first);
    }
    block_pool(const block_pool &) = delete;
    block_pool &operator=(const block_pool &) = delete;

    // A block of at least `bytes` (and at most twice that): one given back, else a new one
    // (nullptr when the device has no memory for it). Any thread; the GIL is not needed.
    void *take(size_t bytes)
    {
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (size_t i = 0; i < free_.size(); i++)
                if (free_[i].second >= bytes && free_[i].second / 2 <= bytes) {
                    void *ptr = free_[i].first;
                    free_.erase(free_.begin() + (long)i);
                    return ptr;
                }
        }
        void *ptr = nullptr;
        if (sp_device_alloc(ctx_->ctx, bytes, &ptr) != SP_OK)
            return nullptr;
        std::lock_guard<std::mutex> lock(mu_);
        owned_.emplace_back(ptr, bytes);
        return ptr;
    }
    void give(uintptr_t block)
    {
        std::lock_guard<std::mutex> lock(mu_);
        for (auto &b : owned_)
            if (b.first == (void *)block) {
                free_.push_back(b);
                return;
            }
    }
    size_t blocks() const
    {
        std::lock_guard<std::mutex> lock(mu_);
        return owned_.size();
    }
    size_t idle() const
    {
        std::lock_guard<std::mutex> lock(mu_);
        return free_.size();
    }

private:
    context_ref ctx_;
    mutable std::mutex mu_;
    std::vector<std::pair<void *, size_t>> free_;  // given back
    std::vector<std::pair<void *, size_t>> owned_; // every block
};

class feed {
public:
    feed(nb::object pipe, unsigned max_in_flight, std::vector<uintptr_t> lanes, size_t ahead,
         nb::object blocks);
    ~feed() { stop(); }
    feed(const feed &) = delete;
    feed &operator=(const feed &) = delete;

    bool push_span(uintptr_t ptr, size_t records, size_t record_bytes, size_t batch,
                   bool drop_last);
    void end_input();
    std::optional<std::tuple<size_t, uintptr_t, size_t, int, uint64_t, std::string, size_t>>
    take();
    void stop();

private:
    void submitter();
    void events();
    bool next_input(const char **in, size_t *records); // with mu_ held
    void fail_batch(size_t index, size_t records, sp_status status, const std::string &why);

    nb::object owner_; // the pipeline: alive while the stream is
    nb::object blocks_owner_;
    block_pool *blocks_ = nullptr;
    sp_stream *stream_ = nullptr;
    std::vector<uintptr_t> lanes_;
    size_t ahead_ = 1;             // batches submitted and not taken, at most
    size_t out_record_bytes_ = 0;

    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<span> input_;
    bool input_ended_ = false;
    bool stopping_ = false;
    std::deque<batch_state> batches_; // from index base_: submitted and not taken
    size_t base_ = 0;                 // the index of batches_.front(): batches taken so far
    size_t submitted_ = 0;
    size_t accepted_ = 0;             // submits the library took: each gives a DONE
    size_t done_through_ = 0;         // DONE events taken (they come in submission order)
    bool submitting_over_ = false;    // the submitter ended: no batch comes after submitted_
    std::thread submit_thread_, event_thread_;
};

feed::feed(nb::object pipe, unsigned max_in_flight, std::vector<uintptr_t> lanes, size_t ahead,
           nb::object blocks)
    : lanes_(std::move(lanes)), ahead_(ahead ? ahead : 1)
{
    pipeline &p = nb::cast<pipeline &>(pipe);
    block_pool &pool = nb::cast<block_pool &>(blocks);
    sp_stream_config config{};
    config.size = sizeof config;
    config.max_in_flight = max_in_flight;
    sp_status status;
    std::string why;
    {
        gil_released unlocked;
        status = sp_stream_open(p.handle, &config, &stream_);
        if (status != SP_OK)
            why = sp_pipeline_last_error(p.handle);
        unlocked.relock();
    }
    if (status != SP_OK)
        raise_status(status, why);
    owner_ = std::move(pipe);
    blocks_owner_ = std::move(blocks);
    blocks_ = &pool;
    out_record_bytes_ = sp_pipeline_out_record_bytes(p.handle);
    submit_thread_ = std::thread([this] { submitter(); });
    event_thread_ = std::thread([this] { events(); });
}

// Queues records; false once the feed is stopping. Waits (the GIL released) while `ahead`
// batches are queued or submitted and not taken, so a pushing thread runs that far ahead.
bool feed::push_span(uintptr_t ptr, size_t records, size_t record_bytes, size_t batch,
                     bool drop_last)
{
    gil_released unlocked;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return stopping_ || input_.size() + batches_.size() < ahead_; });
    if (stopping_ || input_ended_)
        return false;
    input_.push_back({(const char *)ptr, records, record_bytes, batch, drop_last});
    cv_.notify_all();
    return true;
}

void feed::end_input()
{
    std::lock_guard<std::mutex> lock(mu_);
    input_ended_ = true;
    cv_.notify_all();
}

bool feed::next_input(const char **in, size_t *records)
{
    while (!input_.empty()) {
        span &s = input_.front();
        if (s.batch == 0) { // one batch
            *in = s.ptr;
            *records = s.records;
            input_.pop_front();
            return true;
        }
        size_t n = s.records < s.batch ? s.records : s.batch;
        if (n == 0 || (s.drop_last && n < s.batch)) {
            input_.pop_front();
            continue;
        }
        *in = s.ptr;
        *records = n;
        s.ptr += n * s.record_bytes;
        s.records -= n;
        if (s.records == 0)
            input_.pop_front();
        return true;
    }
    return false;
}

void feed::fail_batch(size_t index, size_t records, sp_status status, const std::string &why)
{
    batch_state &b = batches_[index - base_];
    b.records = records;
    b.status = status;
    b.message = why;
    b.ready = b.done = true;
}

void feed::submitter()
{
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        const char *in = nullptr;
        size_t records = 0;
        cv_.wait(lock, [&] {
            return stopping_ || (submitted_ - base_ < ahead_ && (!input_.empty() || input_ended_));
        });
        if (stopping_ || !next_input(&in, &records))
            break; // stopped, or the input ended
        size_t index = submitted_++;
        batches_.emplace_back();
        size_t bytes = records * out_record_bytes_;
        lock.unlock(); // the library may allocate
        void *out = blocks_->take(bytes ? bytes : 1);
        lock.lock();
        if (!out) {
            fail_batch(index, records, SP_ERR_OUT_OF_DEVICE_MEMORY,
                       "no device memory for the batch's output (sp_device_alloc)");
            break;
        }
        batches_[index - base_].out = out;
        batches_[index - base_].records = records;
        lock.unlock();
        sp_status status;
        if (lanes_.empty())
            status = sp_stream_submit_wait(stream_, in, records, out, index, -1.0);
        else
            status = sp_stream_submit_to(stream_, in, records, out, index,
                                         (void *)lanes_[index % lanes_.size()]);
        std::string why = status != SP_OK ? sp_stream_last_error(stream_) : "";
        lock.lock();
        if (status != SP_OK) { // refused, touching nothing: no event will come for it
            fail_batch(index, records, status, why); // its block goes back when it is taken
            break;
        }
        accepted_++;
        cv_.notify_all();
    }
    submitting_over_ = true;
    cv_.notify_all();
}

// Takes every DONE of the batches the library accepted (after a stop too, so that the stream is
// closed with nothing in it and never while this thread is inside sp_stream_next).
void feed::events()
{
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
        cv_.wait(lock, [&] { return done_through_ < accepted_ || submitting_over_; });
        if (done_through_ == accepted_)
            return; // the submitter ended and every DONE came
        lock.unlock();
        sp_stream_event ev{};
        sp_status status = sp_stream_next(stream_, &ev, -1.0);
        std::string why;
        if (status != SP_OK || (ev.kind == SP_EVENT_DONE && ev.status != SP_OK))
            why = sp_stream_last_error(stream_);
        lock.lock();
        if (status != SP_OK) { // a bug of ours or the library's: fail what is held, not hang
            for (auto &b : batches_)
                if (!b.done) {
                    b.status = status;
                    b.message = "the feed lost its stream's events: " + why;
                    b.ready = b.done = true;
                }
            done_through_ = accepted_;
            cv_.notify_all();
            return;
        }
        if (ev.kind == SP_EVENT_DONE)
            done_through_ = (size_t)ev.tag + 1;
        if (ev.tag >= base_) { // not taken yet (a taken batch's DONE changes nothing)
            batch_state &b = batches_[ev.tag - base_];
            if (ev.kind == SP_EVENT_HANDED_OFF) {
                b.ready = true;
            } else if (ev.kind == SP_EVENT_DONE) {
                b.status = ev.status;
                b.cause = ev.cause;
                b.message = why;
                b.ready = b.done = true;
            }
        }
        cv_.notify_all();
    }
}

// The next batch in order, once ready: (index, output block, records, status, cause, message,
// batches DONE in order so far), or None after the last. Waits with the GIL released.
std::optional<std::tuple<size_t, uintptr_t, size_t, int, uint64_t, std::string, size_t>>
feed::take()
{
    gil_released unlocked;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] {
        return stopping_ || (!batches_.empty() && batches_.front().ready) ||
               (batches_.empty() && submitting_over_);
    });
    if (batches_.empty() || !batches_.front().ready)
        return std::nullopt;
    batch_state b = std::move(batches_.front());
    batches_.pop_front();
    size_t index = base_++;
    cv_.notify_all();
    return std::make_tuple(index, (uintptr_t)b.out, b.records, b.status, b.cause, b.message,
                           done_through_);
}

// Cancels what is in flight and closes the stream once every batch is DONE: waits (the GIL
// released) for the chunks already in the ring. The blocks of the batches not taken go back
// to the pool. Once is enough.
void feed::stop()
{
    if (!stream_)
        return;
    gil_released unlocked;
    {
        std::lock_guard<std::mutex> lock(mu_);
        stopping_ = true;
        cv_.notify_all();
    }
    sp_stream_cancel_all(stream_);
    submit_thread_.join(); // then no submit comes, and the event thread ends after its DONEs
    sp_stream_cancel_all(stream_); // one the submitter made as the stop came
    event_thread_.join();
    sp_stream_close(stream_, nullptr);
    stream_ = nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    for (auto &b : batches_) // never taken, and DONE: nobody reads them
        if (b.out)
            blocks_->give((uintptr_t)b.out);
    batches_.clear();
}

} // namespace

void bind_feed(nb::module_ &m)
{
    nb::class_<block_pool>(m, "FeedBlocks")
        .def(nb::init<const context &>(), nb::arg("ctx"))
        .def("give", &block_pool::give, nb::arg("block"))
        .def_prop_ro("blocks", &block_pool::blocks)
        .def_prop_ro("idle", &block_pool::idle);
    nb::class_<feed>(m, "Feed")
        .def(nb::init<nb::object, unsigned, std::vector<uintptr_t>, size_t, nb::object>(),
             nb::arg("pipeline"), nb::arg("max_in_flight"), nb::arg("lanes"), nb::arg("ahead"),
             nb::arg("blocks"))
        .def("push_span", &feed::push_span, nb::arg("ptr"), nb::arg("records"),
             nb::arg("record_bytes"), nb::arg("batch"), nb::arg("drop_last"))
        .def("end_input", &feed::end_input)
        .def("take", &feed::take)
        .def("stop", &feed::stop);
}

} // namespace sp_py
