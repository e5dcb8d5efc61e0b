// The C shim over google-benchmark (bench/shim.h): the only C++ in crowdblend.
#include "shim.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

benchmark::State &state(cb_bench_state *st)
{
    return *reinterpret_cast<benchmark::State *>(st);
}

const benchmark::State &state(const cb_bench_state *st)
{
    return *reinterpret_cast<const benchmark::State *>(st);
}

benchmark::internal::Benchmark *bench(cb_bench *b)
{
    return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}

// Forwards everything to the reporter chosen by --benchmark_format and keeps a copy of the
// runs, so the SIMD/ref ratios can be computed from the same numbers that were printed.
class RecordingReporter : public benchmark::BenchmarkReporter {
public:
    explicit RecordingReporter(benchmark::BenchmarkReporter *inner) : inner_(inner) {}

    bool ReportContext(const Context &context) override { return inner_->ReportContext(context); }

    void ReportRuns(const std::vector<Run> &runs) override
    {
        runs_.insert(runs_.end(), runs.begin(), runs.end());
        inner_->ReportRuns(runs);
    }

    void Finalize() override { inner_->Finalize(); }

    const std::vector<Run> &runs() const { return runs_; }

private:
    std::unique_ptr<benchmark::BenchmarkReporter> inner_;
    std::vector<Run> runs_;
};

// Real time per iteration in ns: the median aggregate when there is one, else the single run.
std::map<std::string, double> times_by_name(const std::vector<benchmark::BenchmarkReporter::Run> &runs)
{
    std::map<std::string, double> single, median;
    for (const auto &r : runs) {
        if (r.error_occurred) {
            continue;
        }
        double ns = r.GetAdjustedRealTime();
        switch (r.time_unit) {
        case benchmark::kMicrosecond: ns *= 1e3; break;
        case benchmark::kMillisecond: ns *= 1e6; break;
        case benchmark::kSecond: ns *= 1e9; break;
        default: break;
        }
        std::string name = r.run_name.str();
        if (r.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate) {
            if (r.aggregate_name == "median") {
                median[name] = ns;
            }
        } else if (single.find(name) == single.end()) {
            single[name] = ns;
        }
    }
    for (const auto &kv : median) {
        single[kv.first] = kv.second;
    }
    return single;
}

void print_ratios(const std::vector<benchmark::BenchmarkReporter::Run> &runs)
{
    std::map<std::string, double> t = times_by_name(runs);
    bool header = false;
    for (const auto &kv : t) {
        const std::string &name = kv.first;
        size_t at = name.find("_simd");
        if (at == std::string::npos) {
            continue;
        }
        std::string ref = name.substr(0, at) + "_ref" + name.substr(at + 5);
        auto it = t.find(ref);
        if (it == t.end()) {
            continue;
        }
        if (!header) {
            std::fprintf(stderr, "\nSIMD speed-up over the scalar reference (same run):\n");
            std::fprintf(stderr, "  %-44s %12s %12s %9s\n", "benchmark", "ref ns", "simd ns",
                         "speed-up");
            header = true;
        }
        std::fprintf(stderr, "  %-44s %12.1f %12.1f %8.2fx\n", name.c_str(), it->second,
                     kv.second, it->second / kv.second);
    }
}

} // namespace

extern "C" {

cb_bench *cb_bench_register(const char *name, cb_bench_fn fn, void *user)
{
    auto *b = benchmark::RegisterBenchmark(name, [fn, user](benchmark::State &st) {
        fn(reinterpret_cast<cb_bench_state *>(&st), user);
    });
    return reinterpret_cast<cb_bench *>(b);
}

cb_bench *cb_bench_arg(cb_bench *b, int64_t a0)
{
    bench(b)->Arg(a0);
    return b;
}

cb_bench *cb_bench_args2(cb_bench *b, int64_t a0, int64_t a1)
{
    bench(b)->Args({a0, a1});
    return b;
}

cb_bench *cb_bench_use_real_time(cb_bench *b)
{
    bench(b)->UseRealTime();
    return b;
}

bool cb_bench_keep_running(cb_bench_state *st) { return state(st).KeepRunning(); }
int64_t cb_bench_range(const cb_bench_state *st, int index) { return state(st).range(index); }
int64_t cb_bench_iterations(const cb_bench_state *st) { return state(st).iterations(); }
void cb_bench_pause_timing(cb_bench_state *st) { state(st).PauseTiming(); }
void cb_bench_resume_timing(cb_bench_state *st) { state(st).ResumeTiming(); }
void cb_bench_set_items_processed(cb_bench_state *st, int64_t items) { state(st).SetItemsProcessed(items); }
void cb_bench_set_bytes_processed(cb_bench_state *st, int64_t bytes) { state(st).SetBytesProcessed(bytes); }

void cb_bench_set_counter(cb_bench_state *st, const char *name, double value, unsigned flags)
{
    int f = benchmark::Counter::kDefaults;
    if (flags & CB_BENCH_COUNTER_RATE) {
        f |= benchmark::Counter::kIsRate;
    }
    if (flags & CB_BENCH_COUNTER_AVG_ITERATIONS) {
        f |= benchmark::Counter::kAvgIterations;
    }
    if (flags & CB_BENCH_COUNTER_INVERT) {
        f |= benchmark::Counter::kInvert;
    }
    state(st).counters[name] = benchmark::Counter(value, static_cast<benchmark::Counter::Flags>(f));
}

void cb_bench_skip_with_error(cb_bench_state *st, const char *message) { state(st).SkipWithError(message); }

int cb_bench_main(int argc, char **argv)
{
    // Medians by default: this machine is shared and noisy.
    std::vector<char *> args(argv, argv + argc);
    bool has_reps = false, has_min_time = false;
    for (int i = 1; i < argc; ++i) {
        has_reps = has_reps || std::strncmp(argv[i], "--benchmark_repetitions", 23) == 0;
        has_min_time = has_min_time || std::strncmp(argv[i], "--benchmark_min_time", 20) == 0;
    }
    static char reps[] = "--benchmark_repetitions=5";
    static char aggregates[] = "--benchmark_report_aggregates_only=true";
    static char min_time[] = "--benchmark_min_time=0.1";
    if (!has_reps) {
        args.push_back(reps);
        args.push_back(aggregates);
    }
    if (!has_min_time) {
        args.push_back(min_time);
    }
    args.push_back(nullptr);
    int n = static_cast<int>(args.size()) - 1;
    benchmark::Initialize(&n, args.data());
    if (benchmark::ReportUnrecognizedArguments(n, args.data())) {
        return 2;
    }
    RecordingReporter reporter(benchmark::CreateDefaultDisplayReporter());
    benchmark::RunSpecifiedBenchmarks(&reporter);
    print_ratios(reporter.runs());
    benchmark::Shutdown();
    return 0;
}

} // extern "C"
