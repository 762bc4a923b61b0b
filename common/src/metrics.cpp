#include "accel/common/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <variant>

namespace accel::metrics {

Format formatFor(std::string_view accept) {
  return accept.find("application/openmetrics-text") != std::string_view::npos
             ? Format::kOpenMetrics
             : Format::kPrometheus;
}

const char* contentType(Format format) {
  return format == Format::kOpenMetrics
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {
  std::sort(bounds_.begin(), bounds_.end());
}

void Histogram::observe(double v) {
  size_t i = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  std::lock_guard lock(mu_);
  ++counts_[i];
  ++count_;
  sum_ += v;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  std::lock_guard lock(mu_);
  uint64_t running = 0;
  for (uint64_t c : counts_) s.cumulative.push_back(running += c);
  s.count = count_;
  s.sum = sum_;
  return s;
}

std::vector<double> secondsBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

struct SeriesFn {
  std::vector<std::string> labels;
  std::function<Registry::Series()> read;
};

struct Registry::Entry {
  std::string name, help;
  const char* type;
  std::variant<std::monostate, std::unique_ptr<Family<Counter>>, std::unique_ptr<Family<Gauge>>,
               std::function<double()>, std::unique_ptr<Family<Histogram>>, SeriesFn>
      metric;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Entry& Registry::add(const std::string& name, const std::string& help, const char* type) {
  std::lock_guard lock(mu_);
  entries_.push_back(std::make_unique<Entry>(Entry{name, help, type, {}}));
  return *entries_.back();
}

Family<Counter>& Registry::counters(const std::string& name, const std::string& help,
                                    std::vector<std::string> labels) {
  auto family = std::make_unique<Family<Counter>>(std::move(labels),
                                                  [] { return std::make_unique<Counter>(); });
  auto& ref = *family;
  add(name, help, "counter").metric = std::move(family);
  return ref;
}

Counter& Registry::counter(const std::string& name, const std::string& help) {
  return counters(name, help, {}).with({});
}

Family<Gauge>& Registry::gauges(const std::string& name, const std::string& help,
                                std::vector<std::string> labels) {
  auto family =
      std::make_unique<Family<Gauge>>(std::move(labels), [] { return std::make_unique<Gauge>(); });
  auto& ref = *family;
  add(name, help, "gauge").metric = std::move(family);
  return ref;
}

Gauge& Registry::gauge(const std::string& name, const std::string& help) {
  return gauges(name, help, {}).with({});
}

void Registry::gaugeFn(const std::string& name, const std::string& help,
                       std::function<double()> read) {
  add(name, help, "gauge").metric = std::move(read);
}

void Registry::gaugesFn(const std::string& name, const std::string& help,
                        std::vector<std::string> labels, std::function<Series()> read) {
  add(name, help, "gauge").metric = SeriesFn{std::move(labels), std::move(read)};
}

Family<Histogram>& Registry::histograms(const std::string& name, const std::string& help,
                                        std::vector<std::string> labels,
                                        std::vector<double> bounds) {
  auto family = std::make_unique<Family<Histogram>>(
      std::move(labels),
      [bounds = std::move(bounds)] { return std::make_unique<Histogram>(bounds); });
  auto& ref = *family;
  add(name, help, "histogram").metric = std::move(family);
  return ref;
}

std::string escapeLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string formatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {

std::string escapeHelp(std::string_view help) {
  std::string out;
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// {a="x",b="y"} for the names and values, plus one more pair if `extra_name`
// is set (a histogram's le); empty when there is nothing to show.
std::string labelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     const char* extra_name = nullptr, const std::string& extra_value = "") {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + escapeLabel(values[i]) + "\"";
  if (extra_name)
    out += (out.empty() ? "" : ",") + std::string(extra_name) + "=\"" + extra_value + "\"";
  return out.empty() ? out : "{" + out + "}";
}

void sample(std::string& out, const std::string& name, const std::string& labels,
            const std::string& value) {
  out += name;
  out += labels;
  out += ' ';
  out += value;
  out += '\n';
}

}  // namespace

std::string Registry::render(Format format) const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& e : entries_) {
    const bool counter = std::string_view(e->type) == "counter";
    // Prometheus' text format names a counter's family with its _total;
    // OpenMetrics names it without and puts _total on the sample only.
    std::string family = counter && format == Format::kPrometheus ? e->name + "_total" : e->name;
    out += "# HELP " + family + " " + escapeHelp(e->help) + "\n# TYPE " + family + " " + e->type +
           "\n";
    if (auto* f = std::get_if<std::unique_ptr<Family<Counter>>>(&e->metric)) {
      (*f)->each([&](const auto& values, const Counter& c) {
        sample(out, e->name + "_total", labelSet((*f)->labelNames(), values),
               std::to_string(c.value()));
      });
    } else if (auto* g = std::get_if<std::unique_ptr<Family<Gauge>>>(&e->metric)) {
      (*g)->each([&](const auto& values, const Gauge& gauge) {
        sample(out, e->name, labelSet((*g)->labelNames(), values), formatValue(gauge.value()));
      });
    } else if (auto* read = std::get_if<std::function<double()>>(&e->metric)) {
      sample(out, e->name, "", formatValue((*read)()));
    } else if (auto* series = std::get_if<SeriesFn>(&e->metric)) {
      for (auto& [values, value] : series->read()) {
        values.resize(series->labels.size());
        sample(out, e->name, labelSet(series->labels, values), formatValue(value));
      }
    } else if (auto* h = std::get_if<std::unique_ptr<Family<Histogram>>>(&e->metric)) {
      (*h)->each([&](const auto& values, const Histogram& hist) {
        const auto& names = (*h)->labelNames();
        auto snap = hist.snapshot();
        for (size_t i = 0; i < hist.bounds().size(); ++i)
          sample(out, e->name + "_bucket",
                 labelSet(names, values, "le", formatValue(hist.bounds()[i])),
                 std::to_string(snap.cumulative[i]));
        sample(out, e->name + "_bucket", labelSet(names, values, "le", "+Inf"),
               std::to_string(snap.count));
        sample(out, e->name + "_sum", labelSet(names, values), formatValue(snap.sum));
        sample(out, e->name + "_count", labelSet(names, values), std::to_string(snap.count));
      });
    }
  }
  if (format == Format::kOpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace accel::metrics
