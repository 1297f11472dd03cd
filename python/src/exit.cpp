// Interpreter exit: no thread takes the GIL through the binding once the interpreter may be
// finalizing (binding.h: gil_released, python_entry; streampipe._exit calls `exiting`).
//
// Once Py_FinalizeEx has begun, a thread other than the finalizing one that takes the GIL
// (PyGILState_Ensure in a stage trampoline, PyEval_RestoreThread on a daemon thread coming
// back from a run) is ended by Python with pthread_exit. Its forced unwinding goes through the
// binding's C++ frames and the library's C ones: std::terminate ("terminate called without an
// active exception") or "Fatal Python error: PyGILState_Release". The library's own threads
// keep working at exit (a daemon thread's run goes on), so they must be kept out beforehand.
//
// streampipe._exit's atexit hook, once it has closed the open streams, calls `exiting`: from
// then on a Python stage, source or sink called on any thread but this one fails without
// touching the interpreter, and a thread coming back from the library waits for the process
// to end instead of taking the GIL. `exiting` then waits (the GIL released) for the threads
// already on their way into Python to be back out, so that none is still crossing when
// finalization starts. Py_IsFinalizing is checked too, for exits that skipped the hook.
#include <atomic>
#include <chrono>
#include <thread>

#include "binding.h"

namespace sp_py {
namespace {

std::atomic<bool> exit_begun{false};
std::atomic<std::thread::id> finalizer{}; // the thread that called exiting(): exempt
// Threads that decided to take the GIL and have not let go of it yet: python_entry's from
// before its PyGILState_Ensure until after its release, gil_released's from its relock until
// the binding function returns (its rest may run Python: raise_status).
std::atomic<long> crossing{0};
thread_local long crossing_here = 0; // this thread's part of it
// Threads inside the library with the GIL released (parked ones stay): at exit, what they
// use is never freed, on purpose, and nanobind's leak report would list it.
std::atomic<long> inside{0};

void cross() // seq_cst, then exit_begun: exiting() sees one or the other
{
    crossing.fetch_add(1);
    crossing_here++;
}

void uncross()
{
    crossing_here--;
    crossing.fetch_sub(1);
}

bool interpreter_finalizing()
{
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

bool is_finalizer() { return std::this_thread::get_id() == finalizer.load(); }

// A thread kept out for good (a daemon thread back from a run at exit, a stage of one that
// called into the library again): it stops counting and waits for the process to end.
[[noreturn]] void park()
{
    nb::set_leak_warnings(false); // nanobind's flag, not the interpreter's state
    crossing.fetch_sub(crossing_here);
    crossing_here = 0;
    for (;;)
        std::this_thread::sleep_for(std::chrono::hours(1));
}

} // namespace

gil_released::gil_released() noexcept : state_(PyEval_SaveThread()) { inside.fetch_add(1); }

void gil_released::relock()
{
    if (locked_)
        return;
    cross();
    if (exit_begun.load() && !is_finalizer())
        park();
    PyEval_RestoreThread(state_);
    inside.fetch_sub(1);
    locked_ = true;
}

gil_released::~gil_released()
{
    relock();
    uncross();
}

python_entry::python_entry() noexcept
{
    cross();
    if ((exit_begun.load() || interpreter_finalizing()) && !is_finalizer()) {
        uncross();
        return;
    }
    gil_.emplace();
}

python_entry::~python_entry()
{
    if (!gil_)
        return;
    gil_.reset();
    uncross();
}

void bind_exit(nb::module_ &m)
{
    // The atexit hook's last step (streampipe._exit): keeps every other thread out of the
    // interpreter, then waits up to timeout_s for those inside (a Python stage of a daemon
    // thread's run) to come out. True when none is left. nanobind's leak report is turned off
    // when threads are left that keep objects alive on purpose: `daemons` (Python's, which
    // finalization stops where they are), or threads inside or parked in the library.
    m.def("exiting", [](double timeout_s, bool daemons) {
        finalizer.store(std::this_thread::get_id());
        exit_begun.store(true);
        bool out = true;
        {
            nb::gil_scoped_release unlocked; // this thread is exempt: the plain release
            auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 0);
            while (crossing.load() != 0) {
                if (std::chrono::steady_clock::now() >= deadline) {
                    out = false; // left inside: finalization may still meet it
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
        if (daemons || inside.load() != 0 || !out)
            nb::set_leak_warnings(false);
        return out;
    }, nb::arg("timeout_s"), nb::arg("daemons"));
}

} // namespace sp_py
