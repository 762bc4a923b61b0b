#pragma once
// Metrics for Prometheus: counters, gauges and histograms, with or without
// labels, kept in a Registry that renders them as text, in the Prometheus
// text format 0.0.4 or in OpenMetrics 1.0 (whichever the scraper asks for,
// formatFor). Updating a metric is thread-safe and never allocates once its
// label values have been seen; rendering takes a snapshot.
//
// Names follow Prometheus' conventions: a counter is registered by its base
// name ("accel_limit_enforcements") and its sample is served as
// base_total; durations are in seconds.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace accel::metrics {

enum class Format { kPrometheus, kOpenMetrics };

// The format an HTTP Accept header asks for: OpenMetrics when it names
// application/openmetrics-text, the Prometheus text format otherwise.
Format formatFor(std::string_view accept);
const char* contentType(Format format);

class Counter {
 public:
  void add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class Gauge {
 public:
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class Histogram {
 public:
  // `bounds`: the buckets' upper bounds, ascending; +Inf is added.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  struct Snapshot {
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot snapshot() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative; the last is +Inf
  uint64_t count_ = 0;
  double sum_ = 0;
};

// Bounds for durations of calls that take from a millisecond to a minute.
std::vector<double> secondsBuckets();

// One metric per combination of label values. with() finds or makes it; the
// reference stays valid for the family's life.
template <class T>
class Family {
 public:
  using Make = std::function<std::unique_ptr<T>()>;
  Family(std::vector<std::string> label_names, Make make)
      : names_(std::move(label_names)), make_(std::move(make)) {}
  // `values` has one value per label name (any other count is a
  // programming error: the metric with the values given, padded or cut).
  T& with(std::vector<std::string> values) {
    values.resize(names_.size());
    std::lock_guard lock(mu_);
    auto& slot = members_[values];
    if (!slot) slot = make_();
    return *slot;
  }
  const std::vector<std::string>& labelNames() const { return names_; }
  // Calls fn(values, metric) for each member, in the order of the values.
  template <class Fn>
  void each(Fn&& fn) const {
    std::lock_guard lock(mu_);
    for (const auto& [values, metric] : members_) fn(values, *metric);
  }

 private:
  std::vector<std::string> names_;
  Make make_;
  mutable std::mutex mu_;
  std::map<std::vector<std::string>, std::unique_ptr<T>> members_;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;
  // Each name once; the returned references live as long as the registry.
  Counter& counter(const std::string& name, const std::string& help);
  Family<Counter>& counters(const std::string& name, const std::string& help,
                            std::vector<std::string> labels);
  Gauge& gauge(const std::string& name, const std::string& help);
  Family<Gauge>& gauges(const std::string& name, const std::string& help,
                        std::vector<std::string> labels);
  // A gauge read when the metrics are rendered, on the scraper's thread:
  // `read` must be thread-safe and quick.
  void gaugeFn(const std::string& name, const std::string& help, std::function<double()> read);
  // Labelled gauges read when the metrics are rendered: `read` returns the
  // series that exist now (label values in the order of `labels`, and the
  // value), so a series is gone as soon as what it measures is. Thread-safe
  // and quick, as gaugeFn's.
  using Series = std::vector<std::pair<std::vector<std::string>, double>>;
  void gaugesFn(const std::string& name, const std::string& help, std::vector<std::string> labels,
                std::function<Series()> read);
  Family<Histogram>& histograms(const std::string& name, const std::string& help,
                                std::vector<std::string> labels, std::vector<double> bounds);

  std::string render(Format format) const;

 private:
  struct Entry;
  Entry& add(const std::string& name, const std::string& help, const char* type);
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Entry>> entries_;  // in the order registered
};

// Text helpers, shared with renderers of their own (the aggregator's).
// A label value with \, " and newline escaped.
std::string escapeLabel(std::string_view value);
// A sample value: integers without a fraction, +Inf, -Inf, NaN.
std::string formatValue(double v);

}  // namespace accel::metrics
